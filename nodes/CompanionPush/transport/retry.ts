import type { NodeApiError } from 'n8n-workflow';

import { timings, waitFor } from '../common/timings';
import type { RetryPolicy } from '../common/timings';
import { retryAfterMs, serverTimeMs } from './answers';
import type { Answer, FinalAnswer } from './answers';
import { answerError, renewalError } from './errors';
import { credentialKey, workDeadlineWithin } from './http';
import type { ApiCall, CompanionPushContext } from './http';
import { exchange } from './tokenRenewal';

/**
 * The pacing of a call's tries. The retry policy (its numbers: DEFAULT_TIMINGS.retry in
 * common/timings.ts):
 * - a caller retries an answer only when it says it may (reads: 5xx, no answer, malformed JSON;
 *   sends: see send.ts), at most `maxAttempts` tries;
 * - a 429 slows down every request of the credential (Pace, below) and is retried after its
 *   Retry-After without spending a try, up to `maxRateLimitedTries` times;
 * - waits grow exponentially from `baseDelayMs`, capped at `maxDelayMs`, with "equal jitter"
 *   (half fixed, half random) so parallel workflows do not retry in step;
 * - a `Retry-After` header (seconds or an HTTP date) replaces the computed wait, up to
 *   `maxRetryAfterMs`; a longer one is not waited for: the error goes to the workflow.
 */

export function isRetryableStatus(status: number): boolean {
	return status === 429 || status >= 500;
}

