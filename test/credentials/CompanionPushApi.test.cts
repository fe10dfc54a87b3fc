/**
 * The credential "Companion Push API": base URL check, token renewal (preAuthentication), the
 * Bearer header, the credential test, and clear errors without secrets. Run against the sandbox,
 * both directly (the exact refresh request) and the way n8n runs it (through a real node context).
 */
import { Workflow } from 'n8n-workflow';
import type {
	ICredentialDataDecryptedObject,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
} from 'n8n-workflow';

import { CompanionPushApi } from '../../credentials/CompanionPushApi.credentials';
import { checkBaseUrl } from '../../credentials/companionPushApi/baseUrl';
import {
	plannedLifetimeSeconds,
	renewalMarginMs,
	secretsFingerprint,
} from '../../credentials/companionPushApi/token';
import { listActiveUserIds } from '../../nodes/CompanionPush/transport';
import {
	ACTIVE_USERS,
	count,
	credentialData,
	errorInNode,
	expectNoSecret,
	fakeStore,
	logOf,
	nodeTypes,
	REFRESH,
	secretsOf,
	storeFor,
	TRANSPORT_SANDBOX,
	useFakeApis,
	useSandbox,
	useTestSandboxes,
	valueInNode,
} from '../harness/index.cts';
import type { FakeApi } from '../harness/index.cts';

const credentialType = new CompanionPushApi();

/** An IHttpRequestHelper whose httpRequest really calls the sandbox (with fetch) and records each request. */
function recordingHelper() {
	const requests: IHttpRequestOptions[] = [];
	const helper = {
		helpers: {
			httpRequest: async (options: IHttpRequestOptions) => {
				requests.push(structuredClone(options));
				const response = await fetch(options.url, {
					method: options.method,
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify(options.body),
				});
				const text = await response.text();
				let body: unknown = text;
				try {
					body = JSON.parse(text);
				} catch {
					// text
				}
				return { statusCode: response.status, body, headers: Object.fromEntries(response.headers) };
			},
		},
	} as unknown as IHttpRequestHelper;
	return { helper, requests };
}

function preAuthenticate(helper: IHttpRequestHelper, data: ICredentialDataDecryptedObject) {
	return credentialType.preAuthentication!.call(helper, data) as Promise<{
		accessToken: string;
		accessTokenRenewAfter: number;
		accessTokenIssuedFor: string;
	}>;
}

