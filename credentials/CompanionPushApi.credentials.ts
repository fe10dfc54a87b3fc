import { createHash } from 'crypto';
import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IDataObject,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

import { redactSecrets, shownAddress } from '../nodes/CompanionPush/transport/redaction';

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

/** The statuses of a redirect a client would follow. */
const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);
/** 127.0.0.0/8 as an IPv4 literal only: a name such as `127.0.0.1.example.com` is not loopback. */
const LOOPBACK_IPV4 = /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** Hides a user and password written into an address (`https://user:pass@host`), for messages. */
export function withoutUserInfo(text: string): string {
	return text.replace(/\/\/[^/\s@]*@/g, '//');
}

/** The API needs https (its calls carry secrets); plain http is accepted only on loopback, for the
 * sandbox. A user or password in the address is refused: the credential's secrets have their own
 * fields, and an address is shown in messages. */
export function checkBaseUrl(baseUrl: unknown): string {
	const text = typeof baseUrl === 'string' ? baseUrl.trim().replace(/\/+$/, '') : '';
	let url: URL;
	try {
		url = new URL(text);
	} catch {
		throw new Error(
			`Base URL "${withoutUserInfo(text).slice(0, 200)}" is not a valid URL. Use the API address you were given, e.g. https://api.example.com`,
		);
	}
	if (url.username !== '' || url.password !== '') {
		throw new Error(
			`Base URL must not contain a user name or password (got "${url.protocol}//…@${url.host}"): give only the API address, e.g. https://api.example.com`,
		);
	}
	const isLoopback = LOOPBACK_HOSTS.has(url.hostname) || LOOPBACK_IPV4.test(url.hostname);
	if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback)) {
		throw new Error(
			`Base URL must start with https:// (got "${url.protocol}//${url.host}"). Plain http is only accepted for a local sandbox on 127.0.0.1 or localhost.`,
		);
	}
	return text;
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

export class CompanionPushApi implements ICredentialType {
	name = 'companionPushApi';

	displayName = 'Companion Push API';

	icon = {
		light: 'file:../icons/companionPush.svg',
		dark: 'file:../icons/companionPush.dark.svg',
	} as const;

	documentationUrl =
		'https://github.com/n8n-nodes-companion-push/n8n-nodes-companion-push#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.example.com',
			description:
				'Address of the Push Notification API, without a trailing slash. Must be https (http is accepted only for a local sandbox on 127.0.0.1).',
		},
		{
			displayName: 'Client ID',
			name: 'clientId',
			type: 'string',
			default: '',
			required: true,
			description:
				'Shown once when an administrator creates the service credential (administration console, API integrations menu)',
		},
		{
			displayName: 'Client Secret',
			name: 'clientSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'Shown once with the Client ID. If it is lost, create a new service credential.',
		},
		{
			displayName: 'Refresh Token',
			name: 'refreshToken',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'Shown once with the Client ID. It does not change; n8n uses it to renew the one-hour access token by itself.',
		},
		{
			// Filled and renewed by preAuthentication; n8n stores it encrypted with the credential.
			displayName: 'Access Token',
			name: 'accessToken',
			type: 'hidden',
			typeOptions: { expirable: true, password: true },
			default: '',
		},
		{
			// Epoch milliseconds after which the transport renews the token before using it.
			displayName: 'Access Token Renew After',
			name: 'accessTokenRenewAfter',
			type: 'hidden',
			typeOptions: { password: true },
			default: 0,
		},
		{
			// secretsFingerprint of the secrets the access token was issued for.
			displayName: 'Access Token Issued For',
			name: 'accessTokenIssuedFor',
			type: 'hidden',
			typeOptions: { password: true },
			default: '',
		},
	];

	/** Called by n8n when the access token is empty or a call answered 401 (and forced by the
	 * transport when the token is close to expiry). Its output is saved into the credential. */
	async preAuthentication(this: IHttpRequestHelper, credentials: ICredentialDataDecryptedObject) {
		const baseUrl = checkBaseUrl(credentials.baseUrl);
		const issuedAt = Date.now();
		let response: { statusCode: number; body: unknown; headers?: Record<string, unknown> };
		try {
			response = (await this.helpers.httpRequest({
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
			// A network failure: rethrow without the request, whose body holds the secrets.
			const code = (error as { code?: string })?.code ?? 'network error';
			throw new TokenRenewalError(
				`Could not reach ${baseUrl} to renew the access token (${code}).`,
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

	/** Adds the bearer token, when it was issued for the secrets now in the credential; otherwise an
	 * empty one, which the API answers with 401, and n8n renews the token with the new secrets. */
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	) {
		const token =
			credentials.accessTokenIssuedFor === secretsFingerprint(credentials)
				? credentials.accessToken
				: '';
		return {
			...requestOptions,
			headers: { ...requestOptions.headers, Authorization: `Bearer ${String(token ?? '')}` },
		};
	}

	// A token issued for other secrets is not sent (see authenticate): the API answers 401, n8n
	// renews the token with the secrets under test, so a passing test proves all three.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/user-device/users',
			method: 'GET',
			// Like every other call: followed, n8n would carry the Bearer token to wherever the redirect
			// points (another host, plain http too). Not followed, a redirect fails the test (rules below).
			disableFollowRedirect: true,
		},
		rules: REDIRECT_STATUSES.map((status) => ({
			type: 'responseCode' as const,
			properties: {
				value: status,
				message: `The API answered with a redirect (HTTP ${status}). Redirects are not followed, so the token went nowhere else: check the Base URL (use the address the API is really at).`,
			},
		})),
	};
}
