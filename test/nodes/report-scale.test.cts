/**
 * Get Report for a large audience: 100,000 users in 100 sends of 1,000 (the spec's batch size),
 * straight from the 100 items of a Send. Budget, checked here (no timing):
 * - calls: one detail read per send (100) and one token refresh, nothing else; never more reads in
 *   flight than Max Parallel Requests (the sandbox refuses the one over it with a 429);
 * - memory: the report keeps one row per user (its output: under 300 bytes of JSON per user, with
 *   the time to open and three escalation levels; about 268 measured with half the users opened)
 *   and each user's times, and at most Max Parallel Requests sends' delivery lists at once (each
 *   dropped once added); the summary's times to open are one number per user who opened. Heap,
 *   measured (garbage not collected yet included): the run's peak growth, in-process sandbox and
 *   n8n's engine included, under 400 MB (measured 264 to 319 MB, of which about 190 MB is reading
 *   the 100 sends at all: Get with Deliveries Omit peaks there too); what the output holds
 *   afterwards under 100 MB (measured 54 to 59 MB).
 */
import { withMemoryPeak } from '../../bench/measure.cts';
import {
	DETAIL,
	NODE_SANDBOX,
	REFRESH,
	runOn,
	send,
	tokenFor,
	useSandbox,
} from '../harness/index.cts';

const USERS = 100_000;
const PER_SEND = 1_000;
const PARALLEL = 20;
const MB = 1024 * 1024;

describe('Get Report: 100,000 users in 100 sends', () => {
	// Half the phones reached are tapped 30 ms after delivery, so most rows carry a time to open.
	const sandbox = useSandbox({
		...NODE_SANDBOX,
		seedUsers: USERS,
		maxInFlight: PARALLEL,
		autoTapShare: 0.5,
		autoTapAfterMs: 30,
	});
	let items: Array<{ id: string }>;
	beforeAll(async () => {
		const token = await tokenFor(sandbox);
		const { userIds } = sandbox.orgs.primary;
		items = [];
		for (let start = 0; start < USERS; start += PER_SEND) {
			items.push({ id: (await send(sandbox, token, userIds.slice(start, start + PER_SEND))).id });
		}
		await new Promise((resolve) => setTimeout(resolve, 200)); // deliveries settle (deliveryMs 20)
	}, 120_000);

	test.each(['summary', 'perUser'])(
		'output %s: 100 reads, 1 refresh, at most Max Parallel Requests in flight, within the memory budget',
		async (output) => {
			const logStart = sandbox.requestLog().length;
			const { value: result, memory } = await withMemoryPeak(() =>
				runOn(sandbox, {
					items,
					parameters: {
						resource: 'notification',
						operation: 'getReport',
						output,
						options: { maxParallelRequests: PARALLEL, escalationDeadlines: '15, 30, 45' },
					},
				}),
			);
			expect(result.error).toBeUndefined();
			const calls = sandbox.requestLog().slice(logStart);
			expect(calls.filter((entry) => entry.endpoint === DETAIL)).toHaveLength(100);
			expect(calls.filter((entry) => entry.endpoint === REFRESH)).toHaveLength(1);
			expect(calls).toHaveLength(101);
			expect(calls.filter((entry) => entry.status !== 200)).toEqual([]);

			let jsonBytes: number;
			if (output === 'summary') {
				expect(result.items).toHaveLength(1);
				const summary = result.items[0].json as {
					userCounts: { total: number; opened: number };
					users: unknown[];
					notifications: number;
					timeToOpen: { opened: number; timed: number; opensPerBucket: unknown[] };
				};
				expect(summary.notifications).toBe(100);
				expect(summary.userCounts.total).toBe(USERS);
				// Every open placed: each has its time to open (all within the first bucket).
				expect(summary.userCounts.opened).toBeGreaterThan(USERS / 4);
				expect(summary.timeToOpen).toMatchObject({
					opened: summary.userCounts.opened,
					timed: summary.userCounts.opened,
				});
				expect(summary.timeToOpen.opensPerBucket).toHaveLength(1);
				expect(summary.users).toHaveLength(USERS);
				jsonBytes = JSON.stringify(summary).length;
			} else {
				expect(result.items).toHaveLength(USERS);
				jsonBytes = result.items.reduce((sum, item) => sum + JSON.stringify(item.json).length, 0);
			}
			console.log(
				`Get Report (${output}), ${USERS} users in 100 sends: JSON ${(jsonBytes / USERS).toFixed(0)} bytes per user; ` +
					`heap peak +${(memory.heapDelta / MB).toFixed(0)} MB, held by the output +${(memory.retainedHeapDelta / MB).toFixed(0)} MB`,
			);
			expect(jsonBytes / USERS).toBeLessThan(300);
			expect(memory.heapDelta).toBeLessThan(400 * MB);
			expect(memory.retainedHeapDelta).toBeLessThan(100 * MB);
		},
		120_000,
	);
});
