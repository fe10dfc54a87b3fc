import type { Sandbox } from '../../sandbox';
import { call, manualSandbox, sendBody, tokenFor } from './helpers';

const SEND = 'POST /push-notification/send';

describe('sandbox fault injection (issue 3 "Faults"; spec Errors 5xx and rules 1-2)', () => {
	let sandbox: Sandbox;
	let token: string;
	let user: string;
	const post = (extra: Record<string, unknown> = {}) => call(sandbox, 'POST', '/push-notification/send', { token, body: sendBody([user], extra) });
	const listIds = async () => (await call(sandbox, 'GET', '/push-notification/list', { token })).body.data.notifications.map((item: any) => item.id);
	beforeAll(async () => {
		sandbox = await manualSandbox({ seedUsers: 20 });
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	afterAll(() => sandbox.stop());
	beforeEach(async () => {
		await sandbox.reset();
		token = await tokenFor(sandbox);
	});

	test('status5xx: the next N matching requests answer the status (503 by default); nothing is registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', times: 2 });
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'status5xx', status: 502 });
		const first = await post();
		expect(first.status).toBe(503);
		expect(first.body.error.code).toBe('platform_error');
		expect((await post()).status).toBe(503);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(502);
		expect(sandbox.notifications()).toEqual([]);
		expect((await post()).status).toBe(202);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		expect(sandbox.requestLog().filter((entry) => entry.fault === 'status5xx')).toHaveLength(3);
	});

	test('status5xx with afterProcessing: the send IS registered although the answer is 503', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', afterProcessing: true });
		expect((await post()).status).toBe(503);
		const [logged] = sandbox.requestLog().filter((entry) => entry.endpoint === SEND);
		expect(logged.notificationId).toEqual(expect.any(String));
		expect(await listIds()).toEqual([logged.notificationId]);
	});

	test('resetBefore: the connection is destroyed without an answer and nothing is registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		await expect(post()).rejects.toThrow();
		expect(sandbox.notifications()).toEqual([]);
		expect(await listIds()).toEqual([]);
		expect(sandbox.requestLog().find((entry) => entry.endpoint === SEND)).toMatchObject({ status: 0, fault: 'resetBefore' });
	});

	test('resetAfter: the connection is destroyed, but the send is registered, delivered and listed', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		await expect(post({ title: 'Lost answer' })).rejects.toThrow();
		const [record] = sandbox.notifications();
		expect(record.title).toBe('Lost answer');
		const [listed] = (await call(sandbox, 'GET', '/push-notification/list', { token })).body.data.notifications;
		expect(listed).toMatchObject({ id: record.id, title: 'Lost answer', target_user_ids: [user] });
		await sandbox.clock.advance(5000);
		expect(sandbox.notifications()[0]).toMatchObject({ status: 'sent', stats: expect.objectContaining({ sent: 1 }) });
		expect(sandbox.requestLog().find((entry) => entry.endpoint === SEND)).toMatchObject({ status: 0, fault: 'resetAfter', notificationId: record.id });
	});

	test('delay: the answer is held delayMs in real time (longer than a client timeout); the send is processed at once', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'delay', delayMs: 400 });
		await expect(
			call(sandbox, 'POST', '/push-notification/send', { token, body: sendBody([user]), signal: AbortSignal.timeout(100) }),
		).rejects.toThrow();
		expect(sandbox.notifications()).toHaveLength(1);
		sandbox.addFault({ endpoint: 'GET /user-device/users', kind: 'delay', delayMs: 150 });
		const started = Date.now();
		const held = await call(sandbox, 'GET', '/user-device/users', { token });
		expect(held.status).toBe(200);
		expect(Date.now() - started).toBeGreaterThanOrEqual(140);
	});

	test('malformedJson: the status is kept, the body is not JSON; the send is registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'malformedJson' });
		const answer = await post();
		expect(answer.status).toBe(202);
		expect(answer.headers.get('content-type')).toMatch(/application\/json/);
		expect(() => JSON.parse(answer.text)).toThrow();
		expect(sandbox.notifications()).toHaveLength(1);
	});

	test('rateLimit: 429 with Retry-After; nothing registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'rateLimit', retryAfterSeconds: 7 });
		const answer = await post();
		expect(answer.status).toBe(429);
		expect(answer.headers.get('retry-after')).toBe('7');
		expect(sandbox.notifications()).toEqual([]);
	});

	test('unauthorized: 401 even for a valid token, logged as a valid token', async () => {
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'unauthorized' });
		const answer = await call(sandbox, 'GET', '/user/list', { token });
		expect(answer.status).toBe(401);
		expect(answer.headers.get('www-authenticate')).toBe('Bearer');
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		expect(sandbox.requestLog().filter((entry) => entry.endpoint === 'GET /user/list').map((entry) => [entry.status, entry.authorization])).toEqual([
			[401, 'valid'],
			[200, 'valid'],
		]);
	});

	test('share: a seeded share of matching requests, the same pattern for the same seed', async () => {
		const pattern = async () => {
			await sandbox.reset();
			sandbox.addFault({ endpoint: 'GET /user/list', kind: 'status5xx', share: 0.5, seed: 42 });
			const statuses: number[] = [];
			for (let i = 0; i < 30; i++) statuses.push((await call(sandbox, 'GET', '/user/list?limit=1', { token })).status);
			return statuses;
		};
		const first = await pattern();
		expect(await pattern()).toEqual(first);
		const failures = first.filter((status) => status === 503).length;
		expect(failures).toBeGreaterThan(5);
		expect(failures).toBeLessThan(25);
	});

	test('endpoint "*" matches every public endpoint; faults apply oldest first; clearFaults removes them', async () => {
		sandbox.addFault({ endpoint: '*', kind: 'status5xx', status: 500, times: 2 });
		sandbox.addFault({ endpoint: '*', kind: 'rateLimit' });
		expect((await call(sandbox, 'GET', '/user-device/users', { token })).status).toBe(500);
		expect((await call(sandbox, 'POST', '/auth/oauth/v2/refresh', { body: {} })).status).toBe(500);
		expect((await call(sandbox, 'GET', '/push-notification/list', { token })).status).toBe(429);
		sandbox.addFault({ endpoint: '*', kind: 'status5xx', times: 5 });
		sandbox.clearFaults();
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
	});

	test('a malformed fault spec is refused with a clear error', () => {
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'explode' as never })).toThrow(/invalid fault kind/);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 404 })).toThrow(/status/);
	});
});
