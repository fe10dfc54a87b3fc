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
import { CREDENTIAL_TYPE } from './credentialKey';
import { letIoThrough } from './requestStarts';

/** Every n8n context the nodes call the API from. */
export type CompanionPushContext = IExecuteFunctions | IPollFunctions | ILoadOptionsFunctions;

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
	const timeoutMs = call.timeoutMs ?? DEFAULT_TIMEOUT_MS;
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
	await call.beforeRequest?.(timeoutMs + (renewsFirst ? RENEWAL_TIMEOUT_MS : 0));
	call.wentOut?.();
	try {
		const response = (await context.helpers.httpRequestWithAuthentication.call(
			context,
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
		)) as { statusCode: number; body: unknown; headers?: Record<string, unknown> };
		const redact = (body: unknown) => redactSecrets(body, secrets());
		// Every body, a success's too: what an API echoes of the token reaches an error or the node's
		// output. A body without a secret comes back as it is (no copy).
		return {
			kind: 'answer',
			status: response.statusCode,
			body: redact(response.body),
			headers: response.headers ?? {},
			redact,
		};
	} catch (error) {
		// The token could not be renewed: nothing was sent. Keep only the credential's message.
		const failure = renewalFailure(error);
		if (failure) return { kind: 'renewalFailed', failure };
		// The error n8n wraps here still holds the request (and its headers): keep only the code.
		return noAnswer(error, secrets());
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
