import { NodeOperationError, sleep } from 'n8n-workflow';
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IPollFunctions,
} from 'n8n-workflow';

import { checkBaseUrl, secretsFingerprint } from '../../../credentials/CompanionPushApi.credentials';
import type { ZodType, ZodTypeDef } from 'zod';

import { apiError, networkError, renewalError, unexpectedResponse } from './errors';
import type { RenewalFailure } from './errors';
import { isRetryableStatus, nextDelayMs } from './retry';

/** Every n8n context the nodes call the API from. */
export type CompanionPushContext = IExecuteFunctions | IPollFunctions | ILoadOptionsFunctions;

export const CREDENTIAL_TYPE = 'companionPushApi';
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
}

export interface ApiResponse {
	/** The HTTP status, or 0 when no answer came back (connection failed, reset, timed out). */
	status: number;
	body: unknown;
	headers: Record<string, unknown>;
	/** Hides the credential's secrets in a body about to be shown in an error. */
	redact?: (body: unknown) => unknown;
	/** Why no answer came back (ECONNRESET, ETIMEDOUT ...), when status is 0. */
	noAnswer?: string;
	/** Status 0 because the access token could not be renewed: the request was not sent. */
	renewalFailed?: RenewalFailure;
}

/** The error and the errors it wraps (`cause`), outermost first: n8n wraps what the request or
 * the credential threw, so what matters may be a few levels down. */
function* causeChain(error: unknown): Generator<Record<string, unknown>> {
	const seen = new Set<unknown>();
	for (let current = error; typeof current === 'object' && current !== null && !seen.has(current); ) {
		seen.add(current);
		yield current as Record<string, unknown>;
		current = (current as { cause?: unknown }).cause;
	}
}

function renewalFailure(error: unknown): RenewalFailure | undefined {
	for (const current of causeChain(error)) {
		if (current.name === 'TokenRenewalError' && typeof current.message === 'string') {
			return {
				message: current.message,
				retryable: current.retryable === true,
				httpCode: typeof current.httpCode === 'number' ? current.httpCode : undefined,
			};
		}
	}
	return undefined;
}

// Forced renewals under way, per credential, so that items or polls running at the same time
// share one refresh instead of each asking for a token (no refresh storm). A renewal ends with the
// renewed credential data, or with why it failed (shared too: a refused secret is asked once).
interface RenewalResult {
	renewed?: ICredentialDataDecryptedObject;
	failed?: RenewalFailure;
}
const renewalsInFlight = new Map<string, Promise<RenewalResult>>();

function credentialKey(context: CompanionPushContext): string {
	const reference = context.getNode().credentials?.[CREDENTIAL_TYPE];
	return reference?.id ?? reference?.name ?? 'unsaved';
}

/** n8n renews the token only when it is empty or after a 401; this renews it a few minutes
 * before it expires, so a long run never spends a request on an expired token. */
export function tokenNeedsRenewal(credentials: ICredentialDataDecryptedObject, nowMs: number): boolean {
	const renewAfter = Number(credentials.accessTokenRenewAfter);
	if (!credentials.accessToken || !Number.isFinite(renewAfter) || nowMs >= renewAfter) return true;
	// Issued for other secrets (the credential was edited): renew now rather than spend a 401.
	return credentials.accessTokenIssuedFor !== secretsFingerprint(credentials);
}

function errorCode(error: unknown): string {
	for (const current of causeChain(error)) {
		if (typeof current.code === 'string' && /^E[A-Z_]+$/.test(current.code)) return current.code;
		if (typeof current.message === 'string' && /timeout/i.test(current.message)) return 'ETIMEDOUT';
	}
	return 'ECONNRESET';
}

/** The organization comes from the credential: `tenant_id` must never be sent (spec,
 * Authentication 6), even when a caller passes one through. */
function withoutTenantId(values: IDataObject | undefined): IDataObject | undefined {
	if (!values || !('tenant_id' in values)) return values;
	const rest = { ...values };
	delete rest.tenant_id;
	return rest;
}

const REDACTED = '[redacted]';

