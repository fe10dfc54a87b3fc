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

import type { RenewalFailure } from './errors';

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

/** What one request came back with: an answer (any status), no answer at all (connection failed,
 * reset, timed out), or nothing sent because the access token could not be renewed. */
export type Answer =
	| {
			kind: 'answer';
			status: number;
			body: unknown;
			headers: Record<string, unknown>;
			/** Hides the credential's secrets in a body about to be shown in an error. */
			redact: (body: unknown) => unknown;
	  }
	| { kind: 'noAnswer'; /** ECONNRESET, ETIMEDOUT ... */ code: string }
	| { kind: 'renewalFailed'; failure: RenewalFailure };

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

/*
 * What lives in process memory (module state, one copy per n8n process) and what it assumes:
 * - `renewalsInFlight` (here): forced token renewals under way, per credential, so that items and
 *   polls running at the same time in this process share one refresh (no refresh storm). With
 *   several processes (queue mode workers) each may renew once per token life: the renewed token
 *   is saved in n8n's database, and a 401 first takes a token another process saved since, then
 *   renews (twice at most, for an API whose refresh revokes the previous token; see exchange).
 * - `knownSendIds` (safeSend.ts): ids of sends this process made lately, per credential, so a
 *   lookup after a lost answer never takes an earlier send of this run for its own. Only sends of
 *   this process can be in flight in this run, so other processes need not see it.
 * - `paces` (pace.ts): how many requests of a credential may be in flight after 429s. Each
 *   process adapts to the service on its own.
 * - `identicalSends` (safeSend.ts) and `storeQueues` (idempotencyKeys.ts): queues that keep
 *   identical sends, and claims of Idempotency Keys, one at a time in this process.
 * - `polledContexts` (trigger/poll.ts): the poll contexts n8n has polled with, to tell the poll
 *   n8n runs while activating the trigger. Triggers run on the main process only.
 * Nothing here is needed for correctness across restarts: a restart empties it, as it should. What
 * must survive (sends of earlier tries, Idempotency Keys) lives in n8n's execution data and database.
 */

// Forced renewals under way, per credential. A renewal ends with the renewed credential data, or
// with why it failed (shared too: a refused secret is asked once).
interface RenewalResult {
	renewed?: ICredentialDataDecryptedObject;
	failed?: RenewalFailure;
}
const renewalsInFlight = new Map<string, Promise<RenewalResult>>();

export function credentialKey(context: CompanionPushContext): string {
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
): Promise<Answer> {
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
			kind: 'answer',
			status: response.statusCode,
			body: succeeded ? response.body : redact(response.body),
			headers: response.headers ?? {},
			redact,
		};
	} catch (error) {
		// The token could not be renewed: nothing was sent. Keep only the credential's message.
		const failure = renewalFailure(error);
		if (failure) return { kind: 'renewalFailed', failure };
		// The error n8n wraps here still holds the request (and its headers): keep only the code.
		return { kind: 'noAnswer', code: errorCode(error) };
	}
}

/** An answer and the access token it was sent with. */
interface Attempt {
	answer: Answer;
	token: unknown;
}

/** Sends with a token renewed first; the renewal is shared with concurrent callers. */
async function sendWithRenewedToken(
	context: CompanionPushContext,
	call: ApiCall,
	baseUrl: string,
	credentials: ICredentialDataDecryptedObject,
): Promise<Attempt> {
	const key = credentialKey(context);
	const renewal = renewalsInFlight.get(key);
	if (renewal) {
		const { renewed, failed } = await renewal;
		if (failed) return { answer: { kind: 'renewalFailed', failure: failed }, token: undefined };
		if (renewed) return { answer: await sendOnce(context, call, baseUrl, credentials, renewed), token: renewed.accessToken };
	}
	// An emptied token makes n8n call the credential's preAuthentication, save the new token, and
	// write it into this object before sending.
	const renewing: ICredentialDataDecryptedObject = { ...credentials, accessToken: '' };
	let finish!: (value: RenewalResult) => void;
	renewalsInFlight.set(key, new Promise((resolve) => (finish = resolve)));
	let answer: Answer | undefined;
	try {
		answer = await sendOnce(context, call, baseUrl, credentials, renewing);
		return { answer, token: renewing.accessToken };
	} finally {
		finish({ renewed: renewing.accessToken ? renewing : undefined, failed: answer?.kind === 'renewalFailed' ? answer.failure : undefined });
		renewalsInFlight.delete(key);
	}
}

