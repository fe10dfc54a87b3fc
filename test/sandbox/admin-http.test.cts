import { call, MANUAL_CLOCK, sendBody, useSandbox } from '../harness/index.cts';

/** The same controls over HTTP, for tests that run n8n in another process. */
describe('sandbox admin HTTP API (/__sandbox)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 60, resetBeforeEach: true });

	const admin = (method: string, path: string, body?: unknown) =>
		call(sandbox, method, `/__sandbox${path}`, { body });
	async function adminToken(): Promise<string> {
		const { body } = await admin('GET', '/credentials');
		const primary = body.orgs.primary;
		const refreshed = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
			body: {
				client_id: primary.clientId,
				client_secret: primary.clientSecret,
				refresh_token: primary.refreshToken,
			},
		});
		return refreshed.body.access_token;
	}

	test('GET /credentials: base URL, working credentials of both orgs and the non-admin one, sample users per kind', async () => {
		const { status, body } = await admin('GET', '/credentials');
		expect(status).toBe(200);
		expect(body.baseUrl).toBe(sandbox.baseUrl);
		expect(body.orgs.primary).toMatchObject({
			id: sandbox.orgs.primary.id,
			clientId: sandbox.orgs.primary.clientId,
			userCount: 60,
		});
		expect(body.orgs.secondary.clientSecret).toBe(sandbox.orgs.secondary.clientSecret);
		expect(body.nonAdminCredential.clientId).toBe(sandbox.nonAdminCredential.clientId);
		expect(body.orgs.primary.sampleUsers.twoPhones).toEqual(
			sandbox.orgs.primary.usersOfKind('twoPhones', 5),
		);
		expect((await call(sandbox, 'GET', '/user/list', { token: await adminToken() })).status).toBe(
			200,
		);
	});

	test('GET /users?kind=&org=&limit= lists users of a kind with their phones', async () => {
		const { body } = await admin('GET', '/users?kind=partlyUninstalled&org=primary&limit=2');
		expect(body.users).toHaveLength(2);
		expect(body.users[0]).toEqual({
			id: sandbox.orgs.primary.usersOfKind('partlyUninstalled', 1)[0],
			kind: 'partlyUninstalled',
			devices: [
				{ index: 0, session: 'active', behaviour: 'ok' },
				{ index: 1, session: 'active', behaviour: 'uninstalled' },
			],
		});
		expect((await admin('GET', '/users?kind=wizard')).status).toBe(400);
		expect(
			(await admin('GET', '/users?org=secondary&limit=3')).body.users.map((user: any) => user.id),
		).toEqual(sandbox.orgs.secondary.userIds.slice(0, 3));
	});

	test('clock: GET /clock, POST /clock/advance {ms}, POST /clock/set {iso}', async () => {
		const before = (await admin('GET', '/clock')).body;
		expect(before.mode).toBe('manual');
		expect((await admin('POST', '/clock/advance', { ms: 60_000 })).body.ms).toBe(
			before.ms + 60_000,
		);
		expect((await admin('POST', '/clock/set', { iso: '2031-05-01T00:00:00Z' })).body.now).toBe(
			'2031-05-01T00:00:00.000Z',
		);
		expect((await admin('POST', '/clock/set', { iso: '2020-01-01T00:00:00Z' })).status).toBe(400);
		expect((await admin('POST', '/clock/advance', { ms: 'soon' })).status).toBe(400);
	});

	test('faults: POST (one or a list), GET, DELETE', async () => {
		const token = await adminToken();
		await admin('POST', '/faults', {
			endpoint: 'POST /push-notification/send',
			kind: 'status5xx',
			status: 504,
		});
		await admin('POST', '/faults', [
			{ endpoint: 'GET /user/list', kind: 'rateLimit', retryAfterSeconds: 3 },
		]);
		expect((await admin('GET', '/faults')).body.faults).toHaveLength(2);
		expect(
			(await call(sandbox, 'POST', '/push-notification/send', { token, body: sendBody(['x']) }))
				.status,
		).toBe(504);
		expect((await admin('GET', '/faults')).body.faults).toHaveLength(1);
		expect((await admin('DELETE', '/faults')).status).toBe(200);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		expect((await admin('POST', '/faults', { endpoint: '*', kind: 'nope' })).status).toBe(400);
	});

	test('settings: GET and POST {listShape, errorShape, tokenLifetimeSeconds, ...}; bad values refused', async () => {
		const answer = await admin('POST', '/settings', {
			listShape: 'dataItems',
			errorShape: 'detail',
			tokenLifetimeSeconds: 30,
		});
		expect(answer.body.settings).toMatchObject({
			listShape: 'dataItems',
			errorShape: 'detail',
			tokenLifetimeSeconds: 30,
		});
		const token = await adminToken();
		expect((await call(sandbox, 'GET', '/push-notification/list', { token })).body).toEqual({
			ok: true,
			data: { items: [], total: 0 },
		});
		expect((await admin('POST', '/settings', { listShape: 'xml' })).status).toBe(400);
		expect((await admin('POST', '/settings', { unknownSwitch: true })).status).toBe(400);
		expect((await admin('GET', '/settings')).body.settings.listShape).toBe('dataItems');
	});

	test('log, counts, notifications and deliveries-by-user over HTTP', async () => {
		const token = await adminToken();
		const user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
		await call(sandbox, 'POST', '/push-notification/send', { token, body: sendBody([user]) });
		expect((await admin('GET', '/counts')).body.counts).toEqual({
			'POST /auth/oauth/v2/refresh': 1,
			'POST /push-notification/send': 1,
		});
		expect((await admin('GET', '/log')).body.requests).toHaveLength(2);
		expect((await admin('GET', '/notifications?org=primary')).body.notifications).toHaveLength(1);
		expect((await admin('GET', '/notifications?org=secondary')).body.notifications).toHaveLength(0);
		expect((await admin('GET', '/deliveries-by-user')).body.deliveries_by_user).toEqual({
			[user]: 1,
		});
	});

	test('reset, revoke {clientId} and expire-tokens over HTTP', async () => {
		const token = await adminToken();
		await admin('POST', '/expire-tokens');
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(401);
		await admin('POST', '/revoke', { clientId: sandbox.orgs.primary.clientId });
		await expect(adminToken()).resolves.toBeUndefined();
		expect((await admin('POST', '/revoke', { clientId: 'nobody' })).status).toBe(400);
		await admin('POST', '/reset');
		await expect(adminToken()).resolves.toEqual(expect.any(String));
	});

	test('the admin prefix never collides with the public API: unknown admin paths answer 404 and list the endpoints', async () => {
		const answer = await admin('GET', '/user/list');
		expect(answer.status).toBe(404);
		expect(answer.body.error.endpoints).toContain('POST /clock/advance');
		// A public path that merely starts with the same letters is public (and unknown).
		expect((await call(sandbox, 'GET', '/__sandboxx')).body.error.message).toBe(
			'No endpoint GET /__sandboxx',
		);
		expect(sandbox.counts()).toEqual({ 'GET /__sandboxx': 1 });
	});
});
