import { deepCopy, sleep } from 'n8n-workflow';

/*
 * The package's waits and how it waits them out (waitFor). Read-only in production; tests shorten
 * them (useTimings), run them on their own clock (useWait) and restore both (resetTimings). Process
 * memory: nothing here is shared between processes.
 */

/** The retry policy of the transport (see transport/retry.ts). */
export interface RetryPolicy {
	/** Tries of one call, the first included (429s aside). */
	maxAttempts: number;
	/** 429s a request may meet beyond its tries: each slows the pace and waits its Retry-After. */
	maxRateLimitedTries: number;
	baseDelayMs: number;
	maxDelayMs: number;
	/** A longer Retry-After is not waited for: the error goes to the workflow. */
	maxRetryAfterMs: number;
}

export interface Timings {
	retry: RetryPolicy;
	/** After a 401, how long to give another process's renewal to be saved before renewing here
	 * (jittered, so processes refused at the same moment don't renew in step). */
	foreignRenewalWaitMs: { min: number; max: number };
	/** The lease of a claim of an Idempotency Key (neverTwice/claimLease.ts): no request of its
	 * holder outlasts its last marked minute plus this. Longer than a request's timeout. */
	claimLeaseMs: number;
	/** How long a copy of an event waits for the run that holds its key; beyond, it sends nothing
	 * and says "unknown". Only a wait: the decision comes from the lease. */
	heldKeyWaitMs: number;
	/** After a lost answer, the least time before the send may count as never made (an API may
	 * register it a moment after its 5xx); the lookup reads the list five times per this. */
	lookupSettleMs: number;
	/** How long after a lost answer the lookup reads the list for the send or the evidence of its
	 * absence (a lagging list shows both late); neither by then: "unknown". Only a wait: the
	 * decision comes from the list. */
	lookupEvidenceWaitMs: number;
	/** The lease of the store's lock: renewed several times within it, so a lock unrenewed this long
	 * (plus up to storeLockBreakJitterMs) was left by a process that died holding it. */
	storeLockBudgetMs: number;
	/** Spread of the moment waiting processes take such a lock over, so that two rarely do at once. */
	storeLockBreakJitterMs: number;
	/** The deadline of one request, its answer's last byte included (transport/http.ts). */
	requestTimeoutMs: number;
	/** The deadline of one poll of the trigger, all its requests and waits included (trigger/poll.ts). */
	pollDeadlineMs: number;
}

export const DEFAULT_TIMINGS: Timings = {
	retry: {
		maxAttempts: 4,
		maxRateLimitedTries: 20,
		baseDelayMs: 400,
		maxDelayMs: 8_000,
		maxRetryAfterMs: 60_000,
	},
	foreignRenewalWaitMs: { min: 50, max: 150 },
	claimLeaseMs: 60_000,
	heldKeyWaitMs: 150_000,
	lookupSettleMs: 10_000,
	lookupEvidenceWaitMs: 60_000,
	storeLockBudgetMs: 20_000,
	storeLockBreakJitterMs: 5_000,
	requestTimeoutMs: 30_000,
	pollDeadlineMs: 5 * 60_000,
};

let current: Timings = deepCopy(DEFAULT_TIMINGS);

/** How the package waits out a protocol time: `ms`, or less when `stopped` is aborted meanwhile
 * (then it throws). One hook, so tests can run these waits on a clock they move (useWait). */
export type Wait = (ms: number, stopped?: AbortSignal) => Promise<void>;

/** The longest single sleep of a stoppable wait: n8n 1.x's `sleep` takes no abort signal, so a wait
 * stopped there still ends within this (no timer of a lease outlives it for longer). */
export const STOPPABLE_STEP_MS = 250;

/** n8n's sleep. A stoppable wait goes in steps and ends at its time on the clock (Date), so it also
 * ends when that clock jumps (a host that slept). */
async function sleepUnlessStopped(ms: number, stopped?: AbortSignal): Promise<void> {
	if (!stopped) return await sleep(ms);
	const endAt = Date.now() + ms;
	for (let left = ms; left > 0; left = endAt - Date.now()) {
		stopped.throwIfAborted();
		await sleep(Math.min(STOPPABLE_STEP_MS, left), stopped);
	}
	stopped.throwIfAborted();
}

let currentWait: Wait = sleepUnlessStopped;

/** Waits `ms` the package's way (see Wait). */
export async function waitFor(ms: number, stopped?: AbortSignal): Promise<void> {
	await currentWait(ms, stopped);
}

/** Makes the package's waits go through `wait` (tests: a clock they move), until resetTimings. */
export function useWait(wait: Wait): void {
	currentWait = wait;
}

export function timings(): Timings {
	return current;
}

/** Shortens waits for a test run (until the next resetTimings). */
export function useTimings(
	changes: { retry?: Partial<RetryPolicy> } & Partial<Omit<Timings, 'retry'>>,
): void {
	const { retry, ...others } = changes;
	current = { ...current, ...others, retry: { ...current.retry, ...retry } };
}

/** Restores the default timings and waits (tests, between cases). */
export function resetTimings(): void {
	current = deepCopy(DEFAULT_TIMINGS);
	currentWait = sleepUnlessStopped;
}
