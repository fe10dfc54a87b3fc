/**
 * The store's lock (store/lock.ts) with several n8n processes sharing n8n's store: each
 * process is its own copy of the package's modules (its own process memory), and they share the
 * store stand-in (devkit/processedData.cts), whose `stall` holds the statements of one process: a
 * slow database, or a process cut off from it. The rule under test: two holders never both work
 * under the lock, and only the lock's own row is ever deleted.
 */
import type * as StoreLockModule from '../../nodes/CompanionPush/store/lock';
import { holderEntry, LOCK_VALUE } from '../../nodes/CompanionPush/store/lock';
import type * as ProcessStateModule from '../../devkit/processState.cts';
import { MemoryProcessedData as Store, storeContext, until } from '../harness/index.cts';
import type { MemoryProcessedData } from '../harness/index.cts';

/** One n8n process: its own copy of the lock and of process memory. */
type LockProcess = typeof StoreLockModule & typeof ProcessStateModule;

function aProcess(): LockProcess {
	let modules: LockProcess | undefined;
	jest.isolateModules(() => {
		/* eslint-disable @typescript-eslint/no-require-imports */
		modules = {
			...require('../../nodes/CompanionPush/store/lock'),
			...require('../../devkit/processState.cts'),
		};
		/* eslint-enable @typescript-eslint/no-require-imports */
	});
	modules!.useTimings(LEASE);
	return modules!;
}

/** A lease of 600 ms: renewed every 150 ms while its holder lives. */
const LEASE = { storeLockBudgetMs: 600, storeLockBreakJitterMs: 100 };
const LOCK_ROW = 'wf-lock|';
const KEYS_ROW = 'wf-lock|n:n-lock';
const WHERE = { workflow: { id: 'wf-lock', active: true }, node: { id: 'n-lock' } as never };

/** One run of a work under the lock: when, by whom. */
interface Work {
	by: string;
	startedAt: number;
	endedAt?: number;
}

const overlap = (a: Work, b: Work) =>
	a.startedAt < (b.endedAt ?? Infinity) && b.startedAt < (a.endedAt ?? Infinity);

