import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

import { renewAccessToken, secretsFingerprint } from './companionPushApi/token';

/** The statuses of a redirect a client would follow. */
const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

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
		return await renewAccessToken(this, credentials);
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
