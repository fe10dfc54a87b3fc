import { sleep } from 'n8n-workflow';

/** Above this, a pace that grew back after 429s has no limit of its own any more. */
const UNLIMITED_FROM = 1000;

/**
 * How many requests of one credential may be in flight, adapted to the service, whose rate limits
 * the spec does not show. No limit of its own until the service answers 429; then it halves what
 * was in flight, and every request of the credential waits out the `Retry-After`; after that many
 * answers without a 429 it allows one more (additive increase, multiplicative decrease). Reads and
 * sends share it. The callers' own bound (Max Parallel Requests) applies on top.
 * Process memory (processState.paces): with several processes each adapts on its own.
 */
export class Pace {
	limit = Infinity;
	inFlight = 0;
	private resumeAt = 0;
	private successes = 0;
	private readonly waiting: Array<() => void> = [];

	async acquire(): Promise<void> {
		for (;;) {
			const pause = this.resumeAt - Date.now();
			if (pause > 0) await sleep(pause);
			else if (this.inFlight >= this.limit)
				await new Promise<void>((resolve) => this.waiting.push(resolve));
			else {
				this.inFlight++;
				return;
			}
		}
	}

	release(): void {
		this.inFlight--;
		this.waiting.shift()?.();
	}

	/** A 429: fewer in flight, and nobody sends before `retryAfterMs` has passed. */
	rateLimited(retryAfterMs: number): void {
		this.limit = Math.max(1, Math.floor(Math.min(this.limit, this.inFlight + 1) / 2));
		this.successes = 0;
		this.resumeAt = Math.max(this.resumeAt, Date.now() + retryAfterMs);
	}

	/** An answer that was not a 429: after `limit` of them, one more may be in flight. */
	answered(): void {
		if (this.limit === Infinity || ++this.successes < this.limit) return;
		this.successes = 0;
		this.limit = this.limit + 1 >= UNLIMITED_FROM ? Infinity : this.limit + 1;
		this.waiting.shift()?.();
	}
}
