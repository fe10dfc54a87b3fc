import {
	call,
	MANUAL_CLOCK,
	send,
	sendBody,
	tokenFor,
	useSandbox,
	useTestSandboxes,
} from '../harness/index.cts';

describe('sandbox request log, counts and reset', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 40, resetBeforeEach: true });
	let token: string;
	beforeEach(async () => {
		token = await tokenFor(sandbox);
	});

	test('every public request: method, path, query, parsed body, clock time, endpoint, status, authorization, org', async () => {
		const user = sandbox.orgs.primary.userIds[0];
		await call(sandbox, 'GET', '/user/list?skip=5&limit=2', { token });
		await sandbox.clock.advance(250);
		const { id } = await send(sandbox, token, [user]);
		await call(sandbox, 'GET', `/push-notification/${id}`, { token: 'cpa_forged' });
		const log = sandbox.requestLog();
		expect(log.map((entry) => entry.endpoint)).toEqual([
			'POST /auth/oauth/v2/refresh',
			'GET /user/list',
			'POST /push-notification/send',
			'GET /push-notification/:id',
		]);
		expect(log[1]).toEqual({
			method: 'GET',
			path: '/user/list',
			query: { skip: '5', limit: '2' },
			body: undefined,
			time: log[0].time,
			endpoint: 'GET /user/list',
			status: 200,
			authorization: 'valid',
			orgId: sandbox.orgs.primary.id,
		});
		expect(log[2]).toMatchObject({
			body: sendBody([user]),
			status: 202,
			time: log[0].time + 250,
			notificationId: id,
		});
		expect(log[3]).toMatchObject({
			path: `/push-notification/${id}`,
			status: 401,
			authorization: 'unknown',
		});
	});

	test('a tenant_id in a body is visible in the log (so tests can assert it is never sent)', async () => {
		await call(sandbox, 'POST', '/push-notification/send', {
			token,
			body: sendBody(['x'], { tenant_id: 'org-primary' }),
		});
		expect(
			sandbox.requestLog().some((entry) => (entry.body as any)?.tenant_id === 'org-primary'),
		).toBe(true);
	});

	test('no raw token or secret is ever stored: bearer tokens never, refresh secrets redacted', async () => {
		await call(sandbox, 'GET', '/user/list', { token });
		const text = JSON.stringify(sandbox.requestLog());
		expect(text).not.toContain(token);
		expect(text).not.toContain(sandbox.orgs.primary.clientSecret);
		expect(text).not.toContain(sandbox.orgs.primary.refreshToken);
		expect(sandbox.requestLog()[0].body).toEqual({
			client_id: sandbox.orgs.primary.clientId,
			client_secret: '[redacted]',
			refresh_token: '[redacted]',
		});
	});

	test('a body that is not JSON is logged as its raw text', async () => {
		await call(sandbox, 'POST', '/push-notification/send', { token, rawBody: 'title=hi' });
		expect(sandbox.requestLog().at(-1)).toMatchObject({ body: 'title=hi', status: 400 });
	});

	test('"no user received a notification twice" can be checked from the sandbox side', async () => {
		const users = sandbox.orgs.primary.userIds.slice(0, 30);
		await send(sandbox, token, users.slice(0, 15));
		await send(sandbox, token, users.slice(15));
		expect(Math.max(...sandbox.deliveriesByUser().values())).toBe(1);
		await send(sandbox, token, users.slice(14, 16));
		expect(
			[...sandbox.deliveriesByUser()].filter(([, times]) => times > 1).map(([userId]) => userId),
		).toEqual(users.slice(14, 16));
	});

	test('admin requests are neither logged nor counted', async () => {
		await call(sandbox, 'GET', '/__sandbox/counts');
		await call(sandbox, 'POST', '/__sandbox/clock/advance', { body: { ms: 1 } });
		expect(sandbox.counts()).toEqual({ 'POST /auth/oauth/v2/refresh': 1 });
		expect(sandbox.requestLog()).toHaveLength(1);
	});

	test('reset: sends, log, counts, faults, revocations and settings cleared; users, devices and credentials identical', async () => {
		const usersBefore = (await call(sandbox, 'GET', '/user/list?limit=40', { token })).body;
		await send(sandbox, token, sandbox.orgs.primary.userIds.slice(0, 3));
		sandbox.addFault({ endpoint: '*', kind: 'status5xx', times: 100 });
		sandbox.revokeRefreshToken(sandbox.orgs.primary.clientId);
		sandbox.setListShape('bareArray');
		const clockBefore = sandbox.clock.now();
		await sandbox.reset();
		expect(sandbox.notifications()).toEqual([]);
		expect(sandbox.requestLog()).toEqual([]);
		expect(sandbox.counts()).toEqual({});
		expect(sandbox.settings().listShape).toBe('envelope');
		expect(sandbox.clock.now()).toBe(clockBefore);
		const fresh = await tokenFor(sandbox); // not revoked, no fault
		expect((await call(sandbox, 'GET', '/user/list?limit=40', { token: fresh })).body).toEqual(
			usersBefore,
		);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200); // issued tokens survive a reset
	});
});

describe('Date header', () => {
	const sandboxes = useTestSandboxes();
	it("tells the sandbox's clock, so clients can compare created_at with the server's time", async () => {
		const sandbox = await sandboxes.start({
			clock: 'manual',
			startTime: '2030-01-02T03:04:05.000Z',
			seedUsers: 20,
		});
		const response = await fetch(`${sandbox.baseUrl}/user-device/users`);
		expect(response.headers.get('date')).toBe('Wed, 02 Jan 2030 03:04:05 GMT');
		await sandbox.clock.advance(60_000);
		const later = await fetch(`${sandbox.baseUrl}/user-device/users`);
		expect(later.headers.get('date')).toBe('Wed, 02 Jan 2030 03:05:05 GMT');
	});
});