/** Wait before retry number `retry` (1 for the first retry). */
export function backoffDelayMs(
	retry: number,
	policy: RetryPolicy = timings().retry,
	random: () => number = Math.random,
): number {
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
	return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** The Retry-After of an answer, in milliseconds (see retryAfterMs). */
function askedWaitMs(answer: FinalAnswer | undefined): number | undefined {
	if (answer?.kind !== 'answer') return undefined;
	return retryAfterMs(answer.headers['retry-after'], serverTimeMs(answer.headers), Date.now());
}

/** The wait before the next try, honouring the wait the API asked for; undefined means "do not retry". */
export function nextDelayMs(
	retry: number,
	askedMs: number | undefined,
	policy: RetryPolicy = timings().retry,
): number | undefined {
	if (retry >= policy.maxAttempts) return undefined;
	if (askedMs === undefined) return backoffDelayMs(retry, policy);
	return askedMs > policy.maxRetryAfterMs ? undefined : askedMs;
}

/**
 * The tries of one call, driven by the caller, who judges each answer:
 *
 *     const tries = new Tries(context, call);
 *     for (;;) {
 *       const answer = await tries.send();
 *       if (<answer is the result>) return ...;
 *       if (!(await tries.waitToRetry(answer))) throw tries.failure(answer);
 *     }
 *
 * `send` takes the credential's pace, exchanges (token renewal included), and absorbs what sent
 * nothing: a 429 is waited out without spending a try; a token that could not be renewed is waited
 * for like a 429 when its endpoint was unreachable, and is an error at once when it was refused.
 */
export class Tries {
	/** Tries spent (429s aside). */
	private attempt = 1;
	private rateLimited = 0;
	private readonly policy = timings().retry;

	constructor(
		private readonly context: CompanionPushContext,
		private readonly call: ApiCall,
	) {}

	/** How many times the request went out so far, the last one included. */
	get requests(): number {
		return this.attempt + this.rateLimited;
	}

	async send(): Promise<FinalAnswer> {
		const pace = paceOf(this.context);
		for (;;) {
			const turn = await pace.acquire();
			let answer: Answer;
			try {
				answer = await exchange(this.context, { ...this.call, wentOut: () => pace.wentOut(turn) });
			} finally {
				pace.release();
			}
			if (answer.kind === 'renewalFailed') {
				const wait = answer.failure.retryable
					? nextDelayMs(this.attempt, undefined, this.policy)
					: undefined;
				if (wait === undefined)
					throw renewalError(
						this.context.getNode(),
						this.call.action,
						answer.failure,
						this.call.itemIndex,
					);
				await waitFor(wait);
				this.attempt++;
				continue;
			}
			if (answer.kind === 'answer' && answer.status === 429) {
				// Nothing was done: the pace slows down for every request of the credential, and this one
				// waits its turn without spending a try, as long as the service asks for a sane wait.
				const asked = askedWaitMs(answer) ?? backoffDelayMs(this.rateLimited + 1, this.policy);
				if (
					asked <= this.policy.maxRetryAfterMs &&
					++this.rateLimited <= this.policy.maxRateLimitedTries
				) {
					pace.rateLimited(turn, asked);
					continue;
				}
			} else if (answer.kind === 'answer') pace.answered(turn, answer.status);
			return answer;
		}
	}

	/** Waits before the next try when the policy allows one; false when no try is left. */
	async waitToRetry(answer: FinalAnswer): Promise<boolean> {
		const delay = nextDelayMs(this.attempt, askedWaitMs(answer), this.policy);
		// A try after the deadline of the whole work (a poll) could not be made.
		if (delay === undefined || workDeadlineWithin(this.context, delay)) return false;
		await waitFor(delay);
		this.attempt++;
		return true;
	}

	/** The error for the last answer: no answer, an unreadable success body, or a status. */
	failure(answer: FinalAnswer, noAnswerNote?: string): NodeApiError {
		return answerError(this.context.getNode(), this.call, answer, noAnswerNote);
	}
}

/** Above this, a pace that grew back after 429s has no limit of its own any more. */
const UNLIMITED_FROM = 1000;

/** A request's place in its credential's pace: given by `acquire`, handed back with its answer. */
export interface Turn {
	/** Which request of the credential it was (1 for the first): places it before or after a 429. */
	readonly number: number;
	/** When its request went out (this process's clock): when it took its turn, until `wentOut`. */
	startedAt: number;
}

/**
 * How many requests of one credential may be in flight, adapted to the service, whose rate limits
 * the spec does not show. No limit of its own until the service answers 429. A 429 starts an
 * episode: the limit becomes what the service was seen to admit (the first time) or halves (after
 * that), and every request of the credential waits out the `Retry-After`. The 429s of requests that
 * went out before the episode started are the same news (the service had not yet seen us slow
 * down), so they neither halve again nor move the pause (TCP, likewise, decreases once per round
 * trip). What the service was seen to admit is how many of our requests it held at once, on
 * average (Little's law): the round trips of its admitted answers, summed, over the time since the
 * current burst's first request left (or since the last pause). That is also what keeping up the
 * rate it admitted takes. A count of the admitted answers would not do: requests that left one
 * after another were admitted one after another. The limit never falls below it. After that
 * many answers without a 429 one more may be in flight (additive increase). Reads and sends share
 * it. The callers' own bound (Max Parallel Requests) applies on top.
 * Process memory (`paces`, per credential): with several processes each adapts on its own; N
 * processes start at N x the node's bound and each keeps to what the service admitted at its first 429.
 */
export class Pace {
	limit = Infinity;
	inFlight = 0;
	private resumeAt = 0;
	private successes = 0;
	private readonly waiting: Array<() => void> = [];
	/** Turns given so far, and how many had been given when the current episode started (and when). */
	private turns = 0;
	private turnsBeforeEpisode = 0;
	private episodeStartedAt = 0;
	/** The evidence: the answers admitted of requests that went out since `admittedSince`. */
	private admittedSince = 0;
	/** A burst has started (nothing was in flight) and its first request has not gone out yet. */
	private burstStarting = false;
	/** The round trips of those answers, summed (as this process measured them: the time the service
	 * held them, plus this process's own delays). */
	private admittedMs = 0;

	async acquire(): Promise<Turn> {
		for (;;) {
			const pause = this.resumeAt - Date.now();
			if (pause > 0) await waitFor(pause);
			else if (this.inFlight >= this.limit)
				await new Promise<void>((resolve) => this.waiting.push(resolve));
			else {
				const startedAt = Date.now();
				// Without a limit, the evidence is that of the current burst: it starts when nothing
				// was in flight (a process may have sent for days before its first 429).
				if (this.inFlight === 0 && this.limit === Infinity) {
					this.admittedSince = startedAt;
					this.admittedMs = 0;
					this.burstStarting = true;
				}
				this.inFlight++;
				return { number: ++this.turns, startedAt };
			}
		}
	}

	/**
	 * The turn's request leaves now. A turn is taken before the token is there and before the
	 * process lets the request be built (http.ts, letIoThrough): the burst's evidence starts when its
	 * first request leaves, and a round trip when its own request does. Called again for a request
	 * made again within the turn (after a 401).
	 */
	wentOut(turn: Turn): void {
		turn.startedAt = Date.now();
		if (this.burstStarting) {
			this.burstStarting = false;
			this.admittedSince = turn.startedAt;
		}
	}

	release(): void {
		this.inFlight--;
		this.waiting.shift()?.();
	}

	/** A 429 for `turn`: fewer in flight, and nobody sends before `retryAfterMs` has passed. */
	rateLimited(turn: Turn, retryAfterMs: number): void {
		if (turn.number <= this.turnsBeforeEpisode) {
			// Part of the current episode: its wait counts from when the episode started, not from its
			// own later answer. Safe: a pause too short costs one more 429 (nothing done), never a send.
			this.resumeAt = Math.max(this.resumeAt, this.episodeStartedAt + retryAfterMs);
			return;
		}
		const now = Date.now();
		// Without a limit yet, what was in flight is whatever the callers started, possibly many times
		// what the service takes: the limit becomes what it was seen to admit. With one, it halves.
		const decreased =
			this.limit === Infinity ? 0 : Math.floor(Math.min(this.limit, this.inFlight + 1) / 2);
		this.limit = Math.min(this.limit, Math.max(1, decreased, this.admittedInFlight(now)));
		this.successes = 0;
		this.turnsBeforeEpisode = this.turns;
		this.episodeStartedAt = now;
		this.resumeAt = Math.max(this.resumeAt, now + retryAfterMs);
		// The next evidence: what the service admits once the pause is over.
		this.admittedSince = this.resumeAt;
		this.admittedMs = 0;
		this.burstStarting = false;
	}

	/** An answer that was not a 429: after `limit` of them, one more may be in flight. */
	answered(turn: Turn, status: number): void {
		const now = Date.now();
		// A 5xx may come from a gateway that never reached the service: no evidence of admission.
		if (status < 500) {
			if (turn.startedAt >= this.admittedSince) this.admittedMs += now - turn.startedAt;
		}
		if (this.limit === Infinity || ++this.successes < this.limit) return;
		this.successes = 0;
		this.limit = this.limit + 1 >= UNLIMITED_FROM ? Infinity : this.limit + 1;
		this.waiting.shift()?.();
	}

	/**
	 * How many in flight the evidence shows the service admits: the admitted answers' round trips
	 * over the time since `admittedSince`, their average number in flight (rounded down).
	 */
	private admittedInFlight(now: number): number {
		const windowMs = now - this.admittedSince;
		return windowMs > 0 ? Math.floor(this.admittedMs / windowMs) : 0;
	}
}

let paces = new Map<string, Pace>();

/** The pace of a credential's requests in this process. */
export function paceOf(context: CompanionPushContext): Pace {
	const key = credentialKey(context);
	let pace = paces.get(key);
	if (!pace) paces.set(key, (pace = new Pace()));
	return pace;
}

/** Tests: every credential starts again without a limit. */
export function resetPaces(): void {
	paces = new Map();
}
