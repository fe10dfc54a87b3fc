/**
 * Parallel requests: sends of different items and the batches of one audience go out together
 * (Max Parallel Requests), answers come back in any order, and the output keeps the items' order
 * and pairing. A service that answers 429 slows every request of the credential down (the pace)
 * instead of failing items. No timing is asserted: orders, counts and the sandbox's log are.
 */
import { paceOf } from '../../nodes/CompanionPush/transport/retry';
import {
	count,
	DETAIL,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	onTestClock,
	pairedOf,
	runOn,
	runProbe,
	SEND,
	SEND_LIST,
	sendParameters,
	storeFor,
	useSandbox,
	useTestSandboxes,
} from '../harness/index.cts';

describe('parallel sends', () => {
	// Jitter makes answers come back in another order than the requests went out.
	const sandbox = useSandbox({
		...NODE_SANDBOX,
		seedUsers: 120,
		latencyMs: 2,
		latencyJitterMs: 30,
		seed: 5,
		resetBeforeEach: true,
	});
	let users: string[];

	beforeAll(async () => {
		users = sandbox.orgs.primary.usersOfKind('onePhone', 40);
	});

	test('40 items, 20 at a time: requests overlap, the output keeps item order and pairing', async () => {
		const items = users.map((userId, index) => ({ userId, title: `Parallel ${index}` }));
		const { items: output, error } = await runOn(sandbox, {
			items,
			parameters: sendParameters({
				title: '={{ $json.title }}',
				userIds: '={{ $json.userId }}',
				options: { maxParallelRequests: 20 },
			}),
		});

		expect(error).toBeUndefined();
		expect(pairedOf(output)).toEqual(items.map((_, index) => [index]));
		expect(jsonOf(output).map((json) => json.title)).toEqual(items.map((item) => item.title));
		// Each output id is the send registered with that item's title.
		const titleOfId = new Map(
			logOf(sandbox, SEND).map((entry) => [
				entry.notificationId,
				(entry.body as { title: string }).title,
			]),
		);
		expect(jsonOf(output).map((json) => titleOfId.get(json.id as string))).toEqual(
			items.map((item) => item.title),
		);
		// They really went out together: the answers (held for a jittered latency) ended in another
		// order than the items'.
		const answered = [...logOf(sandbox, SEND)].sort(
			(a, b) => a.time + (a.latencyMs ?? 0) - (b.time + (b.latencyMs ?? 0)),
		);
		expect(answered.map((entry) => (entry.body as { title: string }).title)).not.toEqual(
			items.map((item) => item.title),
		);
	});

	test('the batches of one audience go out in parallel and come back in batch order', async () => {
		const { items: output } = await runOn(sandbox, {
			parameters: sendParameters({
				userIds: users.join(','),
				options: { batchSize: 3, maxParallelRequests: 10 },
			}),
		});
		expect(jsonOf(output).map((json) => json.batch)).toEqual(
			Array.from({ length: 14 }, (_, index) => index + 1),
		);
		expect(jsonOf(output).flatMap((json) => json.targetUserIds as string[])).toEqual(users);
	});

	test('Wait for Final Status follows all the sends at once', async () => {
		const items = users.slice(0, 12).map((userId) => ({ userId }));
		const { items: output } = await onTestClock(() =>
			runOn(sandbox, {
				items,
				parameters: sendParameters({
					userIds: '={{ $json.userId }}',
					options: { waitForFinalStatus: true, waitTimeout: 30 },
				}),
			}),
		);
		expect(jsonOf(output).map((json) => [json.finalStatusReached, json.status])).toEqual(
			items.map(() => [true, 'sent']),
		);
		// Followed together: each round is one read of the list for all twelve, no detail read.
		expect(count(sandbox, DETAIL)).toBe(0);
		expect(count(sandbox, SEND_LIST)).toBeGreaterThanOrEqual(1);
		expect(count(sandbox, SEND_LIST)).toBeLessThanOrEqual(5);
	});

	test('Wait for Final Status follows every send at once, not Max Parallel Requests at a time', async () => {
		const items = users.slice(0, 12).map((userId) => ({ userId }));
		const { items: output } = await onTestClock(() =>
			runOn(sandbox, {
				items,
				parameters: sendParameters({
					userIds: '={{ $json.userId }}',
					options: { maxParallelRequests: 2, waitForFinalStatus: true, waitTimeout: 30 },
				}),
			}),
		);
		expect(jsonOf(output).map((json) => [json.finalStatusReached, json.status])).toEqual(
			items.map(() => [true, 'sent']),
		);
		// Two at a time, six waves of follow-ups would each need their own rounds of list reads.
		expect(count(sandbox, DETAIL)).toBe(0);
		expect(count(sandbox, SEND_LIST)).toBeLessThanOrEqual(5);
	});

	test('a list without statuses: the detail reads of a round stay within Max Parallel Requests', async () => {
		sandbox.configure({ listOmitsFields: ['status'], maxInFlight: 3 });
		const items = users.slice(0, 12).map((userId) => ({ userId }));
		const { items: output } = await onTestClock(() =>
			runOn(sandbox, {
				items,
				parameters: sendParameters({
					userIds: '={{ $json.userId }}',
					options: { maxParallelRequests: 3, waitForFinalStatus: true, waitTimeout: 30 },
				}),
			}),
		);
		expect(jsonOf(output).map((json) => [json.finalStatusReached, json.status])).toEqual(
			items.map(() => [true, 'sent']),
		);
		expect(count(sandbox, DETAIL)).toBeGreaterThanOrEqual(12);
		// The sandbox answers 429 to a fourth request in flight: none was needed.
		expect(sandbox.requestLog().filter((entry) => entry.limitedBy === 'maxInFlight')).toEqual([]);
	});

	test('Get with waiting on many items: the items run in parallel, in item order in the output', async () => {
		const sent = await runOn(sandbox, {
			items: users.slice(0, 8).map((userId) => ({ userId })),
			parameters: sendParameters({ userIds: '={{ $json.userId }}' }),
		});
		const ids = jsonOf(sent.items).map((json) => json.id as string);
		const logStart = sandbox.requestLog().length;
		const { items: output } = await onTestClock(() =>
			runOn(sandbox, {
				items: ids.map((id) => ({ id })),
				parameters: {
					resource: 'notification',
					operation: 'get',
					notificationId: '={{ $json.id }}',
					options: { waitForFinalStatus: true, deliveries: 'omit' },
				},
			}),
		);
		expect(jsonOf(output).map((json) => json.id)).toEqual(ids);
		expect(pairedOf(output)).toEqual(ids.map((_, index) => [index]));
		const reads = sandbox
			.requestLog()
			.slice(logStart)
			.filter((entry) => entry.endpoint === DETAIL);
		expect(new Set(reads.slice(0, 8).map((entry) => entry.path)).size).toBe(8);
	});
});