/** Replaces the credential's secrets and tokens wherever the API echoed them in a body (an error
 * message quoting the Authorization header, say), so no error or output can show them. */
export function redactSecrets(body: unknown, secrets: unknown[]): unknown {
	const hidden = secrets.filter((value): value is string => typeof value === 'string' && value.length >= 8);
	if (hidden.length === 0 || body === undefined || body === null) return body;
	const text = typeof body === 'string' ? body : JSON.stringify(body);
	if (typeof text !== 'string' || !hidden.some((secret) => text.includes(JSON.stringify(secret).slice(1, -1)))) return body;
	let redacted = text;
	for (const secret of hidden) redacted = redacted.split(JSON.stringify(secret).slice(1, -1)).join(REDACTED);
	return typeof body === 'string' ? redacted : JSON.parse(redacted);
}

/** One request. `stored` is the credential as read for this exchange; `credentials`, when given,
 * is what n8n authenticates with instead (an emptied token to renew, or a renewed one). */
async function sendOnce(
	context: CompanionPushContext,
	call: ApiCall,
	baseUrl: string,
	stored: ICredentialDataDecryptedObject,
	credentials?: ICredentialDataDecryptedObject,
): Promise<ApiResponse> {
	const options: IHttpRequestOptions = {
		method: call.method,
		url: `${baseUrl}${call.path}`,
		qs: withoutTenantId(call.qs),
		body: withoutTenantId(call.body),
		json: true,
		timeout: call.timeoutMs ?? DEFAULT_TIMEOUT_MS,
		// Statuses come back as values: errors are built here from status and body only, and the
		// 401 renewal is done below, the same way in every n8n version.
		ignoreHttpStatusErrors: true,
		returnFullResponse: true,
	};
	const reference = context.getNode().credentials?.[CREDENTIAL_TYPE];
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
		const secrets = [stored.clientSecret, stored.refreshToken, stored.accessToken, credentials?.accessToken];
		const redact = (body: unknown) => redactSecrets(body, secrets);
		// An error body is shown to the user: secrets echoed in it are hidden now. A success body is
		// data; it is redacted only when it ends up in an error (an unexpected shape), not on every
		// page read (that cost a JSON round trip per page of 1000 users).
		const succeeded = response.statusCode >= 200 && response.statusCode < 300;
		return {
			status: response.statusCode,
			body: succeeded ? response.body : redact(response.body),
			headers: response.headers ?? {},
			redact,
		};
	} catch (error) {
		// The token could not be renewed: nothing was sent. Keep only the credential's message.
		const renewalFailed = renewalFailure(error);
		if (renewalFailed) return { status: 0, body: undefined, headers: {}, renewalFailed };
		// The error n8n wraps here still holds the request (and its headers): keep only the code.
		return { status: 0, body: undefined, headers: {}, noAnswer: errorCode(error) };
	}
}

/** Sends with a token renewed first; the renewal is shared with concurrent callers. */
async function sendWithRenewedToken(
	context: CompanionPushContext,
	call: ApiCall,
	baseUrl: string,
	credentials: ICredentialDataDecryptedObject,
): Promise<ApiResponse> {
	const key = credentialKey(context);
	const renewal = renewalsInFlight.get(key);
	if (renewal) {
		const { renewed, failed } = await renewal;
		if (failed) return { status: 0, body: undefined, headers: {}, renewalFailed: failed };
		if (renewed) return await sendOnce(context, call, baseUrl, credentials, renewed);
	}
	// An emptied token makes n8n call the credential's preAuthentication, save the new token, and
	// write it into this object before sending.
	const renewing: ICredentialDataDecryptedObject = { ...credentials, accessToken: '' };
	let finish!: (value: RenewalResult) => void;
	renewalsInFlight.set(key, new Promise((resolve) => (finish = resolve)));
	let response: ApiResponse | undefined;
	try {
		response = await sendOnce(context, call, baseUrl, credentials, renewing);
		return response;
	} finally {
		finish({ renewed: renewing.accessToken ? renewing : undefined, failed: response?.renewalFailed });
		renewalsInFlight.delete(key);
	}
}

