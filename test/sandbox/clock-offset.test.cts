import { startSandbox } from '../../sandbox/index.cts';
import {
	call,
	detail,
	MANUAL_CLOCK,
	send,
	sendBody,
	START,
	tokenFor,
	useSandbox,
} from '../harness/index.cts';

const SEND = 'POST /push-notification/send';
const OFFSET = 90_000;
const startMs = Date.parse(START);
const httpDate = (ms: number) => new Date(ms).toUTCString();

/**
 * clockOffsetMs: the API's clock runs ahead of (or behind) the sandbox clock, as a real server's
 * clock can differ from the client host's. Everything the API shows or decides by time follows it.
 */
describe('sandbox clockOffsetMs: the API clock', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20, clockOffsetMs: OFFSET });
	let token: string;
	let user: string;
	beforeAll(async () => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		await sandbox.reset();
		token = await tokenFor(sandbox);
	});

	test('a start option, 0 by default; clock.apiNow() and GET /__sandbox/clock tell both clocks', async () => {
		const { startSandbox } = await import('../../sandbox/index.cts');
		const plain = await startSandbox({ clock: 'manual', startTime: START, seedUsers: 5 });
		try {
			expect(plain.settings().clockOffsetMs).toBe(0);
			expect(plain.clock.apiNow()).toBe(plain.clock.now());
		} finally {
			await plain.stop();
		}
		const now = sandbox.clock.now();
		expect(sandbox.clock.apiNow()).toBe(now + OFFSET);
		const clock = (await call(sandbox, 'GET', '/__sandbox/clock')).body;
		expect(clock).toMatchObject({
			ms: now,
			now: new Date(now).toISOString(),
			apiMs: now + OFFSET,
			apiNow: new Date(now + OFFSET).toISOString(),
		});
	});

	test('the Date header of every answer follows the API clock: public, errors, faults, limits, unknown paths, admin', async () => {
		const expected = httpDate(sandbox.clock.now() + OFFSET);
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'status5xx' });
		const answers = [
			await call(sandbox, 'GET', '/user-device/users', { token }),
			await call(sandbox, 'GET', '/user-device/users'), // 401
			await call(sandbox, 'POST', '/push-notification/send', { token, body: {} }), // 422
			await call(sandbox, 'GET', '/user/list', { token }), // 503 fault
			await call(sandbox, 'GET', '/no/such/path', { token }), // 404
			await call(sandbox, 'GET', '/__sandbox/settings'),
			await call(sandbox, 'GET', '/__sandbox/nothing'), // admin 404
		];
		sandbox.configure({ rateLimitPerSecond: 1 });
		await call(sandbox, 'GET', '/user-device/users', { token });
		answers.push(await call(sandbox, 'GET', '/user-device/users', { token })); // 429 of the limit
		expect(answers.map((answer) => answer.status)).toEqual([
			200, 401, 422, 503, 404, 200, 404, 429,
		]);
		expect(answers.map((answer) => answer.headers.get('date'))).toEqual(Array(8).fill(expected));
	});

	test('created_at, sent_at and delivery times are on the API clock; the log keeps the sandbox clock', async () => {
		const { id } = await send(sandbox, token, [user]);
		const sentAt = sandbox.clock.now();
		await sandbox.clock.advance(sandbox.settings().deliveryMs);
		const { notification, deliveries } = await detail(sandbox, token, id);
		expect(notification).toMatchObject({
			status: 'sent',
			created_at: new Date(sentAt + OFFSET).toISOString(),
			sent_at: new Date(sentAt + OFFSET).toISOString(),
		});
		expect(deliveries).toEqual([
			expect.objectContaining({
				status: 'sent',
				sent_at: new Date(sentAt + OFFSET + sandbox.settings().deliveryMs).toISOString(),
			}),
		]);
		const [listed] = (await call(sandbox, 'GET', '/push-notification/list', { token })).body.data
			.notifications;
		expect(listed.created_at).toBe(new Date(sentAt + OFFSET).toISOString());
		expect(sandbox.requestLog().find((entry) => entry.endpoint === SEND)?.time).toBe(sentAt);
	});

	test('scheduled_at is compared with the API clock: ahead of the host but behind the API, a send goes out at once', async () => {
		const scheduledAt = new Date(sandbox.clock.now() + 30_000).toISOString();
		const answer = await call(sandbox, 'POST', '/push-notification/send', {
			token,
			body: sendBody([user], { scheduled_at: scheduledAt }),
		});
		expect(answer.body.data.status).toBe('sending');
		expect(
			(await detail(sandbox, token, answer.body.data.id)).notification.scheduled_at,
		).toBeNull();
	});

	test('a clock behind the host: a time already past on the host is still ahead for the API, so the send is scheduled', async () => {
		sandbox.configure({ clockOffsetMs: -60_000 });
		const scheduledAt = new Date(sandbox.clock.now() - 30_000).toISOString();
		const { id, status } = await send(sandbox, token, [user], { scheduled_at: scheduledAt });
		expect(status).toBe('scheduled');
		await sandbox.clock.advance(29_999);
		expect((await detail(sandbox, token, id)).notification.status).toBe('scheduled');
		await sandbox.clock.advance(1);
		expect((await detail(sandbox, token, id)).notification.status).toBe('sending');
	});

	test('token expiry follows the API clock: moving it past the lifetime expires the token', async () => {
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		sandbox.configure({ clockOffsetMs: OFFSET + sandbox.settings().tokenLifetimeSeconds * 1000 });
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(401);
		expect(sandbox.requestLog().at(-1)?.authorization).toBe('expired');
	});

	test('over the admin HTTP API: POST /__sandbox/settings {clockOffsetMs}; bad values refused', async () => {
		const changed = await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { clockOffsetMs: -5000 },
		});
		expect(changed.body.settings.clockOffsetMs).toBe(-5000);
		expect(changed.headers.get('date')).toBe(httpDate(sandbox.clock.now() - 5000));
		expect((await call(sandbox, 'GET', '/user-device/users', { token })).headers.get('date')).toBe(
			httpDate(sandbox.clock.now() - 5000),
		);
		expect(
			(await call(sandbox, 'POST', '/__sandbox/settings', { body: { clockOffsetMs: 1.5 } })).status,
		).toBe(400);
		expect(() => sandbox.configure({ clockOffsetMs: 'soon' as never })).toThrow(/clockOffsetMs/);
		await sandbox.reset();
		expect(sandbox.settings().clockOffsetMs).toBe(OFFSET); // back to the start option
	});
});

describe('sandbox Date header without an offset', () => {
	test('tells the sandbox clock, also on admin answers', async () => {
		const sandbox = await startSandbox({ ...MANUAL_CLOCK, seedUsers: 5 });
		try {
			expect((await call(sandbox, 'GET', '/__sandbox/clock')).headers.get('date')).toBe(
				httpDate(startMs),
			);
			await sandbox.clock.advance(61_000);
			expect((await call(sandbox, 'GET', '/user-device/users')).headers.get('date')).toBe(
				httpDate(startMs + 61_000),
			);
		} finally {
			await sandbox.stop();
		}
	});
});
