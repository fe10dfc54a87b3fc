import type { LoggedRequest } from '../../sandbox/index.cts';
import {
	call,
	MANUAL_CLOCK,
	SEND,
	sendBody,
	tokenFor,
	useSandbox,
	useTestSandboxes,
} from '../harness/index.cts';

const limited = (log: LoggedRequest[]) => log.filter((entry) => entry.status === 429);

describe('sandbox rate limits (spec Limits: "Rate limits: not shown"; off by default)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20, resetBeforeEach: true });
	const sandboxes = useTestSandboxes();
	let token: string;
	let user: string;
	const post = (extra: Record<string, unknown> = {}, bearer = token) =>
		call(sandbox, 'POST', '/push-notification/send', {
			token: bearer,
			body: sendBody([user], extra),
		});
	beforeAll(async () => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		token = await tokenFor(sandbox);
	});

	test('off by default: 30 requests in the same instant all pass', async () => {
		expect(sandbox.settings()).toMatchObject({ rateLimitPerSecond: null, maxInFlight: null });
		const answers = await Promise.all(
			Array.from({ length: 30 }, () => call(sandbox, 'GET', '/user/list?limit=1', { token })),
		);
		expect(answers.every((answer) => answer.status === 200)).toBe(true);
	});

	test('rateLimitPerSecond: a burst of the rate passes, the rest answer 429 + Retry-After and have no effect', async () => {
		sandbox.configure({ rateLimitPerSecond: 3 });
		const statuses: number[] = [];
		const answers = [];
		for (let i = 0; i < 5; i++) answers.push(await post({ title: `Send ${i + 1}` }));
		for (const answer of answers) statuses.push(answer.status);
		expect(statuses).toEqual([202, 202, 202, 429, 429]);
		expect(answers[3].headers.get('retry-after')).toBe('1');
		expect(answers[3].body).toEqual({
			ok: false,
			error: {
				code: 'rate_limited',
				message: 'Rate limit of 3 requests per second exceeded; retry after 1 s',
			},
		});
		// No effect: nothing registered, no send id in the log, and the 429s are easy to count.
		expect(sandbox.notifications().map((record) => record.title)).toEqual([
			'Send 1',
			'Send 2',
			'Send 3',
		]);
		const refused = limited(sandbox.requestLog());
		expect(refused).toHaveLength(2);
		expect(refused.map((entry) => [entry.endpoint, entry.limitedBy, entry.notificationId])).toEqual(
			[
				[SEND, 'rateLimitPerSecond', undefined],
				[SEND, 'rateLimitPerSecond', undefined],
			],
		);
		expect(sandbox.counts()[SEND]).toBe(5); // counts() keeps counting every request the sandbox saw
	});

	test('the bucket refills by the sandbox clock: 1 s gives the whole rate back, 1/rate s one request', async () => {
		sandbox.configure({ rateLimitPerSecond: 4 });
		const burst = async (n: number) => {
			const statuses: number[] = [];
			for (let i = 0; i < n; i++)
				statuses.push((await call(sandbox, 'GET', '/user/list?limit=1', { token })).status);
			return statuses;
		};
		expect(await burst(5)).toEqual([200, 200, 200, 200, 429]);
		await sandbox.clock.advance(249);
		expect(await burst(1)).toEqual([429]);
		await sandbox.clock.advance(1);
		expect(await burst(2)).toEqual([200, 429]);
		await sandbox.clock.advance(10_000); // never more than a burst of the rate
		expect(await burst(5)).toEqual([200, 200, 200, 200, 429]);
	});

	test('Retry-After is the whole seconds until one request fits again (rate 0.25: 4 s, then fewer)', async () => {
		sandbox.configure({ rateLimitPerSecond: 0.25 });
		expect((await post()).status).toBe(202);
		const first = await post();
		expect([first.status, first.headers.get('retry-after')]).toEqual([429, '4']);
		await sandbox.clock.advance(2500);
		const second = await post();
		expect([second.status, second.headers.get('retry-after')]).toEqual([429, '2']);
		await sandbox.clock.advance(1499);
		expect((await post()).headers.get('retry-after')).toBe('1');
		await sandbox.clock.advance(1);
		expect((await post()).status).toBe(202);
		expect(sandbox.notifications()).toHaveLength(2);
	});

	test('per credential: one credential over its limit leaves the others alone; the refresh counts for its client_id', async () => {
		const secondary = sandbox.orgs.secondary;
		const otherToken = await tokenFor(sandbox, secondary);
		sandbox.configure({ rateLimitPerSecond: 2 });
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		expect((await tokenFor(sandbox)).length).toBeGreaterThan(0); // the primary's 2nd request: a refresh
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(429);
		const refresh = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
			body: {
				client_id: sandbox.orgs.primary.clientId,
				client_secret: sandbox.orgs.primary.clientSecret,
				refresh_token: sandbox.orgs.primary.refreshToken,
			},
		});
		expect(refresh.status).toBe(429);
		expect(refresh.headers.get('retry-after')).toBe('1');
		expect((await call(sandbox, 'GET', '/user/list', { token: otherToken })).status).toBe(200);
		expect((await call(sandbox, 'GET', '/user/list', { token: otherToken })).status).toBe(200);
		expect((await call(sandbox, 'GET', '/user/list', { token: otherToken })).status).toBe(429);
		// Requests without a valid token share one bucket of their own.
		expect([
			(await call(sandbox, 'GET', '/user/list')).status,
			(await call(sandbox, 'GET', '/user/list')).status,
		]).toEqual([401, 401]);
		expect((await call(sandbox, 'GET', '/user/list')).status).toBe(429);
		expect(limited(sandbox.requestLog()).map((entry) => entry.orgId ?? null)).toEqual([
			'org-primary',
			null,
			'org-secondary',
			null,
		]);
	});

	test("a refused request takes no fault and does not count for a fault's skip", async () => {
		sandbox.configure({ rateLimitPerSecond: 1 });
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', skip: 1 });
		expect((await post()).status).toBe(202);
		expect((await post()).status).toBe(429);
		await sandbox.clock.advance(1000);
		expect((await post()).status).toBe(503);
		expect(
			sandbox
				.requestLog()
				.filter((entry) => entry.endpoint === SEND)
				.map((entry) => entry.fault ?? entry.limitedBy),
		).toEqual([undefined, 'rateLimitPerSecond', 'status5xx']);
	});

	test('maxInFlight: with answers held by latency, requests beyond the limit get 429 (held by the latency too) and have no effect', async () => {
		sandbox.configure({ maxInFlight: 2, latencyMs: 1000 });
		const answers = await Promise.all([1, 2, 3, 4].map((n) => post({ title: `Parallel ${n}` })));
		const statuses = answers.map((answer) => answer.status).sort();
		expect(statuses).toEqual([202, 202, 429, 429]);
		const refused = answers.filter((answer) => answer.status === 429);
		for (const answer of refused) {
			expect(answer.headers.get('retry-after')).toBe('1');
			expect(answer.body.error.message).toBe(
				'Too many requests in flight (at most 2); retry later',
			);
		}
		expect(sandbox.notifications()).toHaveLength(2);
		expect(limited(sandbox.requestLog()).map((entry) => entry.limitedBy)).toEqual([
			'maxInFlight',
			'maxInFlight',
		]);
		// Answered, they are no longer in flight.
		expect((await post()).status).toBe(202);
	});

	test('maxInFlight counts an answer held by a delay fault; over the admin API, null turns it off', async () => {
		await call(sandbox, 'POST', '/__sandbox/settings', { body: { maxInFlight: 1 } });
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'delay', delayMs: 800 });
		const held = call(sandbox, 'GET', '/user/list', { token });
		while (sandbox.requestLog().length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(429);
		expect((await held).status).toBe(200);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		expect(
			(await call(sandbox, 'POST', '/__sandbox/settings', { body: { maxInFlight: 0 } })).status,
		).toBe(400);
		const off = await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { maxInFlight: null, rateLimitPerSecond: null },
		});
		expect(off.body.settings).toMatchObject({ maxInFlight: null, rateLimitPerSecond: null });
	});

	test('start options; reset() refills the buckets and goes back to them; the 429 is in the error shape', async () => {
		const limitedSandbox = await sandboxes.start({
			...MANUAL_CLOCK,
			seedUsers: 5,
			rateLimitPerSecond: 1,
			errorShape: 'statusMessage',
		});
		const limitedToken = await tokenFor(limitedSandbox);
		const refused = await call(limitedSandbox, 'GET', '/user/list', { token: limitedToken });
		expect(refused.status).toBe(429);
		expect(refused.body).toEqual({
			statusCode: 429,
			error: 'Too Many Requests',
			message: 'Rate limit of 1 requests per second exceeded; retry after 1 s',
		});
		limitedSandbox.configure({ rateLimitPerSecond: 100 });
		await limitedSandbox.reset();
		expect(limitedSandbox.settings().rateLimitPerSecond).toBe(1);
		expect((await call(limitedSandbox, 'GET', '/user/list', { token: limitedToken })).status).toBe(
			200,
		);
		expect((await call(limitedSandbox, 'GET', '/user/list', { token: limitedToken })).status).toBe(
			429,
		);
	});
});
