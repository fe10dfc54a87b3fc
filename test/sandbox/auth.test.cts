import { call, MANUAL_CLOCK, tokenFor, useSandbox, useTestSandboxes } from '../harness/index.cts';

describe('sandbox auth (spec Authentication, POST /auth/oauth/v2/refresh)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20, resetBeforeEach: true });
	const sandboxes = useTestSandboxes();

	const refreshBody = (overrides: Record<string, unknown> = {}) => ({
		client_id: sandbox.orgs.primary.clientId,
		client_secret: sandbox.orgs.primary.clientSecret,
		refresh_token: sandbox.orgs.primary.refreshToken,
		...overrides,
	});

	test('refresh returns a Bearer token with expires_in 3600 by default, without needing a bearer', async () => {
		const answer = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', { body: refreshBody() });
		expect(answer.status).toBe(200);
		expect(answer.body).toEqual({
			access_token: expect.any(String),
			token_type: 'Bearer',
			expires_in: 3600,
		});
		expect(Object.keys(answer.body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
	});

	test('the refresh token never changes: it works again and each call yields a new access token', async () => {
		const first = await tokenFor(sandbox);
		const second = await tokenFor(sandbox);
		expect(first).not.toBe(second);
		for (const token of [first, second])
			expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
	});

	test('expires_in follows tokenLifetimeSeconds (start option, setTokenLifetime)', async () => {
		sandbox.setTokenLifetime(5);
		const answer = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', { body: refreshBody() });
		expect(answer.body.expires_in).toBe(5);
		const other = await sandboxes.start({
			...MANUAL_CLOCK,
			seedUsers: 1,
			tokenLifetimeSeconds: 60,
		});
		const otherAnswer = await call(other, 'POST', '/auth/oauth/v2/refresh', {
			body: {
				client_id: other.orgs.primary.clientId,
				client_secret: other.orgs.primary.clientSecret,
				refresh_token: other.orgs.primary.refreshToken,
			},
		});
		expect(otherAnswer.body.expires_in).toBe(60);
	});

	test('a token expires by the clock: valid until expires_in, 401 from then on', async () => {
		const token = await tokenFor(sandbox);
		await sandbox.clock.advance(3600 * 1000 - 1);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		await sandbox.clock.advance(1);
		const expired = await call(sandbox, 'GET', '/user/list', { token });
		expect(expired.status).toBe(401);
		expect(expired.body.error.message).toMatch(/expired/);
		expect(expired.headers.get('www-authenticate')).toBe('Bearer');
	});

	test('missing, unknown and expired bearer tokens answer 401 on every protected endpoint', async () => {
		const token = await tokenFor(sandbox);
		sandbox.expireAccessTokens();
		const paths: Array<[string, string]> = [
			['GET', '/user/list'],
			['GET', '/user-device/users'],
			['POST', '/push-notification/send'],
			['GET', '/push-notification/list'],
			['GET', '/push-notification/abc'],
			['POST', '/push-notification/abc/cancel'],
		];
		for (const [method, path] of paths) {
			expect((await call(sandbox, method, path)).status).toBe(401);
			expect((await call(sandbox, method, path, { token: 'cpa_not_a_real_token' })).status).toBe(
				401,
			);
			expect((await call(sandbox, method, path, { token })).status).toBe(401);
		}
		const states = sandbox
			.requestLog()
			.filter((entry) => entry.endpoint !== 'POST /auth/oauth/v2/refresh')
			.map((entry) => entry.authorization);
		expect(new Set(states)).toEqual(new Set(['missing', 'unknown', 'expired']));
	});

	test('expireAccessTokens makes every issued token answer 401, a new one works', async () => {
		const tokens = [await tokenFor(sandbox), await tokenFor(sandbox, sandbox.orgs.secondary)];
		sandbox.expireAccessTokens();
		for (const token of tokens)
			expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(401);
		expect(
			(await call(sandbox, 'GET', '/user/list', { token: await tokenFor(sandbox) })).status,
		).toBe(200);
	});

	test('a wrong secret or unknown client answers 401 invalid_client with a clear message', async () => {
		for (const overrides of [{ client_secret: 'cps_wrong' }, { client_id: 'cpc_unknown' }]) {
			const answer = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
				body: refreshBody(overrides),
			});
			expect(answer.status).toBe(401);
			expect(answer.body.error).toEqual({
				code: 'invalid_client',
				message: 'client_id or client_secret is invalid',
			});
		}
	});

	test('a refresh token of another credential answers 401 invalid_grant', async () => {
		const answer = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
			body: refreshBody({ refresh_token: sandbox.orgs.secondary.refreshToken }),
		});
		expect(answer.status).toBe(401);
		expect(answer.body.error.code).toBe('invalid_grant');
	});

	test('a revoked refresh token answers 401 invalid_grant saying so; issued tokens keep working', async () => {
		const token = await tokenFor(sandbox);
		sandbox.revokeRefreshToken(sandbox.orgs.primary.clientId);
		const answer = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', { body: refreshBody() });
		expect(answer.status).toBe(401);
		expect(answer.body.error.code).toBe('invalid_grant');
		expect(answer.body.error.message).toMatch(/revoked/);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		// Spec Authentication 2: other credentials are not affected.
		await expect(tokenFor(sandbox, sandbox.orgs.secondary)).resolves.toEqual(expect.any(String));
		await sandbox.reset();
		await expect(tokenFor(sandbox)).resolves.toEqual(expect.any(String));
	});

	test('refreshRevokesPreviousTokens (off by default): a refresh revokes the tokens issued before it for that credential only', async () => {
		expect(sandbox.settings().refreshRevokesPreviousTokens).toBe(false);
		const kept = await tokenFor(sandbox);
		sandbox.configure({ refreshRevokesPreviousTokens: true });
		const other = await tokenFor(sandbox, sandbox.orgs.secondary);
		const first = await tokenFor(sandbox);
		const second = await tokenFor(sandbox);
		for (const token of [kept, first]) {
			const refused = await call(sandbox, 'GET', '/user/list', { token });
			expect(refused.status).toBe(401);
			expect(refused.body.error.message).toMatch(
				/^Bearer token revoked by a newer token of this credential/,
			);
			expect(refused.headers.get('www-authenticate')).toBe('Bearer');
		}
		expect((await call(sandbox, 'GET', '/user/list', { token: second })).status).toBe(200);
		expect((await call(sandbox, 'GET', '/user/list', { token: other })).status).toBe(200); // another credential
		expect(
			sandbox
				.requestLog()
				.filter((entry) => entry.endpoint === 'GET /user/list')
				.map((entry) => entry.authorization),
		).toEqual(['revoked', 'revoked', 'valid', 'valid']);
	});

	test('refreshRevokesPreviousTokens: a refused refresh revokes nothing; once off, revoked tokens stay revoked and refreshes revoke no more', async () => {
		sandbox.configure({ refreshRevokesPreviousTokens: true });
		const revoked = await tokenFor(sandbox);
		const token = await tokenFor(sandbox);
		expect(
			(
				await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
					body: refreshBody({ client_secret: 'cps_wrong' }),
				})
			).status,
		).toBe(401);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { refreshRevokesPreviousTokens: false },
		});
		const newer = await tokenFor(sandbox);
		const newest = await tokenFor(sandbox);
		expect((await call(sandbox, 'GET', '/user/list', { token: revoked })).status).toBe(401);
		for (const kept of [token, newer, newest])
			expect((await call(sandbox, 'GET', '/user/list', { token: kept })).status).toBe(200);
	});

	test('refreshRevokesPreviousTokens as a start option, with tokenLifetimeSeconds; a bad value is refused', async () => {
		const other = await sandboxes.start({
			...MANUAL_CLOCK,
			seedUsers: 1,
			refreshRevokesPreviousTokens: true,
			tokenLifetimeSeconds: 30,
		});
		const first = await tokenFor(other);
		const body = {
			client_id: other.orgs.primary.clientId,
			client_secret: other.orgs.primary.clientSecret,
			refresh_token: other.orgs.primary.refreshToken,
		};
		const second = await call(other, 'POST', '/auth/oauth/v2/refresh', { body });
		expect(second.body.expires_in).toBe(30);
		expect((await call(other, 'GET', '/user/list', { token: first })).status).toBe(401);
		expect(
			(await call(other, 'GET', '/user/list', { token: second.body.access_token })).status,
		).toBe(200);
		await other.clock.advance(30_000);
		expect(
			(await call(other, 'GET', '/user/list', { token: second.body.access_token })).status,
		).toBe(401);
		expect(() => other.configure({ refreshRevokesPreviousTokens: 'yes' as never })).toThrow(
			/invalid sandbox setting refreshRevokesPreviousTokens/,
		);
		expect(
			(await call(other, 'POST', '/__sandbox/settings', { body: { tokenLifetimeSeconds: 0 } }))
				.status,
		).toBe(400);
	});

	test('a missing refresh field answers 422 naming it; a non-string one 400', async () => {
		const missing = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
			body: refreshBody({ refresh_token: undefined }),
		});
		expect(missing.status).toBe(422);
		expect(missing.body.error.field).toBe('refresh_token');
		const wrongType = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
			body: refreshBody({ client_id: 42 }),
		});
		expect(wrongType.status).toBe(400);
		expect(wrongType.body.error.field).toBe('client_id');
	});

	test('server-to-server only (spec "What the service does" 11): no CORS headers, preflight not served', async () => {
		const token = await tokenFor(sandbox);
		const answer = await call(sandbox, 'GET', '/user/list', { token });
		expect(answer.headers.get('access-control-allow-origin')).toBeNull();
		expect((await call(sandbox, 'OPTIONS', '/push-notification/send')).status).toBe(404);
	});

	test('requests are counted per endpoint, so "exactly one refresh" can be asserted', async () => {
		const token = await tokenFor(sandbox);
		await call(sandbox, 'GET', '/user/list', { token });
		await call(sandbox, 'GET', '/user/list', { token });
		expect(sandbox.counts()).toEqual({ 'POST /auth/oauth/v2/refresh': 1, 'GET /user/list': 2 });
	});
});