describe('a rate-limited service: the pace slows down, no item fails', () => {
	const sandboxes = useTestSandboxes();

	test('at most 3 requests in flight: 30 sends at 20 at a time all go out once, after 429s', async () => {
		const sandbox = await sandboxes.start({
			...NODE_SANDBOX,
			seedUsers: 200,
			latencyMs: 15,
			maxInFlight: 3,
		});
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 30);
		const credentials = storeFor(sandbox);
		const { items: output, error } = await runOn(sandbox, {
			credentials,
			items: users.map((userId) => ({ userId })),
			parameters: sendParameters({
				userIds: '={{ $json.userId }}',
				options: { maxParallelRequests: 20 },
			}),
		});

		expect(error).toBeUndefined();
		expect(jsonOf(output).every((json) => typeof json.id === 'string')).toBe(true);
		const accepted = logOf(sandbox, SEND).filter((entry) => entry.notificationId !== undefined);
		expect(
			accepted
				.map((entry) => (entry.body as { target_user_ids: string[] }).target_user_ids[0])
				.sort(),
		).toEqual([...users].sort());
		const limited = logOf(sandbox, SEND).filter((entry) => entry.limitedBy === 'maxInFlight');
		expect(limited.length).toBeGreaterThan(0);
		// The credential's pace now allows fewer in flight than the node asked for.
		const pace = await runProbe(credentials, async function () {
			return [[{ json: { limit: paceOf(this).limit } }]];
		});
		expect(pace.items[0].json.limit).toBeLessThan(20);
	});

	test('10 requests per second: 80 sends, none failed, none twice', async () => {
		// Low enough that even a slow machine sends faster than it, so the limit is surely met.
		const sandbox = await sandboxes.start({
			...NODE_SANDBOX,
			seedUsers: 400,
			rateLimitPerSecond: 10,
		});
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 80);
		expect(users).toHaveLength(80);
		const { items: output, error } = await runOn(sandbox, {
			items: users.map((userId) => ({ userId })),
			parameters: sendParameters({
				userIds: '={{ $json.userId }}',
				options: { maxParallelRequests: 20 },
			}),
		});
		expect(error).toBeUndefined();
		expect(jsonOf(output).filter((json) => typeof json.id === 'string')).toHaveLength(80);
		const accepted = logOf(sandbox, SEND).filter((entry) => entry.notificationId !== undefined);
		expect(accepted).toHaveLength(80);
		expect(
			new Set(
				accepted.map((entry) => (entry.body as { target_user_ids: string[] }).target_user_ids[0]),
			).size,
		).toBe(80);
		expect(
			logOf(sandbox, SEND).filter((entry) => entry.limitedBy === 'rateLimitPerSecond').length,
		).toBeGreaterThan(0);
	});
});
