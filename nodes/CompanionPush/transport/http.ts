/*
 * One request through n8n's authenticated request helper: its options, its deadline (and a whole
 * poll's) and its turn to be built among the process's requests (letIoThrough, at the end). What
 * comes back is read in answers.ts.
 */
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	INode,
	IPollFunctions,
} from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { RENEWAL_TIMEOUT_MS } from '../../../credentials/companionPushApi/token';
import { timings } from '../common/timings';
import { noAnswer, readAnswer, renewalFailure, timedOut } from './answers';
import type { Answer, BodyStream } from './answers';
import { answerTooLarge } from './errors';

/** The credential type the nodes run with (the credential's `name`). */
export const CREDENTIAL_TYPE = 'companionPushApi';

/** The credential a node runs with, as the key of what the transport keeps per credential in
 * process memory (token renewals, the pace, the registry of sends). */
export function credentialKey(context: { getNode(): INode }): string {
	const reference = context.getNode().credentials?.[CREDENTIAL_TYPE];
	return reference?.id ?? reference?.name ?? 'unsaved';
}

/** Every n8n context the nodes call the API from. */
export type CompanionPushContext = IExecuteFunctions | IPollFunctions | ILoadOptionsFunctions;

/** A request's deadline when nothing else is said (timings().requestTimeoutMs; see common/timings.ts). */
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface ApiCall {
	method: IHttpRequestMethods;
	/** Path below the base URL, e.g. `/user/list`. */
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/** What the call does, in words for error messages ("Reading the user list"). */
	action: string;
	itemIndex?: number;
	/** The deadline of the whole exchange, the answer's last byte included (default
	 * timings().requestTimeoutMs). */
	timeoutMs?: number;
	/** Called as each request is about to leave, with how long it may take from now (its timeout, and
	 * a token renewal's before it); throws when it must not start. */
	beforeRequest?: (timeoutMs: number) => Promise<void>;
	/** Called as each request leaves, once the process let it be built (letIoThrough). */
	wentOut?: () => void;
}

/** The organization comes from the credential: `tenant_id` is never sent, even when a caller
 * passes one through. */
function withoutTenantId(values: IDataObject | undefined): IDataObject | undefined {
	if (!values || !('tenant_id' in values)) return values;
	const rest = { ...values };
	delete rest.tenant_id;
	return rest;
}

/**
 * Deadlines of a whole piece of work (a trigger's poll), by its n8n context: no request of it
 * outlasts the deadline, and none starts after it. Set and cleared by the work's owner (the poll);
 * forgotten with the context.
 */
const workDeadlines = new WeakMap<object, { at: number; what: string }>();

/** Gives the work of `context` (`work` names it: "the poll") a deadline `ms` from now. */
export function setWorkDeadline(context: object, ms: number, work: string): void {
	workDeadlines.set(context, {
		at: Date.now() + ms,
		what: `${work}'s deadline of ${shownDuration(ms)}`,
	});
}

export function clearWorkDeadline(context: object): void {
	workDeadlines.delete(context);
}

/** True when the work of `context` has a deadline that passes within `ms` from now. */
export function workDeadlineWithin(context: object, ms: number): boolean {
	const deadline = workDeadlines.get(context);
	return deadline !== undefined && Date.now() + ms >= deadline.at;
}

/** A duration for messages: "300 ms", "30 s", "5 min". */
function shownDuration(ms: number): string {
	if (ms < 1000) return `${Math.round(ms)} ms`;
	if (ms < 60_000 || ms % 60_000 !== 0) return `${Math.round(ms / 100) / 10} s`;
	return `${ms / 60_000} min`;
}

/** How long the whole exchange may take from now, and that deadline in words: the request's own,
 * or the work's when that comes first. */
function deadlineOf(context: object, allowedMs: number): { ms: number; what: string } {
	const own = { ms: allowedMs, what: `its deadline of ${shownDuration(allowedMs)}` };
	const work = workDeadlines.get(context);
	if (!work || work.at - Date.now() >= allowedMs) return own;
	return { ms: Math.max(0, work.at - Date.now()), what: work.what };
}