describe('checkBaseUrl: https required, plain http only on loopback', () => {
	test.each([
		['https://api.example.com', 'https://api.example.com'],
		['https://api.example.com/', 'https://api.example.com'],
		['  https://api.example.com/v1//  ', 'https://api.example.com/v1'],
		['http://127.0.0.1:4010', 'http://127.0.0.1:4010'],
		['http://127.8.9.10:4010/', 'http://127.8.9.10:4010'],
		['http://localhost:4010', 'http://localhost:4010'],
		['http://[::1]:4010', 'http://[::1]:4010'],
	])('accepts %j as %j', (input, expected) => {
		expect(checkBaseUrl(input)).toBe(expected);
	});

	test.each([
		['http://api.example.com', /must start with https:\/\//],
		['http://10.0.0.5:4010', /must start with https:\/\//],
		['http://127.0.0.1.attacker.example', /must start with https:\/\//],
		['http://127.evil.example', /must start with https:\/\//],
		['http://localhost.attacker.example', /must start with https:\/\//],
		['ftp://127.0.0.1', /must start with https:\/\//],
		['ws://localhost:4010', /must start with https:\/\//],
		['api.example.com', /not a valid URL/],
		['', /not a valid URL/],
		[undefined, /not a valid URL/],
	])('rejects %j', (input, message) => {
		expect(() => checkBaseUrl(input)).toThrow(message);
	});

	test.each([
		'https://ops:s3cr3t-pass@api.example.com',
		'https://s3cr3t-pass@api.example.com/v1',
		'http://ops:s3cr3t-pass@127.0.0.1:4010',
		'ht tp://ops:s3cr3t-pass@api example.com',
	])('rejects a user or password in %j without showing it', (input) => {
		let message = '';
		try {
			checkBaseUrl(input);
		} catch (error) {
			message = (error as Error).message;
		}
		expect(message).toMatch(/^Base URL /);
		expect(message).not.toContain('s3cr3t-pass');
		expect(message).not.toContain('ops:');
	});
});

describe('renewalMarginMs: five minutes of a one-hour token, a twelfth of a shorter one', () => {
	test.each([
		[3600, 300_000],
		[7200, 300_000],
		[6, 500],
		[60, 5_000],
		[1200, 100_000],
	])('life %i s -> %i ms', (life, margin) => {
		expect(renewalMarginMs(life)).toBe(margin);
	});
});

describe('the credential against the sandbox', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, resetBeforeEach: true });
	const sandboxes = useTestSandboxes();

	test('preAuthentication sends one refresh with exactly client_id, client_secret and refresh_token', async () => {
		const { helper, requests } = recordingHelper();
		const data = credentialData(sandbox) as ICredentialDataDecryptedObject;
		const before = Date.now();
		const output = await preAuthenticate(helper, data);
		const after = Date.now();

		expect(requests).toHaveLength(1);
		expect(requests[0].method).toBe('POST');
		expect(requests[0].url).toBe(`${sandbox.baseUrl}/auth/oauth/v2/refresh`);
		expect(requests[0].body).toEqual({
			client_id: sandbox.orgs.primary.clientId,
			client_secret: sandbox.orgs.primary.clientSecret,
			refresh_token: sandbox.orgs.primary.refreshToken,
		});
		expect(count(sandbox, REFRESH)).toBe(1);
		expect(logOf(sandbox, REFRESH)[0].status).toBe(200);

		// A one-hour token is renewed 5 minutes before it expires.
		expect(Object.keys(output).sort()).toEqual([
			'accessToken',
			'accessTokenIssuedFor',
			'accessTokenRenewAfter',
		]);
		expect(output.accessTokenIssuedFor).toBe(secretsFingerprint(credentialData(sandbox)));
		expect(output.accessToken).toMatch(/^\S{16,}$/);
		expect(output.accessTokenRenewAfter).toBeGreaterThanOrEqual(before + 3_600_000 - 300_000);
		expect(output.accessTokenRenewAfter).toBeLessThanOrEqual(after + 3_600_000 - 300_000);
	});

	test('a base URL with a trailing slash still reaches the refresh path', async () => {
		const { helper, requests } = recordingHelper();
		await preAuthenticate(helper, { ...credentialData(sandbox), baseUrl: `${sandbox.baseUrl}/` });
		expect(requests[0].url).toBe(`${sandbox.baseUrl}/auth/oauth/v2/refresh`);
		expect(logOf(sandbox, REFRESH).map((entry) => entry.status)).toEqual([200]);
	});

	test('a short token life renews a twelfth of the life early', async () => {
		sandbox.configure({ tokenLifetimeSeconds: 6 });
		const { helper } = recordingHelper();
		const before = Date.now();
		const output = await preAuthenticate(helper, credentialData(sandbox));
		const after = Date.now();
		expect(output.accessTokenRenewAfter).toBeGreaterThanOrEqual(before + 6_000 - 500);
		expect(output.accessTokenRenewAfter).toBeLessThanOrEqual(after + 6_000 - 500);
	});

	test('inside n8n: the stored token and renewal time are written back once, and the Bearer header is accepted', async () => {
		const store = storeFor(sandbox);
		const before = Date.now();
		const ids = await valueInNode(store, (context) => listActiveUserIds(context));
		const after = Date.now();

		expect(ids.length).toBeGreaterThan(0);
		const stored = store.get();
		expect(stored.writes).toBe(1);
		expect(stored.data.accessToken).toMatch(/^\S{16,}$/);
		expect(stored.data.accessTokenRenewAfter).toBeGreaterThanOrEqual(before + 3_300_000);
		expect(stored.data.accessTokenRenewAfter).toBeLessThanOrEqual(after + 3_300_000);
		// The secrets stay as they were.
		expect(stored.data.clientSecret).toBe(sandbox.orgs.primary.clientSecret);
		expect(stored.data.refreshToken).toBe(sandbox.orgs.primary.refreshToken);

		const refresh = logOf(sandbox, REFRESH);
		expect(refresh).toHaveLength(1);
		expect(Object.keys(refresh[0].body as object).sort()).toEqual([
			'client_id',
			'client_secret',
			'refresh_token',
		]);
		expect((refresh[0].body as Record<string, unknown>).client_id).toBe(
			sandbox.orgs.primary.clientId,
		);
		const api = logOf(sandbox, ACTIVE_USERS);
		expect(api.map((entry) => [entry.authorization, entry.status])).toEqual([['valid', 200]]);
	});

	test('authenticate adds Authorization: Bearer <accessToken> for the secrets the token was issued for', async () => {
		const data = { ...credentialData(sandbox), accessToken: 'tok-123' };
		const issued = { ...data, accessTokenIssuedFor: secretsFingerprint(data) };
		const options = await credentialType.authenticate(issued, {
			url: '/x',
			headers: { accept: 'application/json' },
		});
		expect(options.headers).toEqual({
			accept: 'application/json',
			Authorization: 'Bearer tok-123',
		});
	});

	test('after the Client Secret is edited, the stored token is not sent: the API refuses, so a test proves the new secret', async () => {
		const { helper } = recordingHelper();
		const stored = {
			...credentialData(sandbox),
			...(await preAuthenticate(helper, credentialData(sandbox))),
		};
		const edited = { ...stored, clientSecret: 'cps_edited_secret_0123456789' };
		const sameSecrets = await credentialType.authenticate(stored, { url: '/x' });
		const editedSecrets = await credentialType.authenticate(edited, { url: '/x' });
		expect(sameSecrets.headers).toEqual({ Authorization: `Bearer ${stored.accessToken}` });
		expect(editedSecrets.headers).toEqual({ Authorization: 'Bearer ' });
		const response = await fetch(`${sandbox.baseUrl}/user-device/users`, {
			headers: { authorization: 'Bearer ' },
		});
		expect(response.status).toBe(401);
		expect(secretsFingerprint(edited)).not.toBe(stored.accessTokenIssuedFor);
	});

	test('without the Bearer header the API refuses: the header is what authenticates', async () => {
		// The same GET with an empty token header value: proves the sandbox checks what authenticate adds.
		const response = await fetch(`${sandbox.baseUrl}/user-device/users`, {
			headers: { authorization: 'Bearer ' },
		});
		expect(response.status).toBe(401);
	});

	describe('the credential test, run as n8n runs it: preAuthentication, then the test request', () => {
		async function runCredentialTest(data: ICredentialDataDecryptedObject) {
			const { helper } = recordingHelper();
			const output = await preAuthenticate(helper, data);
			const credentials = { ...data, ...output };
			const request = credentialType.test.request;
			const url = `${resolveWithCredentials(request.baseURL!, credentials)}${request.url}`;
			const authorization = (await credentialType.authenticate(credentials, { url })).headers
				?.Authorization;
			const response = await fetch(url, {
				method: request.method,
				headers: { authorization: String(authorization) },
			});
			return { url, status: response.status };
		}

		test('the request is GET {baseUrl}/user-device/users (no double slash), and it passes with good secrets', async () => {
			expect(credentialType.test.request).toMatchObject({
				url: '/user-device/users',
				method: 'GET',
			});
			const result = await runCredentialTest({
				...credentialData(sandbox),
				baseUrl: `${sandbox.baseUrl}/`,
			});
			expect(result).toEqual({ url: `${sandbox.baseUrl}/user-device/users`, status: 200 });
			expect(
				logOf(sandbox).map((entry) => [entry.endpoint, entry.status, entry.authorization]),
			).toEqual([
				[REFRESH, 200, 'missing'],
				[ACTIVE_USERS, 200, 'valid'],
			]);
		});

		test('it fails on a wrong client secret before the test request is made', async () => {
			await expect(
				runCredentialTest({
					...credentialData(sandbox),
					clientSecret: 'cps_wrong_secret_0123456789',
				}),
			).rejects.toThrow(
				/refused to renew the access token \(HTTP 401\).*Client ID, Client Secret and Refresh Token/,
			);
			expect(count(sandbox, ACTIVE_USERS)).toBe(0);
		});
	});

	describe('clear errors without secrets', () => {
		test('a wrong client secret: the error says to check the secrets, and shows none', async () => {
			const wrongSecret = 'cps_wrong_secret_0123456789abcdef';
			const { helper } = recordingHelper();
			const error = await preAuthenticate(helper, {
				...credentialData(sandbox),
				clientSecret: wrongSecret,
			}).catch((e) => e);
			expect(error).toBeInstanceOf(Error);
			expect(error.message).toMatch(/refused to renew the access token \(HTTP 401\)/);
			expect(error.message).toMatch(/Check the Client ID, Client Secret and Refresh Token/);
			expectNoSecret(error, [wrongSecret, ...secretsOf(sandbox)]);
		});

		test('a revoked refresh token: same clear error, no secret', async () => {
			sandbox.revokeRefreshToken(sandbox.orgs.primary.clientId);
			const { helper } = recordingHelper();
			const error = await preAuthenticate(helper, credentialData(sandbox)).catch((e) => e);
			expect(error.message).toMatch(/refused to renew the access token \(HTTP 401\)/);
			expectNoSecret(error, secretsOf(sandbox));
		});

		test('an unreachable base URL: says so, no secret', async () => {
			const closed = await sandboxes.start(TRANSPORT_SANDBOX);
			const baseUrl = closed.baseUrl;
			await closed.stop();
			const { helper } = recordingHelper();
			const error = await preAuthenticate(helper, { ...credentialData(sandbox), baseUrl }).catch(
				(e) => e,
			);
			expect(error.message).toMatch(
				new RegExp(`Could not reach ${baseUrl.replace(/[.]/g, '\\.')} to renew the access token`),
			);
			expectNoSecret(error, secretsOf(sandbox));
		});

		test('plain http to a non-loopback host: refused before any secret is sent', async () => {
			const { helper, requests } = recordingHelper();
			await expect(
				preAuthenticate(helper, { ...credentialData(sandbox), baseUrl: 'http://api.example.com' }),
			).rejects.toThrow(/must start with https:\/\//);
			expect(requests).toHaveLength(0);
		});

		test('inside n8n, a wrong secret fails the call with that clear error after one refresh, and the API is not called', async () => {
			const store = storeFor(sandbox, {
				overrides: { clientSecret: 'cps_wrong_secret_0123456789abcdef' },
			});
			const error = await errorInNode(store, (context) => listActiveUserIds(context));
			expect(error.message).toMatch(/refused to renew the access token \(HTTP 401\)/);
			expect(`${error.message} ${error.description ?? ''}`).toMatch(
				/Client ID, Client Secret and Refresh Token/,
			);
			expect(count(sandbox, REFRESH)).toBe(1);
			expect(count(sandbox, ACTIVE_USERS)).toBe(0);
			expect(store.get().writes).toBe(0);
			expectNoSecret(error, ['cps_wrong_secret_0123456789abcdef', ...secretsOf(sandbox)]);
		});

		test('inside n8n, a revoked refresh token fails the same way, with no secret in the run error', async () => {
			sandbox.revokeRefreshToken(sandbox.orgs.primary.clientId);
			const store = storeFor(sandbox);
			const error = await errorInNode(store, (context) => listActiveUserIds(context));
			expect(error.message).toMatch(/refused to renew the access token \(HTTP 401\)/);
			expect(count(sandbox, REFRESH)).toBe(1);
			expect(count(sandbox, ACTIVE_USERS)).toBe(0);
			expectNoSecret(error, secretsOf(sandbox));
		});
	});
});

describe('preAuthentication reads the token answer strictly and classifies failures', () => {
	/** A helper answering every request with `statusCode` and `body`, as n8n's httpRequest does with
	 * returnFullResponse and ignoreHttpStatusErrors. */
	const answering = (statusCode: number, body: unknown) =>
		({
			helpers: { httpRequest: async () => ({ statusCode, body, headers: {} }) },
		}) as unknown as IHttpRequestHelper;
	const data = {
		baseUrl: 'https://api.example.com',
		clientId: 'cid',
		clientSecret: 'cps_secret_value_0123456789',
		refreshToken: 'cpr_refresh_value_0123456789',
		accessToken: '',
		accessTokenRenewAfter: 0,
	};

	test('expires_in missing: a one-hour life is assumed', async () => {
		const before = Date.now();
		const output = await preAuthenticate(answering(200, { access_token: 'tok_0123456789' }), data);
		expect(output.accessToken).toBe('tok_0123456789');
		expect(output.accessTokenRenewAfter).toBeGreaterThanOrEqual(before + 3_300_000);
		expect(output.accessTokenRenewAfter).toBeLessThanOrEqual(Date.now() + 3_300_000);
	});

	test('expires_in as a string of seconds is read as a number', async () => {
		const before = Date.now();
		const output = await preAuthenticate(
			answering(200, { access_token: 'tok_0123456789', expires_in: '120' }),
			data,
		);
		expect(output.accessTokenRenewAfter).toBeGreaterThanOrEqual(before + 120_000 - 10_000);
		expect(output.accessTokenRenewAfter).toBeLessThanOrEqual(Date.now() + 120_000 - 10_000);
	});

	test.each([
		[200, { token: 'x' }, /answered without an access_token/, false],
		[200, 'not json', /answered without an access_token/, false],
		[
			400,
			{ error: 'invalid_request' },
			/refused to renew the access token \(HTTP 400\)\. Check the Client ID/,
			false,
		],
		[
			401,
			{ error: 'invalid_client' },
			/refused to renew the access token \(HTTP 401\)\. Check the Client ID/,
			false,
		],
		[403, {}, /refused to renew the access token \(HTTP 403\)\. Check the Client ID/, false],
		[404, {}, /refused to renew the access token \(HTTP 404\)\. Check the Base URL/, false],
		[429, {}, /\(HTTP 429\)\. Check the Base URL, or try again later/, true],
		[503, {}, /\(HTTP 503\)\. Check the Base URL, or try again later/, true],
	])('HTTP %i %j: %s, retryable %s', async (status, body, message, retryable) => {
		const error = await preAuthenticate(answering(status, body), data).catch((e) => e);
		expect(error.name).toBe('TokenRenewalError');
		expect(error.message).toMatch(message);
		expect(error.retryable).toBe(retryable);
		expectNoSecret(error, [data.clientSecret, data.refreshToken]);
	});

	test('a network failure is retryable and names only the base URL and the code', async () => {
		const failing = {
			helpers: {
				httpRequest: async () => {
					throw Object.assign(new Error(`connect ECONNREFUSED with body ${data.clientSecret}`), {
						code: 'ECONNREFUSED',
					});
				},
			},
		} as unknown as IHttpRequestHelper;
		const error = await preAuthenticate(failing, data).catch((e) => e);
		expect(error.message).toBe(
			'Could not reach https://api.example.com to renew the access token (ECONNREFUSED).',
		);
		expect(error.retryable).toBe(true);
		expectNoSecret(error, [data.clientSecret, data.refreshToken]);
	});
});

/** Resolves an n8n expression with `$credentials` the way n8n's credentials helper does. */
function resolveWithCredentials(expression: string, credentials: ICredentialDataDecryptedObject) {
	const node: INode = {
		id: 'n',
		name: 'Node',
		type: 'test.probe',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	return workflow.expression.getParameterValue(expression, null, 0, 0, node.name, [], 'internal', {
		$credentials: credentials,
	} as never);
}

describe('an absurd token lifetime is clamped (1 s to 24 h)', () => {
	const fakeApis = useFakeApis();
	/** A fake API whose token endpoint answers `expires_in`, and whose active-users call answers. */
	const withLifetime = (expiresIn: number) =>
		fakeApis.start(
			() => ({ body: { ok: true, data: { user_ids: ['u1'], count: 1 } } }),
			() => ({
				body: {
					access_token: 'fake-access-token-0123456789',
					token_type: 'Bearer',
					expires_in: expiresIn,
				},
			}),
		);
	const refreshes = (api: FakeApi) =>
		api.requests.filter((request) => request.path === '/auth/oauth/v2/refresh').length;

	test('expires_in 0.001: planned as a 1-second token, so the calls within that second do not renew', async () => {
		const api = await withLifetime(0.001);
		const store = fakeStore(api);
		const before = Date.now();
		await valueInNode(store, (context) => listActiveUserIds(context));
		const renewAfter = Number(store.get().data.accessTokenRenewAfter);
		expect(renewAfter).toBeGreaterThanOrEqual(before + 1_000 - 84);
		let calls = 0;
		while (Date.now() < renewAfter - 200 && calls < 20) {
			await valueInNode(store, (context) => listActiveUserIds(context));
			calls++;
		}
		expect(calls).toBeGreaterThan(0);
		expect(refreshes(api)).toBe(1);
	});

	test('expires_in 1e308: the renewal time stored is a finite time within a day, and survives a JSON round trip', async () => {
		const api = await withLifetime(1e308);
		const store = fakeStore(api);
		const before = Date.now();
		await valueInNode(store, (context) => listActiveUserIds(context));
		const renewAfter = store.get().data.accessTokenRenewAfter as number;
		expect(Number.isFinite(renewAfter)).toBe(true);
		expect(renewAfter).toBeGreaterThanOrEqual(before + 24 * 3_600_000 - 300_000);
		expect(renewAfter).toBeLessThanOrEqual(Date.now() + 24 * 3_600_000 - 300_000);
		// n8n saves the credential as JSON: what it reads back is what was stored, and reuses the token.
		store.get().data = JSON.parse(JSON.stringify(store.get().data));
		for (let call = 0; call < 3; call++)
			await valueInNode(store, (context) => listActiveUserIds(context));
		expect(refreshes(api)).toBe(1);
	});

	test.each([
		[0.001, 1],
		[3, 3],
		[3600, 3600],
		[1e308, 86_400],
		[0, 3600],
		[-5, 3600],
		['abc', 3600],
	])('plannedLifetimeSeconds(%p) = %p', (expiresIn, planned) => {
		expect(plannedLifetimeSeconds(expiresIn)).toBe(planned);
	});
});
