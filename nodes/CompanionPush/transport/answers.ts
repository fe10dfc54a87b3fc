import { DateTime } from 'luxon';

import { withoutUserInfo } from '../../../credentials/companionPushApi/baseUrl';
import { redactSecrets } from '../../../credentials/companionPushApi/redaction';
import type { RenewalFailure } from '../../../credentials/companionPushApi/token';
import { endpointOf } from './schemas';

/* What a request comes back with: its body, read as it arrives and redacted; a failure without an
 * answer mapped to what it tells (its network error code and whether it can have reached the API,
 * or the token's renewal); and what an answer's headers say of time (its Date, its Retry-After). */

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

/** An answer a caller judges: a status, or no answer at all. */
export type FinalAnswer = Exclude<Answer, { kind: 'renewalFailed' }>;

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

/** No complete answer by the deadline (`what`, in words). `neverSent`: the request did not start. */
export function timedOut(what: string, neverSent: boolean): NoAnswer {
	return {
		kind: 'noAnswer',
		code: 'ETIMEDOUT',
		neverSent,
		reason: `no complete answer from the API within ${what} (ETIMEDOUT)`,
	};
}

/** A read's answer larger than any its endpoint gives: an error at once (no retry makes it smaller). */
export interface TooLarge {
	kind: 'tooLarge';
	endpoint: string;
	boundBytes: number;
}

/**
 * The answer to a request whose status came: its body read as it arrives, stopped at `deadline`
 * (named `deadlineWhat` in messages), at `signal` (the deadline, or n8n's cancel) or at the bound.
 * `secrets` are hidden in every body, a success's too: what an API echoes of the token reaches an
 * error or the node's output (a body without a secret comes back as it is, no copy).
 */
export async function readAnswer(
	response: { statusCode: number; body: unknown; headers?: Record<string, unknown> },
	request: { method: string; path: string },
	signals: { deadline: AbortSignal; signal: AbortSignal; deadlineWhat: string },
	secrets: () => unknown[],
): Promise<Answer | TooLarge> {
	const redact = (body: unknown) => redactSecrets(body, secrets());
	const bound = answerBytesBound(request.method, request.path);
	const read = await readBody(response.body, signals.deadline, signals.signal, bound);
	const headers = response.headers ?? {};
	const status = response.statusCode;
	if (read.kind === 'whole')
		return { kind: 'answer', status, body: redact(read.body), headers, redact };
	const endpoint = endpointOf(request.method, request.path);
	if (request.method !== 'POST') {
		// A read: what it did not get whole is no answer (tried again as any timeout).
		if (read.kind === 'tooLarge') return { kind: 'tooLarge', endpoint, boundBytes: bound };
		if (read.kind === 'deadline') return timedOut(signals.deadlineWhat, false);
		if (read.kind === 'failed') return noAnswer(read.error, secrets());
		return { kind: 'noAnswer', code: 'ERR_CANCELED', neverSent: false };
	}
	// A POST's status stands even when its body is not read: a send the API accepted (2xx) is never
	// sent again (its id is then asked of the list of sends), a 5xx leaves it unknown, as always.
	const why =
		read.kind === 'tooLarge'
			? `larger than ${bound / MIB} MiB, the most this node reads of an answer to ${endpoint}`
			: read.kind === 'deadline'
				? `not whole within ${signals.deadlineWhat}`
				: 'cut short';
	return {
		kind: 'answer',
		status,
		body: `(the body of this answer was not read: ${why})`,
		headers,
		redact,
	};
}

/*
 * The body is read here as it arrives rather than by n8n's helper: n8n's `timeout` is the
 * socket's idle time, which a body sent one byte at a time never reaches, and n8n reads any length
 * whole. The most read of one answer is far above any the spec allows and far below what would hurt
 * n8n's memory or output: a send's detail lists a delivery per phone, about 150 bytes each (16 MiB
 * is over 100,000 phones, a hundred times a send of 1000 users with a phone each); a page of users
 * or of sends is well under 1 MiB; the users with an active app come unpaged (32 MiB is a million ids).
 */
const MIB = 1024 * 1024;

function answerBytesBound(method: string, path: string): number {
	return method === 'GET' && path === '/user-device/users' ? 32 * MIB : 16 * MIB;
}

/** The body stream n8n hands back with `encoding: 'stream'` (axios's response stream). */
export interface BodyStream {
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
		// Decoded as it comes (a byte order mark dropped, as n8n's helper reads it).
		const decoder = new TextDecoder();
		let text = '';
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
			text += decoder.decode(part, { stream: true });
		});
		body.on('end', () => finish({ kind: 'whole', body: parsedBody(text + decoder.decode()) }));
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

/** The body as n8n's helper gives it without `encoding`: JSON parsed when it parses, else the text. */
function parsedBody(text: string): unknown {
	if (text === '') return text;
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return text;
	}
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
	let current = error;
	while (typeof current === 'object' && current !== null && !seen.has(current)) {
		seen.add(current);
		yield current as Record<string, unknown>;
		current = (current as { cause?: unknown }).cause;
	}
}

/** The credential's TokenRenewalError, wherever n8n wrapped it. */
export function renewalFailure(error: unknown): RenewalFailure | undefined {
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
export function noAnswer(error: unknown, secrets: unknown[]): NoAnswer {
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

/** The API's clock when it answered: its Date header, or undefined when absent or unreadable. */
export function serverTimeMs(headers: Record<string, unknown>): number | undefined {
	const value = Array.isArray(headers.date) ? headers.date[0] : headers.date;
	return typeof value === 'string' ? httpDateMs(value) : undefined;
}

/** An HTTP date (RFC 9110: IMF-fixdate, or the obsolete RFC 850 and asctime forms, all in GMT), in ms. */
function httpDateMs(text: string): number | undefined {
	const date = DateTime.fromHTTP(text.trim());
	return date.isValid ? date.toMillis() : undefined;
}

/**
 * Milliseconds asked by a Retry-After header: seconds as given; an HTTP date measured against the
 * answer's own Date header (the API's clock, which may differ from n8n's), or against n8n's clock
 * when the answer has none. Undefined when absent, unreadable, or a date not in the future: the
 * caller then backs off, so a wait never turns into a burst of calls.
 */
export function retryAfterMs(
	header: unknown,
	answeredAtMs: number | undefined,
	nowMs: number,
): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (typeof value !== 'string' && typeof value !== 'number') return undefined;
	const text = String(value).trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	const date = httpDateMs(text);
	if (date === undefined) return undefined;
	const wait = date - (answeredAtMs ?? nowMs);
	return wait > 0 ? wait : undefined;
}
