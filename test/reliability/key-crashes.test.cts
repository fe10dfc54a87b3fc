/**
 * Idempotency Keys when n8n dies between two writes of the keys' row (SIGKILL, a crashed worker):
 * for every point a run can die at, what the next run's claim says must never be "used" for an
 * event that may not have been sent (it would be lost) nor "free" for one that may have been sent
 * (it would be sent twice), and the claim time it gives must never be later than the real claim's
 * (a lookup from a later time would miss the send and send it again).
 *
 * A run is an IdempotencyKeys over n8n's processed-data store (devkit/processedData.cts) whose
 * writes to the keys' row stop after the k-th: every later call fails, as in a process that is gone.
 */
import type { IDataObject } from 'n8n-workflow';

import { IdempotencyKeys } from '../../nodes/CompanionPush/neverTwice/idempotencyKeys';
import type {
	ClaimOutcome,
	IdempotencyKey,
	StoreClaim,
} from '../../nodes/CompanionPush/neverTwice/idempotencyKeys';
import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import { DEFAULT_TIMINGS, resetProcessState } from '../../devkit/processState.cts';
import { MemoryProcessedData, passTime, storeContext } from '../harness/index.cts';

const KEY: IdempotencyKey = { key: 'order-7: shipped', scope: 'node', keysToKeep: 100 };

/** A run of the node in a process that dies after `writesBeforeDeath` writes of the keys' row. */
function runIn(
	store: MemoryProcessedData,
	writesBeforeDeath = Infinity,
): { keys: IdempotencyKeys; writes: () => number } {
	let writes = 0;
	const keysRowWrite = () => {
		if (writes >= writesBeforeDeath) throw new Error('n8n was killed');
		writes++;
	};
	const { context } = storeContext(store, {
		workflowId: 'wf-crash',
		nodeId: 'n-crash',
		// The keys' row is the node's; the lock's, the workflow's.
		beforeWrite: (scope) => {
			if (scope === 'node') keysRowWrite();
		},
	});
	return { keys: new IdempotencyKeys(context), writes: () => writes };
}

const claimedEvent = (outcome: ClaimOutcome): StoreClaim => {
	if (outcome.state === 'storeFailed') throw new Error(`the store failed: ${outcome.reason}`);
	return outcome;
};

/** How many keys-row writes a sequence makes when nobody dies. */
async function writesOf(
	sequence: (run: ReturnType<typeof runIn>) => Promise<void>,
	before?: (store: MemoryProcessedData) => Promise<void>,
): Promise<number> {
	const store = new MemoryProcessedData();
	await before?.(store);
	const run = runIn(store);
	await sequence(run);
	return run.writes();
}

/** A run that comes once the lease of the run before ran out: it takes an unconfirmed claim over,
 * writing its own mark. */
const leaseRanOut = () => passTime(3 * MINUTE_MS);

/** The claim of such a run. */
async function afterLease(keys: IdempotencyKeys, layout: string[]): Promise<ClaimOutcome> {
	leaseRanOut();
	return await keys.claim(KEY, layout);
}

beforeEach(() => resetProcessState());
afterEach(() => jest.useRealTimers()); // after passTime

