import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IPollFunctions,
} from 'n8n-workflow';

import { withoutUserInfo } from '../../../credentials/companionPushApi/baseUrl';
import { redactSecrets } from '../../../credentials/companionPushApi/redaction';
import { RENEWAL_TIMEOUT_MS } from '../../../credentials/companionPushApi/token';
import type { RenewalFailure } from '../../../credentials/companionPushApi/token';
import { timings } from '../shared/timings';
import { CREDENTIAL_TYPE } from './credentialKey';
import { answerTooLarge } from './errors';
import { letIoThrough } from './requestStarts';
import { answerBytesBound, endpointOf } from './schemas';

/** Every n8n context the nodes call the API from. */
export type CompanionPushContext = IExecuteFunctions | IPollFunctions | ILoadOptionsFunctions;

/** A request's deadline when nothing else is said (timings().requestTimeoutMs; see shared/timings.ts). */
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
	/** Called as each request leaves, once the process let it be built (requestStarts.ts). */
	wentOut?: () => void;
}

/** What one request came back with: an answer (any status), no answer at all (connection failed,
 * reset, timed out, or an error nobody recognizes), or nothing sent because the access token could
 * not be renewed. */
export type Answer =
	| {
			kind: 'answer';
			status: number;
			body: unknown;
			headers: Record<string, unknown>;
			/** Hides the credential's secrets in a body about to be shown in an error. */
			redact: (body: unknown) => unknown;
	  }
	| NoAnswer
	| { kind: 'renewalFailed'; failure: RenewalFailure };

export interface NoAnswer {
	kind: 'noAnswer';
	/** A network error code (ECONNRESET, ECONNABORTED for a timeout ...), or UNKNOWN_ERROR for an error
	 * that carries none: then `unexpected` says what it was, since it may be a fault of this package
	 * or of n8n, not of the network. */
	code: string;
	unexpected?: string;
	/** True when the request certainly never reached the API (the connection was refused, the host
	 * not found, the TLS handshake failed): nothing can have been registered. Otherwise the request
	 * may or may not have reached it. */
	neverSent: boolean;
	/** What happened, in words, when the code alone does not say it (a deadline that passed). */
	reason?: string;
}

/** Codes of failures that happen before any byte of the request reaches the API. */
const NEVER_SENT_CODES = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'ENETUNREACH',
	'EHOSTUNREACH',
	'ERR_INVALID_URL',
]);
/** TLS handshake failures (certificate checks), which also happen before the request is written. */
const TLS_FAILURE =
	/^(CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|ERR_TLS_|ERR_SSL_)/;

/** The error and the errors it wraps (`cause`), outermost first: n8n wraps what the request or
 * the credential threw, so what matters may be a few levels down. */
function* causeChain(error: unknown): Generator<Record<string, unknown>> {
	const seen = new Set<unknown>();
	for (
		let current = error;
		typeof current === 'object' && current !== null && !seen.has(current);

	) {
		seen.add(current);
		yield current as Record<string, unknown>;
		current = (current as { cause?: unknown }).cause;
	}
}

/** The credential's TokenRenewalError, wherever n8n wrapped it. */
function renewalFailure(error: unknown): RenewalFailure | undefined {
	for (const current of causeChain(error)) {
		if (current.name === 'TokenRenewalError' && typeof current.message === 'string') {
			return {
				message: current.message,
				retryable: current.retryable === true,
				httpCode:
					typeof current.refusedWithStatus === 'number' ? current.refusedWithStatus : undefined,
			};
		}
	}
	return undefined;
}

/** A request that failed without an answer: its network error code (n8n wraps the client's error,
 * so it is looked for down the chain), or, for an error that carries none, UNKNOWN_ERROR with the
 * innermost error's own message (without secrets). */
