import { call, MANUAL_CLOCK, sendBody, tokenFor, useSandbox } from '../harness/index.cts';

const SEND = 'POST /push-notification/send';
const httpDate = (ms: number) => new Date(ms).toUTCString();

/** Retry-After in seconds or as an HTTP date on the API's clock (rateLimit and status5xx faults). */
describe('sandbox Retry-After: seconds or an HTTP date (retryAfterAsDate)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20 });
	let token: string;
	let user: string;
	const post = () =>
		call(sandbox, 'POST', '/push-notification/send', { token, body: sendBody([user]) });
	/** Moves the clock to a whole second (it is kept across reset) and answers it, so dates are exact. */
	const wholeSecond = async () => {
		const past = sandbox.clock.now() % 1000;
		if (past > 0) await sandbox.clock.advance(1000 - past);
		return sandbox.clock.now();
	};
	beforeAll(async () => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		await sandbox.reset();
		token = await tokenFor(sandbox);
	});

	test('rateLimit with retryAfterAsDate: the API clock plus the seconds, as an HTTP date; nothing registered', async () => {
		const now = await wholeSecond();
		sandbox.addFault({
			endpoint: SEND,
			kind: 'rateLimit',
			retryAfterSeconds: 7,
			retryAfterAsDate: true,
		});
		const answer = await post();
		expect(answer.status).toBe(429);
		expect(answer.headers.get('retry-after')).toBe(httpDate(now + 7000));
		expect(sandbox.notifications()).toEqual([]);
	});

	test('the date is on the API clock (clockOffsetMs) and rounded up to the whole second', async () => {
		sandbox.configure({ clockOffsetMs: 120_000 });
		const now = await wholeSecond();
		await sandbox.clock.advance(400);
		sandbox.addFault({ endpoint: SEND, kind: 'rateLimit', retryAfterAsDate: true });
		const answer = await post();
		// API now = now + 120.4 s; plus the default 1 s = 121.4 s, rounded up to 122 s.
		expect(answer.headers.get('retry-after')).toBe(httpDate(now + 122_000));
		expect(answer.headers.get('date')).toBe(httpDate(now + 120_000));
	});

	test('status5xx: no Retry-After by default; seconds with retryAfterSeconds; a date with retryAfterAsDate, after processing too', async () => {
		const now = await wholeSecond();
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx' });
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 502, retryAfterSeconds: 5 });
		sandbox.addFault({
			endpoint: SEND,
			kind: 'status5xx',
			status: 504,
			retryAfterSeconds: 30,
			retryAfterAsDate: true,
			afterProcessing: true,
		});
		const answers = [await post(), await post(), await post()];
		expect(answers.map((answer) => [answer.status, answer.headers.get('retry-after')])).toEqual([
			[503, null],
			[502, '5'],
			[504, httpDate(now + 30_000)],
		]);
		expect(sandbox.notifications()).toHaveLength(1); // only the one processed before its 504
	});

	test('rateLimit keeps its seconds by default; retryAfterAsDate false is seconds too', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'rateLimit' });
		sandbox.addFault({
			endpoint: SEND,
			kind: 'rateLimit',
			retryAfterSeconds: 3,
			retryAfterAsDate: false,
		});
		expect([
			(await post()).headers.get('retry-after'),
			(await post()).headers.get('retry-after'),
		]).toEqual(['1', '3']);
	});

	test('only rateLimit and status5xx take retryAfterSeconds or retryAfterAsDate', () => {
		expect(() =>
			sandbox.addFault({ endpoint: SEND, kind: 'delay', retryAfterAsDate: true }),
		).toThrow(
			/invalid fault retryAfterAsDate: delay takes no retryAfterAsDate \(only rateLimit and status5xx do\)/,
		);
		expect(() =>
			sandbox.addFault({ endpoint: SEND, kind: 'status4xx', status: 429, retryAfterSeconds: 2 }),
		).toThrow(/retryAfterSeconds/);
	});

	test('over the admin HTTP API: POST /__sandbox/faults with retryAfterAsDate', async () => {
		const now = await wholeSecond();
		const added = await call(sandbox, 'POST', '/__sandbox/faults', {
			body: {
				endpoint: SEND,
				kind: 'status5xx',
				status: 503,
				retryAfterSeconds: 60,
				retryAfterAsDate: true,
			},
		});
		expect(added.status).toBe(200);
		expect((await post()).headers.get('retry-after')).toBe(httpDate(now + 60_000));
		expect(
			(
				await call(sandbox, 'POST', '/__sandbox/faults', {
					body: { endpoint: SEND, kind: 'forbidden', retryAfterAsDate: true },
				})
			).status,
		).toBe(400);
	});
});
