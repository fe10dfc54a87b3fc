import { deepCopy } from 'n8n-workflow';
import type { ICredentialDataDecryptedObject, INode } from 'n8n-workflow';

import { resetStoreState } from './store/state';
import type { Pace } from './transport/pace';
import type { SeenTexts } from './transport/safeSend/match';
import type { SendListPage } from './transport/schemas';

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
 * | sendOwners | ids of sends this process made or recovered lately, per credential, with the send each stands for (its owner: a batch of an execution, or an Idempotency Key); bounded, oldest forgotten first: a lookup after a lost answer never takes a send of another owner for its own | a send of another process is told apart by its content and creation time (transport/safeSend/lookup.ts); where it cannot be, the outcome is unknown |
 * | postsInFlight | the sends of this process whose answer has not come yet, with their content: a lookup waits for those that look like its own before it decides, so a sibling's send is never taken for its own before the sibling learns its id | only this process's sends have answers still to come here |
 * | unresolvedSends | the sends of this process whose outcome stayed unknown lately, with their content (bounded, oldest forgotten first): a send exactly like one of them that another send's lookup finds may be that one, so it proves nothing (the outcome is unknown) | a send of another process is told apart by its content and creation time only; where it cannot be, the outcome is unknown |
 * | sentTexts | the title and body of the sends this process made or recovered lately (bounded, oldest forgotten first), by id: what the list shows of them tells how this API stores texts | only this process's own sends are compared with what it sent |
 * | listings | when each send this process made lately went out, when a reading of the list first showed it, and how far ahead of n8n's clock its creation time puts the API's clock at most (bounded, oldest forgotten first), per credential: what a lookup after a lost answer takes as proof that the list is current past that answer (transport/safeSend/lookup.ts): a send of this process made after it and since listed, or any send listed whose creation time is later than the answer's loss on the API's clock; and how late this API lists sends (quoted, never decisive) | each process bounds the API's clock and the list's currency from its own sends only; another process's sends count as sends listed, placed by their creation time; without a bound of its own a lookup waits for its own evidence, then ends "unknown" |
 * | textEvidence | what the list showed of those texts, per credential: the lengths this API cut them to, and the longest it kept whole; a shorter text in the list counts as ours cut only at a length it was seen to cut ours to (transport/safeSend/match.ts) | each process learns from its own sends; one that has seen none yet reports a shorter text as "unknown" |
 * | keysInFlight | Idempotency Keys this process sent under lately (bounded, oldest forgotten first), with the outcome or its promise: a copy of the key waits for that send's outcome instead of guessing, and names its send | across processes the keys' claim protocol decides (neverTwice/idempotencyKeys.ts) |
 * | paces | how many requests of a credential may be in flight after 429s, and what the service was seen to admit | each process adapts to the service on its own; N processes start at N x the node's bound and each keeps to what the service admitted at its first 429 |
 * | polledContexts | the poll contexts n8n has polled with, to tell the poll n8n runs while activating a trigger | triggers poll on the main process only |
 * | listGapsReported | per poll context, the floor of the trigger's last reading of the list that could not reach it and was reported as an error: the next poll that cannot reach it either goes on past it (a poll that throws keeps no state, so the report itself cannot be stored) | triggers poll on the main process only; a restart reports the gap once more |
 * | credentialsRead | the credential as each node run or poll read it last (by its n8n context, forgotten with it, and read anew when a run or poll starts): read once per run, and again only after a renewal or a 401, when it may have changed (n8n reads the database and decrypts at every read) | per run, so another process's renewal is seen by the next run, or at once after a 401 |
 * | listPagesRead | the pages of the list of sends lookups of a node run read lately (by the run's context, forgotten with it), with when each read started: lookups that need a page read after a given moment share it (fifty lookups after one outage read each page once a round) | per run |
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
	/** The lease of a claim of an Idempotency Key: its holder marks the minute it lives in while it
	 * sends, and starts no request that could outlast the end of its last marked minute plus this; so
	 * another run knows until when it may be sending (neverTwice/claimLease.ts). Longer than a
	 * request's timeout. */
	claimLeaseMs: number;
	/** How long a copy of an event waits, at most, for the run that holds its key and still renews
	 * it; beyond, the copy sends nothing and says the outcome is unknown. Only a time a node run may
	 * wait: the decision comes from the lease. */
	heldKeyWaitMs: number;
	/** After a lost answer, the least time before the send may count as never made (an API may
	 * register a send a moment after it answered 5xx for it; the margin the window of a lookup gives
	 * it too), and how often the lookup reads the list of sends again (five times per this) while it
	 * waits for its send or for the evidence that proves it absent. */
	lookupSettleMs: number;
	/** How long after a lost answer the lookup keeps reading the list for the send, or for the
	 * evidence that proves it absent (a send made after the answer was lost, since listed: a list
	 * lagging 30 s shows it 30 s late). Neither by then: the outcome is unknown (never a send). Only a
	 * time a node run may wait: the decision comes from the list. */
	lookupEvidenceWaitMs: number;
	/** The lease of the Idempotency Keys' store lock: its holder renews it several times within this
	 * while it lives, so a lock found unrenewed this long (plus up to storeLockBreakJitterMs) is taken
	 * as left by a process that died holding it. A holder keeps it for milliseconds. */
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

/** Why the credential's preAuthentication failed (its TokenRenewalError, which n8n wraps). A
 * refusal (wrong secret, revoked refresh token) is final; an unreachable or busy (429, 5xx)
 * token endpoint is `retryable`. The message never holds a secret. */
export interface RenewalFailure {
	message: string;
	retryable: boolean;
	httpCode?: number;
}

/** A forced token renewal: the renewed credential data, or why it failed (shared too: a refused
 * secret is asked once). */
export interface RenewalResult {
	renewed?: ICredentialDataDecryptedObject;
	failed?: RenewalFailure;
}

/** A send of this process whose answer has not come yet. */
export interface PostInFlight {
	/** Its content but the recipients (see transport/safeSend/registry.ts). */
	lookalike: string;
	owner: string;
	answered: Promise<void>;
}

/** A send of this process whose outcome stayed unknown: it may be registered, and no id is held for it. */
export interface UnresolvedSend {
	/** Its content but the recipients, and its recipients (see transport/safeSend/registry.ts). */
	lookalike: string;
	recipients: string;
	/** When it was last tried (n8n's clock). */
	triedAt: number;
}

/** When a send of this process went out and when the list first showed it (n8n's clock). */
export interface SendListing {
	/** A moment before its request went out (it went out then or later); undefined when that is not
	 * known (a send found after a lost answer), so it proves nothing about the list. */
	sentAt: number | undefined;
	/** When a reading of the list first showed it; undefined until then. */
	listedAt?: number;
	/** Whether lookups read the list for it while it was not listed yet: then `listedAt` measures how
	 * late the API listed it. */
	watched?: boolean;
	/** Once listed with a creation time that has a zone: how far ahead of n8n's clock the API's clock
	 * was at most (its creation time, plus the precision the API writes it with, minus `sentAt`: the
	 * API registered it after its request went out). */
	apiClockAheadAtMostMs?: number;
}

/** What became of an event sent under an Idempotency Key in this process: every batch accepted (with
 * the send id of each batch's content id), or not; nothing sent at all, or not. */
export interface KeyedSendOutcome {
	accepted: boolean;
	notSent: boolean;
	ids: Record<string, string>;
}

interface ProcessState {
	renewalsInFlight: Map<string, Promise<RenewalResult>>;
	sendOwners: Map<string, Map<string, string>>;
	postsInFlight: Map<string, Set<PostInFlight>>;
	/** Per credential, by owner. */
	unresolvedSends: Map<string, Map<string, UnresolvedSend>>;
	/** Per credential, by send id. */
	sentTexts: Map<string, Map<string, { title: string; body: string }>>;
	/** Per credential, by send id. */
	listings: Map<string, Map<string, SendListing>>;
	textEvidence: Map<string, SeenTexts>;
	keysInFlight: Map<string, Promise<KeyedSendOutcome>>;
	paces: Map<string, Pace>;
	polledContexts: WeakSet<object>;
	listGapsReported: WeakMap<object, number>;
	credentialsRead: WeakMap<object, Promise<ICredentialDataDecryptedObject>>;
	listPagesRead: WeakMap<object, Map<number, { startedAt: number; page: Promise<SendListPage> }>>;
	timings: Timings;
}

function freshState(): ProcessState {
	return {
		renewalsInFlight: new Map(),
		sendOwners: new Map(),
		postsInFlight: new Map(),
		unresolvedSends: new Map(),
		sentTexts: new Map(),
		listings: new Map(),
		textEvidence: new Map(),
		keysInFlight: new Map(),
		paces: new Map(),
		polledContexts: new WeakSet(),
		listGapsReported: new WeakMap(),
		credentialsRead: new WeakMap(),
		listPagesRead: new WeakMap(),
		timings: deepCopy(DEFAULT_TIMINGS),
	};
}

/** The one instance of this process. Read its parts; replace them only through the functions below. */
export const processState: ProcessState = freshState();

/** Empties every piece and restores the default timings (tests, between cases). */
export function resetProcessState(): void {
	Object.assign(processState, freshState());
	resetStoreState();
}

/** Shortens waits for a test run (until the next resetProcessState). */
export function useTimings(
	changes: { retry?: Partial<RetryPolicy> } & Partial<Omit<Timings, 'retry'>>,
): void {
	const { retry, ...others } = changes;
	processState.timings = {
		...processState.timings,
		...others,
		retry: { ...processState.timings.retry, ...retry },
	};
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