describe('n8n dies in the middle of an event with an Idempotency Key', () => {
	const layout = ['batch-a'];

	test('during the first run (claim, send, confirm): the next run never takes an unsent event as used, nor a sent one as free', async () => {
		const firstRun = async (
			{ keys }: ReturnType<typeof runIn>,
			done: { claimed?: StoreClaim; confirmed?: boolean } = {},
		) => {
			const claim = await keys.claim(KEY, layout);
			if (claim.state !== 'claimed') return;
			done.claimed = claim; // from here on, the send may have been made
			done.confirmed = (await keys.confirm(KEY, layout, claim.markedMinutes, 'madeHere')).ok;
		};
		const total = await writesOf((run) => firstRun(run));
		expect(total).toBeGreaterThanOrEqual(3);
		const seen: string[] = [];
		for (let deathAfter = 0; deathAfter <= total; deathAfter++) {
			const store = new MemoryProcessedData();
			const done: { claimed?: StoreClaim; confirmed?: boolean } = {};
			await firstRun(runIn(store, deathAfter), done);
			const next = claimedEvent(await afterLease(runIn(store).keys, layout));
			seen.push(`${deathAfter}: ${next.state}`);
			if (done.confirmed) {
				expect([deathAfter, next.state]).toEqual([deathAfter, 'used']);
			} else if (done.claimed) {
				expect([deathAfter, next.state]).toEqual([deathAfter, 'unconfirmed']);
				if (next.claimedAt !== undefined)
					expect(next.claimedAt).toBeLessThanOrEqual(done.claimed.claimedAt!);
			} else {
				expect([deathAfter, next.state]).not.toEqual([deathAfter, 'used']);
			}
		}
		// The run that lived to the end: used; one that died right after claiming: unconfirmed.
		expect(seen[total]).toBe(`${total}: used`);
	});

	test('a later copy of a used event dies while testing the key: the key stays used, or unknown, never free', async () => {
		const confirmOnce = async (store: MemoryProcessedData) => {
			const { keys } = runIn(store);
			const claim = claimedEvent(await keys.claim(KEY, layout));
			expect((await keys.confirm(KEY, layout, claim.markedMinutes, 'madeHere')).ok).toBe(true);
			return claim.claimedAt!;
		};
		const total = await writesOf(
			async ({ keys }) => void (await afterLease(keys, layout)),
			async (store) => void (await confirmOnce(store)),
		);
		for (let deathAfter = 0; deathAfter <= total; deathAfter++) {
			const store = new MemoryProcessedData();
			const claimedAt = await confirmOnce(store);
			await afterLease(runIn(store, deathAfter).keys, layout);
			const next = claimedEvent(await afterLease(runIn(store).keys, layout));
			expect([deathAfter, next.state]).not.toEqual([deathAfter, 'claimed']);
			// Unconfirmed only from a time that cannot miss the send: none (unknown), or its own.
			if (next.state === 'unconfirmed' && next.claimedAt !== undefined)
				expect(next.claimedAt).toBeLessThanOrEqual(claimedAt);
		}
	});

	test('a later copy of an unconfirmed event dies while probing its claim: the claim time and the batches sent stay true, or unknown', async () => {
		const twoBatches = ['batch-a', 'batch-b'];
		// A run claimed the event, sent batch a, and died before batch b.
		const leaveUnconfirmed = async (store: MemoryProcessedData) => {
			const { keys } = runIn(store);
			const claim = claimedEvent(await keys.claim(KEY, twoBatches));
			expect((await keys.batchAccepted(KEY, twoBatches, 'batch-a')).ok).toBe(true);
			return claim.claimedAt!;
		};
		const total = await writesOf(
			async ({ keys }) => void (await afterLease(keys, twoBatches)),
			async (store) => void (await leaveUnconfirmed(store)),
		);
		expect(total).toBeGreaterThanOrEqual(3); // the probes, the takeover's mark, their removal
		for (let deathAfter = 0; deathAfter <= total; deathAfter++) {
			const store = new MemoryProcessedData();
			const claimedAt = await leaveUnconfirmed(store);
			await afterLease(runIn(store, deathAfter).keys, twoBatches);
			const next = claimedEvent(await afterLease(runIn(store).keys, twoBatches));
			const unknown = !next.sameLayout || next.claimedAt === undefined;
			const view: IDataObject = {
				deathAfter,
				state: next.state,
				claimedAt: unknown ? 'unknown' : next.claimedAt,
			};
			expect([
				{ deathAfter, state: 'unconfirmed', claimedAt },
				{ deathAfter, state: 'unconfirmed', claimedAt: 'unknown' },
			]).toContainEqual(view);
			// Only a probe cut short makes it unknown; one that ended tells the truth.
			if (deathAfter === total) expect(unknown).toBe(false);
			expect([...next.acceptedBatches].filter((batch) => batch !== 'batch-a')).toEqual([]);
		}
	});

	test("a copy for other recipients dies while probing: it never makes them look like the claim's own (which would look the batches up one by one)", async () => {
		const claimedBatches = ['batch-a', 'batch-b'];
		const otherBatches = ['batch-c'];
		const leaveUnconfirmed = async (store: MemoryProcessedData) =>
			void claimedEvent(await runIn(store).keys.claim(KEY, claimedBatches));
		const total = await writesOf(
			async ({ keys }) => void (await afterLease(keys, otherBatches)),
			leaveUnconfirmed,
		);
		for (let deathAfter = 0; deathAfter <= total; deathAfter++) {
			const store = new MemoryProcessedData();
			await leaveUnconfirmed(store);
			await afterLease(runIn(store, deathAfter).keys, otherBatches);
			const next = claimedEvent(await afterLease(runIn(store).keys, otherBatches));
			// Either answer makes the caller report the outcome as unknown.
			expect({
				deathAfter,
				state: next.state,
				tellsUnknown: !next.sameLayout || next.claimedAt === undefined,
			}).toEqual({ deathAfter, state: 'unconfirmed', tellsUnknown: true });
		}
	});

	test('a probe of a claim whose lease runs leaves the row as it found it: held, with the claim time and the batch sent', async () => {
		const twoBatches = ['batch-a', 'batch-b'];
		const store = new MemoryProcessedData();
		const { keys } = runIn(store);
		const claim = claimedEvent(await keys.claim(KEY, twoBatches));
		await keys.batchAccepted(KEY, twoBatches, 'batch-a');
		const before = [...store.entries('wf-crash', 'n:n-crash')].sort();
		const probed = claimedEvent(await runIn(store).keys.claim(KEY, twoBatches));
		expect(probed).toMatchObject({
			state: 'held',
			claimedAt: claim.claimedAt,
			// The end of the claim's minute, plus the lease.
			heldUntil: claim.claimedAt! + MINUTE_MS + DEFAULT_TIMINGS.claimLeaseMs,
			sameLayout: true,
		});
		expect([...probed.acceptedBatches]).toEqual(['batch-a']);
		expect([...store.entries('wf-crash', 'n:n-crash')].sort()).toEqual(before);
	});
});

