import { withoutUserInfo } from '../../../../credentials/companionPushApi/baseUrl';
import { redactSecrets } from '../../../../credentials/companionPushApi/redaction';
import type { RenewalFailure } from '../../../../credentials/companionPushApi/token';

/* The kinds of answer a request hands back, and a request that failed without one mapped to what it
 * tells: its network error code and whether it can have reached the API, or the token's renewal. */

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
	/** The Base URL asked (checked: no user or password in it), named when nothing answered there. */
	address?: string;
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