/**
 * One HTTP exchange through n8n's authenticated request helper: the token is renewed before
 * expiry, and a 401 renews it and retries once only. Returns any status, or status 0 when
 * nothing came back.
 */
export async function exchange(context: CompanionPushContext, call: ApiCall): Promise<ApiResponse> {
	const credentials = await context.getCredentials(CREDENTIAL_TYPE, call.itemIndex);
	let baseUrl: string;
	try {
		baseUrl = checkBaseUrl(credentials.baseUrl);
	} catch (error) {
		throw new NodeOperationError(context.getNode(), (error as Error).message, { itemIndex: call.itemIndex });
	}
	if (tokenNeedsRenewal(credentials, Date.now())) {
		const renewedFirst = await sendWithRenewedToken(context, call, baseUrl, credentials);
		if (renewedFirst.status !== 401) return renewedFirst;
		return await sendWithRenewedToken(context, call, baseUrl, credentials);
	}
	// The token read above is the one sent (n8n would read the credential again otherwise).
	const first = await sendOnce(context, call, baseUrl, credentials, credentials);
	if (first.status !== 401) return first;
	// A concurrent call may have renewed the token since it was read (its 401 came first): the
	// one retry uses that token instead of asking for yet another (no refresh storm).
	const current = await context.getCredentials(CREDENTIAL_TYPE, call.itemIndex);
	if (current.accessToken && current.accessToken !== credentials.accessToken && !tokenNeedsRenewal(current, Date.now())) {
		return await sendOnce(context, call, baseUrl, current, current);
	}
	return await sendWithRenewedToken(context, call, baseUrl, credentials);
}

/** A response body as it may be shown in an error: with the credential's secrets hidden. */
export function shown(response: ApiResponse): unknown {
	return response.redact ? response.redact(response.body) : response.body;
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

/**
 * A call that is safe to repeat (every read, and cancel): retried on 5xx, 429, no answer and
 * unreadable (malformed) JSON per RETRY_POLICY. Returns the 2xx body checked against `schema`;
 * any other answer becomes a NodeApiError that names the action.
 */
export async function apiRequest<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
): Promise<T> {
	return (await apiRequestWithHeaders(context, call, schema)).value;
}

/** `apiRequest`, also giving the answer's headers (the send lookup reads the server's clock). */
export async function apiRequestWithHeaders<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
): Promise<{ value: T; headers: Record<string, unknown> }> {
	for (let attempt = 1; ; attempt++) {
		const response = await exchange(context, call);
		if (response.renewalFailed) {
			// Nothing was sent: an unreachable token endpoint is retried like a read, a refusal is not.
			const wait = response.renewalFailed.retryable ? nextDelayMs(attempt, undefined, Date.now()) : undefined;
			if (wait === undefined) throw renewalError(context.getNode(), call.action, response.renewalFailed, call.itemIndex);
			await sleep(wait);
			continue;
		}
		const succeeded = response.status >= 200 && response.status < 300;
		const json = succeeded ? readJson(response.body) : undefined;
		if (json?.ok) return { value: parseResponse(context, call, schema, json.value, response.redact), headers: response.headers };
		const retryable = response.noAnswer !== undefined || json !== undefined || isRetryableStatus(response.status);
		const delay = retryable ? nextDelayMs(attempt, response.headers['retry-after'], Date.now()) : undefined;
		if (delay === undefined) {
			if (response.noAnswer) throw networkError(context.getNode(), call.action, response.noAnswer, call.itemIndex);
			if (json) throw unexpectedResponse(context.getNode(), call.action, shown(response), call.itemIndex);
			throw apiError(context.getNode(), { ...response, action: call.action, itemIndex: call.itemIndex });
		}
		await sleep(delay);
	}
}

/** Checks a 2xx body against the shape the spec describes; a mismatch shows what came back. */
export function parseResponse<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
	body: unknown,
	redact?: (body: unknown) => unknown,
): T {
	const parsed = schema.safeParse(body);
	if (!parsed.success) throw unexpectedResponse(context.getNode(), call.action, redact ? redact(body) : body, call.itemIndex);
	return parsed.data;
}
