import type { ICredentialDataDecryptedObject, INode } from 'n8n-workflow';

import type { RenewalFailure } from './transport/errors';
import type { Pace } from './transport/pace';

/*
 * Everything the package keeps in process memory, in one place. n8n runs one copy of this module
 * per process (the main process, each queue-mode worker), so nothing here is shared between
 * processes, and a restart empties it. What must survive a restart or be shared between
 * processes (the records of what earlier tries sent, Idempotency Keys, the access token) lives in
 * n8n's execution data and database instead.
 *
 * | piece | what it holds | why it is safe with several processes |
 * |---|---|---|
 * | renewalsInFlight | token renewals under way, per credential: items and polls running at the same time share one refresh | each process may renew once per token life; the renewed token is saved in n8n's database, and a 401 first takes a token another process saved since, then renews (at most twice per call, for an API whose refresh revokes the previous token) |
 * | knownSendIds | ids of sends this process made or recovered lately, per credential (bounded, oldest forgotten first): a lookup after a lost answer never takes one of them for its own | only sends of this process can be in flight in its runs, so other processes need not see them |
 * | paces | how many requests of a credential may be in flight after 429s | each process adapts to the service on its own; N processes start at N x the node's bound and each halves at its first 429 |
 * | identicalSends, storeQueues | queues that keep identical sends, and claims of Idempotency Keys, one at a time in this process | they order this process only; across processes the Idempotency Keys' protocol decides |
 * | polledContexts | the poll contexts n8n has polled with, to tell the poll n8n runs while activating a trigger | triggers poll on the main process only |
 * | timings | retry waits and other waits (the defaults below); tests shorten them with useTimings | read-only in production |
 *
 * Tests start from a clean state with resetProcessState().
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
	/** After a 401, how long to give a renewal under way in another process to be saved before
	 * renewing here (jittered, so processes refused at the same moment don't renew in step). A saved
	 * renewal is a refresh plus one database write. */
	foreignRenewalWaitMs: { min: number; max: number };
	/** How long a claim of an Idempotency Key found unconfirmed is given to be confirmed by the run
	 * that may still be sending it (a send takes well under a second). */
	unconfirmedClaimSettleMs: number;
}

export const DEFAULT_TIMINGS: Timings = {
	retry: { maxAttempts: 4, maxRateLimitedTries: 20, baseDelayMs: 400, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 },
	foreignRenewalWaitMs: { min: 50, max: 150 },
	unconfirmedClaimSettleMs: 5_000,
};

/** A forced token renewal: the renewed credential data, or why it failed (shared too: a refused
 * secret is asked once). */
export interface RenewalResult {
	renewed?: ICredentialDataDecryptedObject;
	failed?: RenewalFailure;
}

interface ProcessState {
	renewalsInFlight: Map<string, Promise<RenewalResult>>;
	knownSendIds: Map<string, Set<string>>;
	paces: Map<string, Pace>;
	identicalSends: Map<string, Promise<unknown>>;
	storeQueues: Map<string, Promise<unknown>>;
	polledContexts: WeakSet<object>;
	timings: Timings;
}

function freshState(): ProcessState {
	return {
		renewalsInFlight: new Map(),
		knownSendIds: new Map(),
		paces: new Map(),
		identicalSends: new Map(),
		storeQueues: new Map(),
		polledContexts: new WeakSet(),
		timings: JSON.parse(JSON.stringify(DEFAULT_TIMINGS)) as Timings,
	};
}

/** The one instance of this process. Read its parts; replace them only through the functions below. */
export const processState: ProcessState = freshState();

/** Empties every piece and restores the default timings (tests, between cases). */
export function resetProcessState(): void {
	Object.assign(processState, freshState());
}

/** Shortens waits for a test run (until the next resetProcessState). */
export function useTimings(changes: { retry?: Partial<RetryPolicy> } & Partial<Omit<Timings, 'retry'>>): void {
	const { retry, ...others } = changes;
	processState.timings = { ...processState.timings, ...others, retry: { ...processState.timings.retry, ...retry } };
}

export function timings(): Timings {
	return processState.timings;
}

export const CREDENTIAL_TYPE = 'companionPushApi';

/** The credential a node runs with, as the key of the per-credential pieces above. */
export function credentialKey(context: { getNode(): INode }): string {
	const reference = context.getNode().credentials?.[CREDENTIAL_TYPE];
	return reference?.id ?? reference?.name ?? 'unsaved';
}