describe("the Idempotency Keys' lock, with several n8n processes", () => {
	let store: MemoryProcessedData;
	let works: Work[];

	beforeEach(() => {
		store = new Store();
		works = [];
	});

	/** A work that writes the keys' row once (after `before`), and says which run of it this was. */
	const keysWrite =
		(
			by: string,
			context: ReturnType<typeof storeContext>['context'],
			before?: () => Promise<void>,
		) =>
		async () => {
			const work: Work = { by, startedAt: performance.now() };
			works.push(work);
			await before?.();
			await context.helpers.checkProcessedAndRecord([`${by}-${works.length}`], 'node', {
				mode: 'entries',
			});
			work.endedAt = performance.now();
			return work;
		};

	/** The runs that counted (their lock held to the end) never overlap. */
	const expectCountedAlone = (counted: Work[]) => {
		for (const [index, work] of counted.entries()) {
			for (const other of counted.slice(index + 1))
				expect({ work, other, overlap: overlap(work, other) }).toMatchObject({ overlap: false });
		}
	};

	test('a holder whose keys-row write stalls for three leases while it lives keeps the lock: nobody takes it over, the other works after it', async () => {
		const [a, b] = [aProcess(), aProcess()];
		const [inA, inB] = [
			storeContext(store, { nodeType: 'A' }),
			storeContext(store, { nodeType: 'B' }),
		];
		store.stall = ({ kind, row, nodeType }) =>
			kind !== 'select' && row === KEYS_ROW && nodeType === 'A'
				? new Promise((resolve) => setTimeout(resolve, 1_800))
				: undefined;
		const first = a.withStoreLock(inA.context, keysWrite('A', inA.context));
		await until(() => works.length === 1);
		const second = b.withStoreLock(inB.context, keysWrite('B', inB.context));
		const outcomes = await Promise.all([first, second]);

		expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true]);
		expect(works.map((work) => work.by)).toEqual(['A', 'B']);
		expectCountedAlone(works);
		expect([...inA.warnings, ...inB.warnings]).toEqual([]);
		expect(store.rows.has(LOCK_ROW)).toBe(false);
	});

	test("a holder cut off from the database for longer than the lease is taken over; at its end it leaves the new holder's lock alone, and its work runs again after", async () => {
		const [a, b, c] = [aProcess(), aProcess(), aProcess()];
		const [inA, inB, inC] = [
			storeContext(store, { nodeType: 'A' }),
			storeContext(store, { nodeType: 'B' }),
			storeContext(store, { nodeType: 'C' }),
		];
		let reconnect!: () => void;
		const cutOff = new Promise<void>((resolve) => (reconnect = resolve));
		let bHolds!: () => void;
		const bWorking = new Promise<void>((resolve) => (bHolds = resolve));
		let bMayEnd!: () => void;
		const bEnd = new Promise<void>((resolve) => (bMayEnd = resolve));
		// From its first work on, every statement of process A waits until it is reconnected.
		store.stall = ({ nodeType }) => (nodeType === 'A' && works.length > 0 ? cutOff : undefined);
		let aEnded = false;
		const fromA = a
			.withStoreLock(inA.context, keysWrite('A', inA.context))
			.finally(() => (aEnded = true));
		await until(() => works.length === 1);
		const fromB = b.withStoreLock(
			inB.context,
			keysWrite('B', inB.context, async () => {
				bHolds();
				await bEnd;
			}),
		);
		await bWorking;
		expect(inB.warnings.join()).toContain('was not renewed');
		reconnect();
		await until(
			() =>
				aEnded ||
				inA.warnings.some((warning) => warning.includes('was taken over by another process')),
		);
		// A ended without giving back B's lock: a third process still finds it taken.
		expect(store.rows.has(LOCK_ROW)).toBe(true);
		let cWorked = false;
		const fromC = c.withStoreLock(inC.context, async () => {
			cWorked = true;
			return { by: 'C', startedAt: 0, endedAt: 0 };
		});
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(cWorked).toBe(false);
		bMayEnd();
		const outcomes = await Promise.all([fromA, fromB, fromC]);

		expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true, true]);
		expect(works.filter((work) => work.by === 'A')).toHaveLength(2); // its first run did not count
		expectCountedAlone(
			outcomes.flatMap((outcome) =>
				outcome.ok && outcome.value.by !== 'C' ? [outcome.value] : [],
			),
		);
		expect(store.rows.has(LOCK_ROW)).toBe(false);
	});

	test('a lock left by a process that died, taken over by two processes at the same moment: the runs that count never overlap (10 rounds)', async () => {
		const [a, b] = [aProcess(), aProcess()];
		for (const process of [a, b]) process.useTimings({ ...LEASE, storeLockBreakJitterMs: 0 });
		const [inA, inB] = [
			storeContext(store, { nodeType: 'A' }),
			storeContext(store, { nodeType: 'B' }),
		];
		store.roundTripMs = 2;
		for (let round = 0; round < 10; round++) {
			works = [];
			await store.checkProcessedAndRecord(
				[LOCK_VALUE, holderEntry(`dead-${round}`)],
				'workflow',
				WHERE,
				{ mode: 'entries' },
			);
			const outcomes = await Promise.all([
				a.withStoreLock(inA.context, keysWrite('A', inA.context)),
				b.withStoreLock(inB.context, keysWrite('B', inB.context)),
			]);

			expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true]);
			expectCountedAlone(outcomes.flatMap((outcome) => (outcome.ok ? [outcome.value] : [])));
			expect(store.rows.has(LOCK_ROW)).toBe(false);
		}
	});

	test("a waiter that never sees the lock free while another process takes it turn after turn (a lease's worth of short turns) breaks none of them: each turn's row counts differently", async () => {
		const [a, b] = [aProcess(), aProcess()];
		const [inA, inB] = [
			storeContext(store, { nodeType: 'A' }),
			storeContext(store, { nodeType: 'B' }),
		];
		const TURNS_OF_A = 30; // 30 turns of 40 ms: twice the lease and its jitter
		let aDone = false;
		// B's reads of the lock's row land only while a row is there: between two turns of A, given
		// back and taken anew, B sees it taken, as a busy database's reads would.
		store.stall = ({ kind, row, nodeType }) =>
			nodeType === 'B' && kind === 'select' && row === LOCK_ROW && !store.rows.has(LOCK_ROW)
				? until(() => store.rows.has(LOCK_ROW) || aDone)
				: undefined;
		const slowWrite = (by: string, context: ReturnType<typeof storeContext>['context']) =>
			keysWrite(by, context, () => new Promise((resolve) => setTimeout(resolve, 40)));
		const fromA = Promise.all(
			Array.from({ length: TURNS_OF_A }, () =>
				a.withStoreLock(inA.context, slowWrite('A', inA.context)),
			),
		).finally(() => (aDone = true));
		await until(() => works.length === 1);
		const fromB = b.withStoreLock(inB.context, keysWrite('B', inB.context));
		const outcomes = [...(await fromA), await fromB];

		expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
		// Every turn of A counted the first time: none was taken over and run again.
		expect(works.filter((work) => work.by === 'A')).toHaveLength(TURNS_OF_A);
		expect([...inA.warnings, ...inB.warnings]).toEqual([]);
		expectCountedAlone(works);
		expect(store.rows.has(LOCK_ROW)).toBe(false);
	});

	test("a holder whose row a waiter's late write put back as an earlier turn left it (its token gone): its work counts, it gives the row back, and the next process takes the lock at once", async () => {
		const [a, c] = [aProcess(), aProcess()];
		const [inA, inC] = [
			storeContext(store, { nodeType: 'A' }),
			storeContext(store, { nodeType: 'C' }),
		];
		// An earlier turn's row, as a waiter read it before that turn gave it back.
		let earlierRow: unknown;
		await a.withStoreLock(inA.context, async () => {
			earlierRow = structuredClone(store.rows.get(LOCK_ROW));
		});
		expect(store.rows.has(LOCK_ROW)).toBe(false);
		// Its write lands in the middle of the next turn: n8n writes the row whole, as the waiter read it.
		const outcome = await a.withStoreLock(
			inA.context,
			keysWrite('A', inA.context, async () => {
				store.rows.set(LOCK_ROW, structuredClone(earlierRow) as never);
			}),
		);
		const waitStartedAt = performance.now();
		const next = await c.withStoreLock(inC.context, async () => performance.now() - waitStartedAt);

		expect(outcome.ok).toBe(true);
		expect(works.map((work) => work.by)).toEqual(['A']); // not run again
		expect(next).toEqual({ ok: true, value: expect.any(Number) });
		// Taken at once: no lease waited out for a row nobody renews.
		expect(next.ok && next.value).toBeLessThan(LEASE.storeLockBudgetMs);
		expect([...inA.warnings, ...inC.warnings]).toEqual([]);
		expect(store.rows.has(LOCK_ROW)).toBe(false);
	});

	describe('a row that is not the lock is reported, never deleted', () => {
		test("a Remove Duplicates node keeping the workflow's highest value there: reported at once, the row unchanged", async () => {
			await store.checkProcessedAndRecord(['42'], 'workflow', WHERE, {
				mode: 'latestIncrementalKey',
			});
			const { context } = storeContext(store);
			const outcome = await aProcess().withStoreLock(context, async () => 'worked');

			expect(outcome).toEqual({
				ok: false,
				reason: expect.stringContaining(
					'holds other data (a Remove Duplicates node of this workflow with Scope "Workflow"?)',
				),
			});
			expect(store.value('wf-lock', '')).toEqual({ mode: 'latestIncrementalKey', data: '42' });
		});

		test("a Remove Duplicates node keeping the workflow's values there: reported once the row stayed unchanged for a lease, its values left as they were", async () => {
			await store.checkProcessedAndRecord(['order-1', 'order-2'], 'workflow', WHERE, {
				mode: 'entries',
			});
			const before = store.entries('wf-lock', '');
			const { context, warnings } = storeContext(store);
			const outcome = await aProcess().withStoreLock(context, async () => 'worked');

			expect(outcome).toEqual({ ok: false, reason: expect.stringContaining('holds other data') });
			expect(store.entries('wf-lock', '')).toEqual(before);
			expect(warnings).toEqual([]);
		});

		test("a Remove Duplicates node whose only value there is the lock's own text (fed it by a webhook): reported once the row stayed unchanged for a lease, never deleted", async () => {
			await store.checkProcessedAndRecord([LOCK_VALUE], 'workflow', WHERE, { mode: 'entries' });
			const before = store.entries('wf-lock', '');
			const { context, warnings } = storeContext(store);
			const outcome = await aProcess().withStoreLock(context, async () => 'worked');

			expect(outcome).toEqual({ ok: false, reason: expect.stringContaining('holds other data') });
			expect(store.entries('wf-lock', '')).toEqual(before);
			expect(warnings).toEqual([]);
		});
	});
});
