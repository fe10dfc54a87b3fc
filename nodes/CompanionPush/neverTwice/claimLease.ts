import { MINUTE_MS } from '../common/time';
import { timings } from '../common/timings';
import { DEFAULT_TIMEOUT_MS } from '../transport/http';
import { heldUntilOf } from './keysRow';
import { pauseUnlessStopped } from '../common/pause';
import type { IdempotencyKey, IdempotencyKeys, StoreClaim } from './idempotencyKeys';

/** Renewals within one lease. */
const RENEWALS_PER_LEASE = 4;

/**
 * The lease of a claim this run holds, so that another run can tell from n8n's store whether it may
 * still be sending (docs/reliability.md, "The keys' protocol"):
 * - while the event is being sent, the holder marks the minute it lives in, every quarter of
 *   `claimLeaseMs` (a write only when the minute changed);
 * - it starts a request only when the request, timed out, still ends inside its lease (the end of its
 *   last marked minute plus `claimLeaseMs`): what another run reads as "held until" bounds every
 *   request it has out, and so the time a send of it can have been registered at;
 * - a mark that lands after its lease ran out loses the lease (another run may have taken the claim
 *   over meanwhile): from then on it sends nothing.
 * Unlike the store lock's lease (../store/lock.ts), held for milliseconds in the lock's own row, this one
 * lasts as long as a send does (Retry-After waits included) and lives in the keys' row, in minutes,
 * which is all a claim's time is kept to.
 */
export class ClaimLease {
	private markedMinute: number;
	/** The minutes marked in the store that this run knows of: the claim's own one stays. */
	private readonly markedMinutes: number[];
	private lost?: string;
	private renewal?: Promise<void>;
	private readonly stopped = new AbortController();

	constructor(
		private readonly keys: IdempotencyKeys,
		private readonly idempotency: IdempotencyKey,
		private readonly layout: string[],
		claim: StoreClaim,
	) {
		this.markedMinutes = [...claim.markedMinutes];
		this.markedMinute = Math.max(...this.markedMinutes);
		void this.renewWhileHeld();
	}

	/** Until when this run may have a request out. */
	private get until(): number {
		return heldUntilOf(this.markedMinute, false);
	}

	/** False once the lease was lost: another run may hold the claim now, so this one must leave the
	 * key as it is (no release, no end), whatever it does not know it sent. */
	get kept(): boolean {
		return this.lost === undefined;
	}

	/** The minutes to take out when the claim is confirmed or released. */
	get minutes(): number[] {
		return [...this.markedMinutes];
	}

	private async renewWhileHeld(): Promise<void> {
		while (!this.lost) {
			const pause = timings().claimLeaseMs / RENEWALS_PER_LEASE;
			if (await pauseUnlessStopped(pause, this.stopped.signal)) return;
			await this.renew();
		}
	}

	/** Marks the current minute (one renewal at a time). */
	private async renew(): Promise<void> {
		this.renewal ??= this.renewOnce().finally(() => (this.renewal = undefined));
		await this.renewal;
	}

	private async renewOnce(): Promise<void> {
		if (this.lost || Math.floor(Date.now() / MINUTE_MS) === this.markedMinute) return;
		const leaseEnd = this.until;
		// The claim's own minute (the earliest) stays: it is where a lookup's window starts.
		const previous =
			this.markedMinute === Math.min(...this.markedMinutes) ? undefined : this.markedMinute;
		const kept = this.markedMinutes.filter((minute) => minute !== previous);
		const renewed = await this.keys.renew(this.idempotency, this.layout, previous, kept);
		if (!renewed.ok) return; // the lease may still run: the next request asks again
		if (Date.now() > leaseEnd) {
			this.lost = 'its claim was renewed only after its lease had run out';
			return;
		}
		this.markedMinute = renewed.value;
		this.markedMinutes.splice(0, this.markedMinutes.length, ...kept);
		if (!kept.includes(renewed.value)) this.markedMinutes.push(renewed.value);
	}

	/**
	 * Why a request timed out after `timeoutMs` could outlast the lease, after one renewal: then it
	 * must not start. Undefined when it may.
	 */
	async whyNotNow(timeoutMs = DEFAULT_TIMEOUT_MS): Promise<string | undefined> {
		if (!this.lost && this.until - Date.now() < timeoutMs) await this.renew();
		if (this.lost) return this.lost;
		if (this.until - Date.now() < timeoutMs)
			return "its claim could not be renewed in n8n's store in time";
		return undefined;
	}

	/** Stops renewing (the event ended). */
	async end(): Promise<void> {
		this.stopped.abort();
		await this.renewal;
	}
}
