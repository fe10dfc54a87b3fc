import { NodeOperationError, sleep } from 'n8n-workflow';
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { checkBaseUrl, secretsFingerprint } from '../../../credentials/CompanionPushApi.credentials';
import { CREDENTIAL_TYPE, credentialKey, processState, timings } from '../processState';
import type { RenewalResult } from '../processState';
import { requestOnce } from './http';
import type { Answer, ApiCall, CompanionPushContext } from './http';

/*
 * The access token: renewed a few minutes before it expires, and after a 401.
 *
 * What this relies on in n8n-core's `httpRequestWithAuthentication` (the same in n8n 1.x and 2.x):
 * - The emptied token: when the credential data handed to the helper (`credentialsDecrypted`) has
 *   an empty expirable property (`accessToken`), n8n calls the credential's `preAuthentication`,
 *   saves what it returns into the stored credential (n8n's database, encrypted), and writes it
 *   into the object it was handed before sending. So renewing is "send with an emptied token", and
 *   the renewed token is read back from that object.
 * - The 401 path: n8n renews and retries by itself only when the request throws on a 401. With
 *   `ignoreHttpStatusErrors` (see http.ts) nothing throws, so the 401 is handled here instead, the
 *   same way in every n8n version, with a bound on renewals.
 * - The saved token: `getCredentials` reads the stored credential, so a token another call or
 *   process renewed and saved is seen by the next read.
 */

/** Renewals one call may make or join. One is the rule; the second is for an API where a refresh
 * revokes the previous access token: another process (a queue-mode worker) may renew right after
 * this call did, revoking its fresh token, and n8n's credential store keeps whichever of the two
 * was saved last (it has no lock), so the stored token may be the revoked one. */
const MAX_RENEWALS_PER_CALL = 2;
/** Tokens one call may be sent with: the stored one, others saved meanwhile, its renewals. */
const MAX_TOKENS_PER_CALL = 5;

/** n8n renews the token only when it is empty or after a 401; this renews it a few minutes
 * before it expires, so a long run never spends a request on an expired token. */
export function tokenNeedsRenewal(credentials: ICredentialDataDecryptedObject, nowMs: number): boolean {
	const renewAfter = Number(credentials.accessTokenRenewAfter);
	if (!credentials.accessToken || !Number.isFinite(renewAfter) || nowMs >= renewAfter) return true;
	// Issued for other secrets (the credential was edited): renew now rather than spend a 401.
	return credentials.accessTokenIssuedFor !== secretsFingerprint(credentials);
}

/** An answer and the access token it was sent with. */
interface Attempt {
	answer: Answer;
	token: unknown;
}

/** Sends with a token renewed first; the renewal is shared with concurrent callers of this process. */
async function sendWithRenewedToken(
	context: CompanionPushContext,
	call: ApiCall,
	baseUrl: string,
	credentials: ICredentialDataDecryptedObject,
): Promise<Attempt> {
	const key = credentialKey(context);
	const renewal = processState.renewalsInFlight.get(key);
	if (renewal) {
		const { renewed, failed } = await renewal;
		if (failed) return { answer: { kind: 'renewalFailed', failure: failed }, token: undefined };
		if (renewed) return { answer: await requestOnce(context, call, baseUrl, credentials, renewed), token: renewed.accessToken };
	}
	const renewing: ICredentialDataDecryptedObject = { ...credentials, accessToken: '' };
	let finish!: (value: RenewalResult) => void;
	processState.renewalsInFlight.set(key, new Promise((resolve) => (finish = resolve)));
	let answer: Answer | undefined;
	try {
		answer = await requestOnce(context, call, baseUrl, credentials, renewing);
		return { answer, token: renewing.accessToken };
	} finally {
		finish({ renewed: renewing.accessToken ? renewing : undefined, failed: answer?.kind === 'renewalFailed' ? answer.failure : undefined });
		processState.renewalsInFlight.delete(key);
	}
}

/** The stored credential when it holds a usable token other than the refused one: a concurrent call
 * or another process renewed it since. Looks twice, a short wait apart. */
async function tokenSavedSince(
	context: CompanionPushContext,
	call: ApiCall,
	refusedToken: unknown,
): Promise<ICredentialDataDecryptedObject | undefined> {
	const key = credentialKey(context);
	const { min, max } = timings().foreignRenewalWaitMs;
	for (const waitMs of [0, min + Math.random() * (max - min)]) {
		// A renewal of this process is under way: join it rather than read or wait.
		if (processState.renewalsInFlight.has(key)) return undefined;
		if (waitMs > 0) await sleep(waitMs);
		const stored = await context.getCredentials(CREDENTIAL_TYPE, call.itemIndex);
		if (stored.accessToken && stored.accessToken !== refusedToken && !tokenNeedsRenewal(stored, Date.now())) return stored;
	}
	return undefined;
}

function isUnauthorized(answer: Answer): boolean {
	return answer.kind === 'answer' && answer.status === 401;
}

/**
 * One HTTP exchange with a usable token: the token is renewed before expiry, and a 401 first takes
 * a token another call or process saved since, and only then renews (at most twice per call).
 * Returns any status as an answer.
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
		attempt = { answer: await requestOnce(context, call, baseUrl, credentials, credentials), token: credentials.accessToken };
	}
	for (let tokens = 1; isUnauthorized(attempt.answer) && tokens < MAX_TOKENS_PER_CALL; tokens++) {
		const saved = await tokenSavedSince(context, call, attempt.token);
		if (saved) {
			attempt = { answer: await requestOnce(context, call, baseUrl, saved, saved), token: saved.accessToken };
		} else if (renewals < MAX_RENEWALS_PER_CALL) {
			renewals++;
			attempt = await sendWithRenewedToken(context, call, baseUrl, credentials);
		} else {
			break;
		}
	}
	return attempt.answer;
}
