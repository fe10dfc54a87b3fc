import { NodeOperationError } from 'n8n-workflow';
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { checkBaseUrl } from '../../../credentials/companionPushApi/baseUrl';
import { secretsFingerprint } from '../../../credentials/companionPushApi/token';
import type { RenewalFailure } from '../../../credentials/companionPushApi/token';
import { timings, waitFor } from '../common/timings';
import type { Answer } from './answers';
import { CREDENTIAL_TYPE, credentialKey, requestOnce } from './http';
import type { ApiCall, CompanionPushContext } from './http';

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

/** A forced token renewal: the renewed credential data, or why it failed (shared too: a refused
 * secret is asked once). */
export interface RenewalResult {
	renewed?: ICredentialDataDecryptedObject;
	failed?: RenewalFailure;
}

/*
 * Process memory (per process: each queue-mode worker has its own, and a restart empties it):
 * - renewalsInFlight: token renewals under way, per credential: items and polls running at the same
 *   time share one refresh. Safe with several processes: each may renew once per token life; the
 *   renewed token is saved in n8n's database, and a 401 first takes a token another process saved
 *   since, then renews (at most twice per call, for an API whose refresh revokes the previous token).
 * - credentialsRead: the credential as each node run or poll read it last (by its n8n context,
 *   forgotten with it, and read anew when a run or poll starts): read once per run, and again only
 *   after a renewal or a 401, when it may have changed (n8n reads the database and decrypts at every
 *   read). Per run, so another process's renewal is seen by the next run, or at once after a 401.
 */
let renewalsInFlight = new Map<string, Promise<RenewalResult>>();
let credentialsRead = new WeakMap<object, Promise<ICredentialDataDecryptedObject>>();

/** Tests: forgets the renewals under way and the credentials read. */
export function resetTokenRenewals(): void {
	renewalsInFlight = new Map();
	credentialsRead = new WeakMap();
}

/** n8n renews the token only when it is empty or after a 401; this renews it a few minutes
 * before it expires, so a long run never spends a request on an expired token. */
export function tokenNeedsRenewal(
	credentials: ICredentialDataDecryptedObject,
	nowMs: number,
): boolean {
	const renewAfter = Number(credentials.accessTokenRenewAfter);
	if (!credentials.accessToken || !Number.isFinite(renewAfter) || nowMs >= renewAfter) return true;
	// Issued for other secrets (the credential was edited): renew now rather than spend a 401.
	return credentials.accessTokenIssuedFor !== secretsFingerprint(credentials);
}

/** True when the credential data is for the API at `baseUrl`. A token is only ever sent to the Base
 * URL it was issued for: one saved by another run or process after the Base URL was edited, or
 * renewed by a call that read the edited credential, belongs to the new address. */
function issuedFor(credentials: ICredentialDataDecryptedObject, baseUrl: string): boolean {
	try {
		return checkBaseUrl(credentials.baseUrl) === baseUrl;
	} catch {
		return false;
	}
}

/** An answer and the access token it was sent with. */
interface RenewalAttempt {
	answer: Answer;
	token: unknown;
}

/**
 * Credential data with an emptied token, for n8n to renew (see the top of this file). n8n writes the
 * renewed token into it just before it sends the request: `onRenewed` is called with the renewed
 * data then (once the whole write is done), not when the request's answer comes back, so calls that
 * join this renewal need not wait for the renewing call's own answer.
 */
function toRenew(
	credentials: ICredentialDataDecryptedObject,
	onRenewed: (renewed: ICredentialDataDecryptedObject) => void,
) {
	const renewing: ICredentialDataDecryptedObject = { ...credentials };
	let token = '';
	Object.defineProperty(renewing, 'accessToken', {
		enumerable: true,
		configurable: true,
		get: () => token,
		set: (value: string) => {
			token = value;
			// n8n assigns the renewed fields in one Object.assign: report them after it, all set.
			if (value) void Promise.resolve().then(() => onRenewed({ ...renewing }));
		},
	});
	return renewing;
}

/** Sends with a token renewed first; the renewal is shared with concurrent callers of this process. */
async function sendWithRenewedToken(
	context: CompanionPushContext,
	call: ApiCall,
	baseUrl: string,
	credentials: ICredentialDataDecryptedObject,
): Promise<RenewalAttempt> {
	const key = credentialKey(context);
	const renewal = renewalsInFlight.get(key);
	if (renewal) {
		const { renewed, failed } = await renewal;
		if (failed) return { answer: { kind: 'renewalFailed', failure: failed }, token: undefined };
		if (renewed && issuedFor(renewed, baseUrl)) {
			remember(context, renewed);
			return {
				answer: await requestOnce(context, call, baseUrl, credentials, renewed),
				token: renewed.accessToken,
			};
		}
	}
	let finish!: (value: RenewalResult) => void;
	const shared = new Promise<RenewalResult>((resolve) => (finish = resolve));
	renewalsInFlight.set(key, shared);
	const renewing = toRenew(credentials, (renewed) => {
		remember(context, renewed);
		finish({ renewed });
		if (renewalsInFlight.get(key) === shared) renewalsInFlight.delete(key);
	});
	let answer: Answer | undefined;
	try {
		answer = await requestOnce(context, call, baseUrl, credentials, renewing);
		return { answer, token: renewing.accessToken };
	} finally {
		// No token came (the renewal failed, or nothing was sent): joiners learn why, or renew themselves.
		finish({ failed: answer?.kind === 'renewalFailed' ? answer.failure : undefined });
		if (renewalsInFlight.get(key) === shared) renewalsInFlight.delete(key);
	}
}

