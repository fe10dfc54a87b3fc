/**
 * The leases of Idempotency Keys (the claim's, neverTwice/claimLease.ts, and the store lock's,
 * store/lock.ts) stop renewing when they end. On n8n 1.x `sleep` takes no abort signal:
 * there, a lease that slept its whole renewal interval (a quarter lease: 15 s for a claim) kept a
 * timer running long after its event ended. Here `sleep` is n8n 1.x's: a lease's timers must be
 * gone shortly after its end (none under way then is longer than a step of a stoppable wait), and no
 * renewal written after it. The timers are real: n8n's sleep is what is checked.
 */
import { ClaimLease } from '../../nodes/CompanionPush/neverTwice/claimLease';
import type { IdempotencyKeys } from '../../nodes/CompanionPush/neverTwice/idempotencyKeys';
import { withStoreLock } from '../../nodes/CompanionPush/store/lock';
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import { STOPPABLE_STEP_MS } from '../../nodes/CompanionPush/common/timings';
import { MemoryProcessedData, storeContext, until } from '../harness/index.cts';

/** The sleeps under way, each with its length: n8n 1.x's sleep, a timer whatever signal it is
 * given. */
const sleeping = new Map<number, number>();
jest.mock('n8n-workflow', () => ({
	...jest.requireActual('n8n-workflow'),
	sleep: async (ms: number) => {
		const id = Math.random();
		sleeping.set(id, ms);
		await new Promise((resolve) => setTimeout(resolve, ms));
		sleeping.delete(id);
	},
}));
/** How long a timer under way may still run: the longest sleep under way. */
const longestSleepUnderWay = () => Math.max(0, ...sleeping.values());

const settle = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

describe("a lease's timers end with it, with n8n 1.x's sleep", () => {
	beforeEach(() => {
		resetProcessState();
		sleeping.clear();
	});

	test("a claim's lease, ended right after its claim: its timer ends within a step (it renews every 15 s)", async () => {
		const renewals: number[] = [];
		const keys = {
			renew: async () => {
				renewals.push(Date.now());
				return { ok: true, value: Math.floor(Date.now() / MINUTE_MS) };
			},
		} as unknown as IdempotencyKeys;
		const nowMinute = Math.floor(Date.now() / MINUTE_MS);
		const lease = new ClaimLease(keys, { key: 'k', scope: 'node', keysToKeep: 10 }, ['batch'], {
			state: 'claimed',
			claimedAt: nowMinute * MINUTE_MS,
			markedMinutes: [nowMinute],
			acceptedBatches: new Set(),
			sameLayout: true,
		});
		await settle(50);
		expect(sleeping.size).toBe(1); // it waits for its first renewal
		await lease.end();
		expect(longestSleepUnderWay()).toBeLessThanOrEqual(STOPPABLE_STEP_MS);
		await until(() => sleeping.size === 0);
		expect(renewals).toEqual([]);
	});

	test("a claim's lease renewing every 0.1 s, ended during a renewal: that write ends first, and none follows", async () => {
		useTimings({ claimLeaseMs: 400 }); // a renewal every quarter lease: 0.1 s
		const renewals: number[] = [];
		let writing = false;
		const keys = {
			// A slow store whose writes never land: every renewal writes again.
			renew: async () => {
				renewals.push(Date.now());
				writing = true;
				await settle(50);
				writing = false;
				return { ok: false, reason: 'the store is busy' };
			},
		} as unknown as IdempotencyKeys;
		// Its last mark a minute ago: the current minute is still to be marked.
		const lastMinute = Math.floor(Date.now() / MINUTE_MS) - 1;
		const lease = new ClaimLease(keys, { key: 'k', scope: 'node', keysToKeep: 10 }, ['batch'], {
			state: 'claimed',
			claimedAt: lastMinute * MINUTE_MS,
			markedMinutes: [lastMinute],
			acceptedBatches: new Set(),
			sameLayout: true,
		});
		while (renewals.length < 2 || !writing) await settle(5);
		await lease.end();
		expect(writing).toBe(false); // end() waited for the write under way
		const writesAtEnd = renewals.length;
		expect(longestSleepUnderWay()).toBeLessThanOrEqual(STOPPABLE_STEP_MS);
		await until(() => sleeping.size === 0);
		// None follows (load only makes this window hold fewer intervals, never a false failure).
		await settle(500); // five renewal intervals
		expect(renewals).toHaveLength(writesAtEnd);
	});

	test("the store lock's lease, given back after its work: its timer ends within a step (it renews every 5 s)", async () => {
		const store = new MemoryProcessedData();
		const { context } = storeContext(store);
		const outcome = await withStoreLock(context, async () => {
			await settle(50);
			expect(sleeping.size).toBe(1); // the lease waits for its first renewal
			return 'worked';
		});
		expect(outcome).toEqual({ ok: true, value: 'worked' });
		expect(longestSleepUnderWay()).toBeLessThanOrEqual(STOPPABLE_STEP_MS);
		await until(() => sleeping.size === 0);
	});
});
