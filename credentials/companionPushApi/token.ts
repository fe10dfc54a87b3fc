import { createHash } from 'crypto';
import type { ICredentialDataDecryptedObject, IDataObject, IHttpRequestHelper } from 'n8n-workflow';

import { checkBaseUrl } from './baseUrl';
import { redactSecrets, shownAddress } from './redaction';

/*
 * The access token: how long it is planned to live, which secrets it was issued for, and its
 * renewal at the token endpoint (the credential's preAuthentication). When the transport renews it:
 * nodes/CompanionPush/transport/tokenRenewal.ts.
 */

/** How long before expiry a token is renewed: 5 minutes of a 1-hour token (the spec renews at
 * about 55 minutes), and the same twelfth of a shorter life (sandbox tokens of a few seconds). */
export function renewalMarginMs(lifetimeSeconds: number): number {
	return Math.min(5 * 60 * 1000, (lifetimeSeconds * 1000) / 12);
}

/** The token lifetimes taken as given (seconds). The spec's token lives one hour; a lifetime the
 * API gives outside this range is clamped into it. Below one second a token cannot outlive the
 * request it is renewed for (0.001 renewed before every request); seconds-long tokens are kept, the
 * sandbox issues them to exercise renewal. Above a day (24 times the spec's hour) nothing is gained
 * and a huge value would be stored as Infinity (JSON's null, read back as "renew now"); a token that
 * really expires earlier is renewed on its 401. */
export const TOKEN_LIFETIME_RANGE_SECONDS = { min: 1, max: 24 * 3600 } as const;

/** The lifetime to plan with: the API's `expires_in` clamped into the range above, or the spec's
 * hour when it gives none that reads as a positive number. */
export function plannedLifetimeSeconds(expiresIn: unknown): number {
	const seconds = Number(expiresIn);
	if (Number.isNaN(seconds) || seconds <= 0) return 3600;
	return Math.min(
		TOKEN_LIFETIME_RANGE_SECONDS.max,
		Math.max(TOKEN_LIFETIME_RANGE_SECONDS.min, seconds),
	);
}

/** Which secrets a token was issued for (a one-way hash, never the secrets themselves). A token is
 * used only with those secrets: after the Client Secret or Refresh Token is edited, the old token
 * is not sent, so the next call renews it and a credential test proves the new secrets. (n8n's
 * tester runs preAuthentication only when the stored token is empty, which an edit does not do.) */
export function secretsFingerprint(credentials: ICredentialDataDecryptedObject): string {
	const parts = [
		credentials.baseUrl,
		credentials.clientId,
		credentials.clientSecret,
		credentials.refreshToken,
	];
	return createHash('sha256')
		.update(parts.map((part) => String(part ?? '').trim()).join('\n'))
		.digest('hex')
		.slice(0, 32);
}

/** How long a renewal's request may take: a request sent with a token to renew leaves after it. */
export const RENEWAL_TIMEOUT_MS = 30_000;

/** Thrown by preAuthentication: the token could not be renewed, so nothing was sent to the API.
 * `retryable` when the token endpoint did not answer or answered 429/5xx; a refusal is final.
 * The transport recognizes it by `name` (n8n wraps it on the way). It never holds a secret. */
/** Why the credential's preAuthentication failed (its TokenRenewalError, which n8n wraps). A
 * refusal (wrong secret, revoked refresh token) is final; an unreachable or busy (429, 5xx)
 * token endpoint is `retryable`. The message never holds a secret. */
export interface RenewalFailure {
	message: string;
	retryable: boolean;
	httpCode?: number;
}

export class TokenRenewalError extends Error {
	constructor(
		message: string,
		readonly retryable: boolean,
		/** The token endpoint's status. Not named httpCode: n8n wraps this error in a NodeApiError,
		 * which reads an httpCode as text (a number there breaks on a 3xx). */
		readonly refusedWithStatus?: number,
	) {
		super(message);
		this.name = 'TokenRenewalError';
	}
}

/** Renews the access token at the token endpoint: what preAuthentication returns, saved by n8n into
 * the credential. Throws a TokenRenewalError without any secret in it. */
export async function renewAccessToken(
	helper: IHttpRequestHelper,
	credentials: ICredentialDataDecryptedObject,
): Promise<ICredentialDataDecryptedObject> {
	const baseUrl = checkBaseUrl(credentials.baseUrl);
	const issuedAt = Date.now();
	let response:
		| { statusCode: number; body: unknown; headers?: Record<string, unknown> }
		| undefined;
	let unreachable = 'network error';
	try {
		response = (await helper.helpers.httpRequest({
			method: 'POST',
			url: `${baseUrl}/auth/oauth/v2/refresh`,
			body: {
				client_id: credentials.clientId,
				client_secret: credentials.clientSecret,
				refresh_token: credentials.refreshToken,
			},
			json: true,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			// Never follow a redirect with the secrets in the body (see the transport's http.ts).
			disableFollowRedirect: true,
			timeout: RENEWAL_TIMEOUT_MS,
		})) as { statusCode: number; body: unknown; headers?: Record<string, unknown> };
	} catch (error) {
		// A network failure: thrown below without the request, whose body holds the secrets.
		unreachable = (error as { code?: string })?.code ?? unreachable;
	}
	if (response === undefined) {
		throw new TokenRenewalError(
			`Could not reach ${baseUrl} to renew the access token (${unreachable}).`,
			true,
		);
	}
	if (response.statusCode >= 300 && response.statusCode < 400) {
		// Origin and path only, secrets hidden: the Location is written by whoever answered.
		const location = response.headers?.location;
		const shown =
			typeof location === 'string'
				? redactSecrets(shownAddress(location), [
						credentials.clientSecret,
						credentials.refreshToken,
					])
				: undefined;
		const where = typeof shown === 'string' ? ` to ${shown.slice(0, 200)}` : '';
		throw new TokenRenewalError(
			`The API answered the token renewal with a redirect (HTTP ${response.statusCode})${where}. Redirects are not followed, so the secrets went nowhere else: check the Base URL (use the address the API is really at).`,
			false,
			response.statusCode,
		);
	}
	if (response.statusCode < 200 || response.statusCode >= 300) {
		throw new TokenRenewalError(
			`The API refused to renew the access token (HTTP ${response.statusCode}). ` +
				(response.statusCode === 400 || response.statusCode === 401 || response.statusCode === 403
					? 'Check the Client ID, Client Secret and Refresh Token; if the credential was deleted in the administration console, create a new one.'
					: 'Check the Base URL, or try again later.'),
			response.statusCode === 429 || response.statusCode >= 500,
			response.statusCode,
		);
	}
	const body = (
		typeof response.body === 'object' && response.body !== null ? response.body : {}
	) as IDataObject;
	const accessToken = body.access_token;
	if (typeof accessToken !== 'string' || accessToken === '') {
		throw new TokenRenewalError(
			'The token endpoint answered without an access_token: check the Base URL.',
			false,
		);
	}
	const lifetime = plannedLifetimeSeconds(body.expires_in);
	return {
		accessToken,
		accessTokenRenewAfter: Math.round(issuedAt + lifetime * 1000 - renewalMarginMs(lifetime)),
		accessTokenIssuedFor: secretsFingerprint(credentials),
	};
}