/** The stored credential when it holds a usable token other than the refused one: a concurrent call
 * or another process renewed it since. Looks twice, a short wait apart. 'moved' when the stored
 * credential is now for another Base URL (it was edited during this run): its token is not sent
 * here, and renewing with this run's copy would save the old address over the edit. */
async function tokenSavedSince(
	context: CompanionPushContext,
	call: ApiCall,
	baseUrl: string,
	refusedToken: unknown,
): Promise<ICredentialDataDecryptedObject | 'moved' | undefined> {
	const key = credentialKey(context);
	const { min, max } = timings().foreignRenewalWaitMs;
	for (const waitMs of [0, min + Math.random() * (max - min)]) {
		// A renewal of this process is under way: join it rather than read or wait.
		if (renewalsInFlight.has(key)) return undefined;
		if (waitMs > 0) await waitFor(waitMs);
		const stored = await context.getCredentials(CREDENTIAL_TYPE, call.itemIndex);
		if (!issuedFor(stored, baseUrl)) return 'moved';
		const usable =
			stored.accessToken &&
			stored.accessToken !== refusedToken &&
			!tokenNeedsRenewal(stored, Date.now());
		if (usable) {
			remember(context, stored);
			return stored;
		}
	}
	return undefined;
}

/** A node run or a poll starts: the credential is read anew at its first call (n8n keeps one poll
 * context for every poll of an activation, and an edited credential must be seen by the next poll). */
export function readCredentialsAnew(context: CompanionPushContext): void {
	credentialsRead.delete(context);
}

/** The credential as this node run or poll read it (once; see credentialsRead). */
async function credentialsOf(
	context: CompanionPushContext,
	itemIndex?: number,
): Promise<ICredentialDataDecryptedObject> {
	let read = credentialsRead.get(context);
	if (!read) {
		read = context.getCredentials(CREDENTIAL_TYPE, itemIndex);
		credentialsRead.set(context, read);
		read.catch(() => credentialsRead.delete(context));
	}
	return await read;
}

/** What this run uses from now on: the credential with a renewed token, or as saved since. */
function remember(
	context: CompanionPushContext,
	credentials: ICredentialDataDecryptedObject,
): void {
	credentialsRead.set(context, Promise.resolve(credentials));
}

function isUnauthorized(answer: Answer): boolean {
	return answer.kind === 'answer' && answer.status === 401;
}

/**
 * One HTTP exchange with a usable token: the token is renewed before expiry, and a 401 first takes
 * a token another call or process saved since, and only then renews (at most twice per call).
 * Returns any status as an answer. A token is only sent to the Base URL it was issued for.
 */
export async function exchange(context: CompanionPushContext, call: ApiCall): Promise<Answer> {
	const credentials = await credentialsOf(context, call.itemIndex);
	let baseUrl: string;
	try {
		baseUrl = checkBaseUrl(credentials.baseUrl);
	} catch (error) {
		throw new NodeOperationError(context.getNode(), (error as Error).message, {
			itemIndex: call.itemIndex,
		});
	}
	let renewals = 0;
	let attempt: RenewalAttempt;
	if (tokenNeedsRenewal(credentials, Date.now())) {
		renewals++;
		attempt = await sendWithRenewedToken(context, call, baseUrl, credentials);
	} else {
		// The token read above is the one sent (n8n would read the credential again otherwise).
		attempt = {
			answer: await requestOnce(context, call, baseUrl, credentials, credentials),
			token: credentials.accessToken,
		};
	}
	for (let tokens = 1; isUnauthorized(attempt.answer) && tokens < MAX_TOKENS_PER_CALL; tokens++) {
		const saved = await tokenSavedSince(context, call, baseUrl, attempt.token);
		// The Base URL was edited since this run read the credential: the refusal stands (the next run
		// reads the edited credential).
		if (saved === 'moved') break;
		if (saved) {
			attempt = {
				answer: await requestOnce(context, call, baseUrl, saved, saved),
				token: saved.accessToken,
			};
		} else if (renewals < MAX_RENEWALS_PER_CALL) {
			renewals++;
			attempt = await sendWithRenewedToken(context, call, baseUrl, credentials);
		} else {
			break;
		}
	}
	return attempt.answer;
}