describe('a claim whose holder is gone is taken over by one run only', () => {
	test('the run that took it over holds it: a third run finds it held (from the first claim on), never takes it too', async () => {
		const layout = ['batch-a'];
		const store = new MemoryProcessedData();
		const first = claimedEvent(await runIn(store).keys.claim(KEY, layout));
		const taken = claimedEvent(await afterLease(runIn(store).keys, layout));
		const third = claimedEvent(await runIn(store).keys.claim(KEY, layout));

		expect(taken).toMatchObject({ state: 'unconfirmed', claimedAt: first.claimedAt });
		expect(third).toMatchObject({ state: 'held', claimedAt: first.claimedAt });
		expect(third.heldUntil).toBeGreaterThan(Date.now());
	});

	test('a holder that marked its end is taken over at once, its lease not waited out; the end goes with the takeover', async () => {
		const layout = ['batch-a'];
		const store = new MemoryProcessedData();
		const first = claimedEvent(await runIn(store).keys.claim(KEY, layout));
		expect((await runIn(store).keys.ended(KEY, layout)).ok).toBe(true);
		const taken = claimedEvent(await runIn(store).keys.claim(KEY, layout));
		const third = claimedEvent(await runIn(store).keys.claim(KEY, layout));

		// Ended: held until the end of the minute it ended in, no lease added.
		expect(taken).toMatchObject({ state: 'unconfirmed', claimedAt: first.claimedAt });
		expect(taken.heldUntil).toBeLessThanOrEqual(Math.ceil(Date.now() / MINUTE_MS) * MINUTE_MS);
		expect(third.state).toBe('held');
	});
});