/**
 * The context the helper is called on. n8n-core's httpRequestWithAuthentication (1.x and 2.x)
 * replaces a request's `abortSignal` with the execution's cancel signal when the context has one (a
 * node run does; a poll does not): the helper then sees a cancel signal that also fires at the
 * request's deadline, so n8n's own cancel still stops the request, and so does the deadline.
 */
function withAbortSignal(context: CompanionPushContext, signal: AbortSignal): CompanionPushContext {
	if (!('getExecutionCancelSignal' in context)) return context;
	return Object.create(context, {
		getExecutionCancelSignal: { value: () => signal },
	}) as CompanionPushContext;
}

/**
 * One request through n8n's authenticated request helper, any status returned as an answer.
 * `stored` is the credential as read for this exchange (its secrets are hidden in error bodies);
 * `credentials`, when given, is what n8n authenticates with instead (an emptied token to renew,
 * or a renewed one).
 */
export async function requestOnce(
	context: CompanionPushContext,
	call: ApiCall,
	baseUrl: string,
	stored: ICredentialDataDecryptedObject,
	credentials?: ICredentialDataDecryptedObject,
): Promise<Answer> {
	const timeoutMs = call.timeoutMs ?? timings().requestTimeoutMs;
	const options: IHttpRequestOptions = {
		method: call.method,
		url: `${baseUrl}${call.path}`,
		qs: withoutTenantId(call.qs),
		body: withoutTenantId(call.body),
		json: true,
		timeout: timeoutMs,
		// Statuses come back as values: errors are built here from status and body only, and the
		// 401 renewal is done by the caller, the same way in every n8n version.
		ignoreHttpStatusErrors: true,
		// A redirect comes back as an answer too: followed, it would carry the token to another address
		// (n8n puts it back on), and turn a send's POST into a GET. Not following is also cheaper.
		disableFollowRedirect: true,
		returnFullResponse: true,
		// The body is read here, as it arrives (readBody): n8n's `timeout` is the socket's idle time,
		// which a body sent one byte at a time never reaches, and n8n reads any length whole.
		encoding: 'stream',
	};
	const reference = context.getNode().credentials?.[CREDENTIAL_TYPE];
	// Read when needed: n8n writes a renewed token into `credentials` during the request.
	const secrets = () => [
		stored.clientSecret,
		stored.refreshToken,
		stored.accessToken,
		credentials?.accessToken,
	];
	// Hundreds started at once would all be built before the first leaves.
	await letIoThrough();
	// Asked now, not when the request took its turn: the gate, a renewal it joined or a 401 may have
	// held it since. With a token to renew, n8n renews it first, in the helper, then sends.
	const renewsFirst = credentials !== undefined && !credentials.accessToken;
	const allowedMs = timeoutMs + (renewsFirst ? RENEWAL_TIMEOUT_MS : 0);
	await call.beforeRequest?.(allowedMs);
	const deadline = deadlineOf(context, allowedMs);
	// The work's deadline passed while this request waited for its turn: it does not start.
	if (deadline.ms <= 0) return timedOut(deadline.what, true);
	// The whole exchange, the answer's last byte included, ends by the deadline: the signal aborts
	// the request (and its body) wherever it is.
	const deadlineSignal = AbortSignal.timeout(deadline.ms);
	const cancelSignal =
		'getExecutionCancelSignal' in context ? context.getExecutionCancelSignal() : undefined;
	const signal = cancelSignal ? AbortSignal.any([deadlineSignal, cancelSignal]) : deadlineSignal;
	options.abortSignal = signal;
	call.wentOut?.();
	const exchanged = context.helpers.httpRequestWithAuthentication.call(
		withAbortSignal(context, signal),
		CREDENTIAL_TYPE,
		options,
		credentials
			? {
					credentialsDecrypted: {
						id: reference?.id ?? '',
						name: reference?.name ?? '',
						type: CREDENTIAL_TYPE,
						data: credentials,
					},
				}
			: undefined,
	) as Promise<{ statusCode: number; body: unknown; headers?: Record<string, unknown> }>;
	// The signal stops the request itself; a token renewal n8n runs first does not take it (the
	// credential's own request), so the deadline also ends the wait. Once the signal fired, n8n's
	// request never leaves (axios refuses an aborted signal before sending).
	const passed = new Promise<'deadline'>((resolve) => {
		if (deadlineSignal.aborted) resolve('deadline');
		else deadlineSignal.addEventListener('abort', () => resolve('deadline'), { once: true });
	});
	let response: Awaited<typeof exchanged>;
	try {
		const first = await Promise.race([exchanged, passed]);
		if (first === 'deadline') {
			void exchanged.then(
				(late) => (late.body as Partial<BodyStream> | undefined)?.destroy?.(),
				() => undefined,
			);
			return timedOut(deadline.what, false);
		}
		response = first;
	} catch (error) {
		// The token could not be renewed: nothing was sent. Keep only the credential's message.
		const failure = renewalFailure(error);
		if (failure) return { kind: 'renewalFailed', failure };
		// No status came by the deadline: as a timeout always was, the request may have reached the API.
		if (deadlineSignal.aborted) return timedOut(deadline.what, false);
		// The error n8n wraps here still holds the request (and its headers): keep only the code.
		return noAnswer(error, secrets());
	}
	const answer = await readAnswer(
		response,
		call,
		{ deadline: deadlineSignal, signal, deadlineWhat: deadline.what },
		secrets,
	);
	if (answer.kind !== 'tooLarge') return answer;
	throw answerTooLarge(
		context.getNode(),
		call.action,
		answer.endpoint,
		answer.boundBytes,
		call.itemIndex,
	);
}