/** Renewals one call may make or join. One is the rule; the second is for an API where a refresh
 * revokes the previous access token: another process (a queue-mode worker) may renew right after
 * this call did, revoking its fresh token, and n8n's credential store keeps whichever of the two
 * was saved last (it has no lock), so the stored token may be the revoked one. */
const MAX_RENEWALS_PER_CALL = 2;
/** Tokens one call may be sent with: the stored one, others saved meanwhile, its renewals. */
const MAX_TOKENS_PER_CALL = 5;
/** After a 401, how long to give a renewal under way in another process to be saved before renewing
 * here (jittered, so processes refused at the same moment don't renew in step). A saved renewal is a
 * refresh plus one database write. Mutable only so long fault tests can shorten it. */
export const FOREIGN_RENEWAL_WAIT_MS = { min: 50, max: 150 };

/** The stored credential when it holds a usable token other than the refused one: a concurrent call
 * or another process renewed it since. Looks twice, a short wait apart. */
async function tokenSavedSince(
	context: CompanionPushContext,
	call: ApiCall,
	refusedToken: unknown,
): Promise<ICredentialDataDecryptedObject | undefined> {
	const key = credentialKey(context);
	for (const waitMs of [0, FOREIGN_RENEWAL_WAIT_MS.min + Math.random() * (FOREIGN_RENEWAL_WAIT_MS.max - FOREIGN_RENEWAL_WAIT_MS.min)]) {
		// A renewal of this process is under way: join it rather than read or wait.
		if (renewalsInFlight.has(key)) return undefined;
		if (waitMs > 0) await sleep(waitMs);
		const stored = await context.getCredentials(CREDENTIAL_TYPE, call.itemIndex);
		if (stored.accessToken && stored.accessToken !== refusedToken && !tokenNeedsRenewal(stored, Date.now())) return stored;
	}
	return undefined;
}

/**
 * One HTTP exchange through n8n's authenticated request helper: the token is renewed before
 * expiry, and a 401 first takes a token another call or process saved since, and only then renews
 * (at most twice per call). Returns any status as an answer.
 */
export async function exchange(context: CompanionPushContext, call: ApiCall): Promise<Answer> {
	const credentials = await context.getCredentials(CREDENTIAL_TYPE, call.itemIndex);
	let baseUrl: string;
	try {
		baseUrl = checkBaseUrl(credentials.baseUrl);
	} catch (error) {
		throw new NodeOperationError(context.getNode(), (error as Error).message, { itemIndex: call.itemIndex });
	}
	let renewals = 0;
	let attempt: Attempt;
	if (tokenNeedsRenewal(credentials, Date.now())) {
		renewals++;
		attempt = await sendWithRenewedToken(context, call, baseUrl, credentials);
	} else {
		// The token read above is the one sent (n8n would read the credential again otherwise).
		attempt = { answer: await sendOnce(context, call, baseUrl, credentials, credentials), token: credentials.accessToken };
	}
	for (let tokens = 1; isUnauthorized(attempt.answer) && tokens < MAX_TOKENS_PER_CALL; tokens++) {
		const saved = await tokenSavedSince(context, call, attempt.token);
		if (saved) {
			attempt = { answer: await sendOnce(context, call, baseUrl, saved, saved), token: saved.accessToken };
		} else if (renewals < MAX_RENEWALS_PER_CALL) {
			renewals++;
			attempt = await sendWithRenewedToken(context, call, baseUrl, credentials);
		} else {
			break;
		}
	}
	return attempt.answer;
}

function isUnauthorized(answer: Answer): boolean {
	return answer.kind === 'answer' && answer.status === 401;
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