function noAnswer(error: unknown, secrets: unknown[]): NoAnswer {
	let innermost: Record<string, unknown> | undefined;
	for (const current of causeChain(error)) {
		innermost = current;
		const code = current.code;
		if (typeof code === 'string' && (/^E[A-Z_]+$/.test(code) || TLS_FAILURE.test(code))) {
			return {
				kind: 'noAnswer',
				code,
				neverSent: NEVER_SENT_CODES.has(code) || TLS_FAILURE.test(code),
			};
		}
		if (typeof current.message === 'string' && /timeout/i.test(current.message))
			return { kind: 'noAnswer', code: 'ETIMEDOUT', neverSent: false };
	}
	const message = typeof innermost?.message === 'string' ? innermost.message : String(error);
	const shown = String(redactSecrets(withoutUserInfo(message), secrets)).slice(0, 200);
	return { kind: 'noAnswer', code: 'UNKNOWN_ERROR', unexpected: shown, neverSent: false };
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

/** The body stream n8n hands back with `encoding: 'stream'` (axios's response stream). */
interface BodyStream {
	on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
	on(event: 'end', listener: () => void): unknown;
	on(event: 'error', listener: (error: unknown) => void): unknown;
	destroy(): unknown;
}

type BodyRead =
	| { kind: 'whole'; body: unknown }
	| { kind: 'deadline' | 'canceled' | 'tooLarge' }
	| { kind: 'failed'; error: unknown };

/**
 * Reads the body as it arrives, and stops reading (closing the connection) as soon as the deadline
 * passes or more than `maxBytes` came: a body sent one byte at a time, or without end, is never read
 * whole, nor kept.
 */
async function readBody(
	stream: unknown,
	deadline: AbortSignal,
	signal: AbortSignal,
	maxBytes: number,
): Promise<BodyRead> {
	// Not a stream (a body n8n itself made up): as it is.
	if (typeof (stream as BodyStream | undefined)?.on !== 'function')
		return { kind: 'whole', body: stream };
	const body = stream as BodyStream;
	return await new Promise<BodyRead>((resolve) => {
		const chunks: Uint8Array[] = [];
		let bytes = 0;
		let done = false;
		const finish = (read: BodyRead) => {
			if (done) return;
			done = true;
			signal.removeEventListener('abort', onAbort);
			if (read.kind !== 'whole') body.destroy();
			resolve(read);
		};
		const onAbort = () => finish({ kind: deadline.aborted ? 'deadline' : 'canceled' });
		if (signal.aborted) return onAbort();
		signal.addEventListener('abort', onAbort, { once: true });
		body.on('data', (chunk) => {
			if (done) return;
			const part = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
			bytes += part.byteLength;
			if (bytes > maxBytes) return finish({ kind: 'tooLarge' });
			chunks.push(part);
		});
		body.on('end', () => finish({ kind: 'whole', body: parsedBody(utf8Text(chunks, bytes)) }));
		body.on('error', (error) =>
			finish(
				deadline.aborted
					? { kind: 'deadline' }
					: signal.aborted
						? { kind: 'canceled' }
						: { kind: 'failed', error },
			),
		);
	});
}

/** The chunks of a body as one text (UTF-8, a byte order mark dropped, as n8n's helper reads it). */
function utf8Text(chunks: Uint8Array[], bytes: number): string {
	if (chunks.length === 1) return new TextDecoder().decode(chunks[0]);
	const whole = new Uint8Array(bytes);
	let at = 0;
	for (const chunk of chunks) {
		whole.set(chunk, at);
		at += chunk.byteLength;
	}
	return new TextDecoder().decode(whole);
}

/** The body as n8n's helper gives it without `encoding`: JSON parsed when it parses, else the text. */
function parsedBody(text: string): unknown {
	if (text === '') return text;
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return text;
	}
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
	// Hundreds started at once would all be built before the first leaves (requestStarts.ts).
	await letIoThrough();
	// Asked now, not when the request took its turn: the gate, a renewal it joined or a 401 may have
	// held it since. With a token to renew, n8n renews it first, in the helper, then sends.
	const renewsFirst = credentials !== undefined && !credentials.accessToken;
	const allowedMs = timeoutMs + (renewsFirst ? RENEWAL_TIMEOUT_MS : 0);
	await call.beforeRequest?.(allowedMs);
	const endpoint = endpointOf(call.method, call.path);
	const deadline = deadlineOf(context, allowedMs);
	const timedOut = (neverSent: boolean): NoAnswer => ({
		kind: 'noAnswer',
		code: 'ETIMEDOUT',
		neverSent,
		reason: `no complete answer from the API within ${deadline.what} (ETIMEDOUT)`,
	});
	// The work's deadline passed while this request waited for its turn: it does not start.
	if (deadline.ms <= 0) return timedOut(true);
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
			return timedOut(false);
		}
		response = first;
	} catch (error) {
		// The token could not be renewed: nothing was sent. Keep only the credential's message.
		const failure = renewalFailure(error);
		if (failure) return { kind: 'renewalFailed', failure };
		// No status came by the deadline: as a timeout always was, the request may have reached the API.
		if (deadlineSignal.aborted) return timedOut(false);
		// The error n8n wraps here still holds the request (and its headers): keep only the code.
		return noAnswer(error, secrets());
	}
	const redact = (body: unknown) => redactSecrets(body, secrets());
	const bound = answerBytesBound(call.method, call.path);
	const read = await readBody(response.body, deadlineSignal, signal, bound);
	const headers = response.headers ?? {};
	if (read.kind === 'whole') {
		// Every body, a success's too: what an API echoes of the token reaches an error or the node's
		// output. A body without a secret comes back as it is (no copy).
		return {
			kind: 'answer',
			status: response.statusCode,
			body: redact(read.body),
			headers,
			redact,
		};
	}
	if (call.method !== 'POST') {
		// A read: what it did not get whole is no answer (tried again as any timeout), and an answer
		// larger than any real one is an error at once (reading it again would not make it smaller).
		if (read.kind === 'tooLarge')
			throw answerTooLarge(context.getNode(), call.action, endpoint, bound, call.itemIndex);
		if (read.kind === 'deadline') return timedOut(false);
		if (read.kind === 'failed') return noAnswer(read.error, secrets());
		return { kind: 'noAnswer', code: 'ERR_CANCELED', neverSent: false };
	}
	// A POST's status stands even when its body is not read: a send the API accepted (2xx) is never
	// sent again (its id is then asked of the list of sends), a 5xx leaves it unknown, as always.
	const why =
		read.kind === 'tooLarge'
			? `larger than ${bound / (1024 * 1024)} MiB, the most this node reads of an answer to ${endpoint}`
			: read.kind === 'deadline'
				? `not whole within ${deadline.what}`
				: 'cut short';
	return {
		kind: 'answer',
		status: response.statusCode,
		body: `(the body of this answer was not read: ${why})`,
		headers,
		redact,
	};
}

/** The body as JSON: the helper hands back text when the API's JSON is malformed. */
export function readJson(body: unknown): { ok: true; value: unknown } | { ok: false } {
	if (typeof body !== 'string') return { ok: true, value: body };
	try {
		return { ok: true, value: JSON.parse(body) };
	} catch {
		return { ok: false };
	}
}