/*
 * Requests started together (a run's hundreds of sends once the token is there) would each be
 * built by n8n's HTTP helper in one run of the event loop's microtasks: every one is built before
 * the loop writes the first to its socket, so the API sees none of them for as long as building all
 * takes (half a second for 500 on a busy machine). So a request about to start awaits
 * `letIoThrough()`: the callers waiting are let through in batches, in the order they came, with the
 * loop's I/O between two batches, so each batch leaves while the next is built. A batch starts at
 * one request, grows by one while building it takes less than a slice and halves while it takes
 * more than two: the machine's own speed sets it. It never limits how many are in flight. One queue
 * for the process: every run's requests take turns alike.
 */

/** How long building one batch may hold the loop (longer delays a burst's first requests, shorter
 * adds turns of the loop). */
const SLICE_MS = 16;

/** The callers waiting, from `next` on (a head index: taking from the front stays cheap for many). */
let waiting: Array<() => void> = [];
let next = 0;
let releasing = false;

async function letIoThrough(): Promise<void> {
	await new Promise<void>((resolve) => {
		waiting.push(resolve);
		if (!releasing) {
			releasing = true;
			void releaseInBatches();
		}
	});
}

/**
 * The first batch goes at once (a request alone waits for nothing). n8n's sleep is a timer, and a
 * timer that came due while a batch was built runs before the loop's I/O: so after a batch, one
 * timer only waits until the batch is built, and the next, set after that, lets the I/O through.
 */
async function releaseInBatches(): Promise<void> {
	let batchSize = 1;
	for (;;) {
		const startedAt = performance.now();
		const end = Math.min(waiting.length, next + batchSize);
		while (next < end) waiting[next++]();
		await sleep(0); // the batch built
		if (next >= waiting.length) break;
		const builtInMs = performance.now() - startedAt;
		if (builtInMs < SLICE_MS) batchSize++;
		else if (builtInMs > 2 * SLICE_MS) batchSize = Math.max(1, Math.floor(batchSize / 2));
		await sleep(0); // the I/O
	}
	waiting = [];
	next = 0;
	releasing = false;
}
