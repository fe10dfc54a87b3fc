/**
 * The store layer (nodes/CompanionPush/store) held against its reference: a Map of records. Several
 * simulated n8n processes (each its own copy of the package's modules) run turns of reads, writes
 * and deletes on one node's row of n8n's store (devkit/processedData.cts: hashes only, whole-row
 * rewrites, oldest first out, one creator of a row). fast-check's scheduler picks the order in which
 * their calls to the store go out; a process may have one call throw (before or after it took
 * effect), or stop for good between two calls (its lock then taken over after its lease, on a clock
 * the test moves). What must hold:
 * - every read returns what the reference holds, and only after a call that failed or a process
 *   that stopped may a record read back as the text before that call, the text after it, or LOST:
 *   never a text nobody wrote whole;
 * - two turns never run at the same time.
 */
import fc from 'fast-check';
import type { IExecuteFunctions } from 'n8n-workflow';

import { MemoryProcessedData } from '../../devkit/processedData.cts';
import type * as ProcessStateModule from '../../devkit/processState.cts';
import type * as StoreModule from '../../nodes/CompanionPush/store';
import type * as LockModule from '../../nodes/CompanionPush/store/lock';
import type { RecordRead } from '../../nodes/CompanionPush/store';

type AProcess = typeof StoreModule & typeof ProcessStateModule & typeof LockModule;

/** A lease of 2 s on the test's clock. */
const LEASE = { storeLockBudgetMs: 2_000, storeLockBreakJitterMs: 200 };

/** One n8n process: its own copy of the package's modules (its process memory), sharing n8n-workflow. */
function aProcess(): AProcess {
	const workflowModule: unknown = jest.requireActual('n8n-workflow');
	let modules: AProcess | undefined;
	jest.isolateModules(() => {
		jest.doMock('n8n-workflow', () => workflowModule);
		/* eslint-disable @typescript-eslint/no-require-imports */
		modules = {
			...require('../../devkit/processState.cts'),
			...require('../../nodes/CompanionPush/store'),
			...require('../../nodes/CompanionPush/store/lock'),
		};
		/* eslint-enable @typescript-eslint/no-require-imports */
	});
	jest.dontMock('n8n-workflow');
	return modules!;
}

type Op =
	| { kind: 'read'; names: string[] }
	| { kind: 'write'; records: Array<[string, string]> }
	| { kind: 'delete'; names: string[] };

/** What a process's calls to the store do wrong: its n-th call that writes the node's row throws
 * (before or after it took effect), for each n in `throws`; it stops for good at its `stopAt`-th
 * call that writes (the lock's row or the node's). */
interface Faults {
	throws: Array<[at: number, kind: 'before' | 'after']>;
	stopAt: number | null;
}

const NAMES = ['a', 'b'];
const name = fc.constantFrom(...NAMES);
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', 'ü€😀', 'x'.repeat(160)));
const op: fc.Arbitrary<Op> = fc.oneof(
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant('read' as const),
			names: fc.uniqueArray(name, { minLength: 1, maxLength: 2 }),
		}),
	},
	{
		weight: 3,
		arbitrary: fc.record({
			kind: fc.constant('write' as const),
			records: fc.array(fc.tuple(name, text), { minLength: 1, maxLength: 2 }),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant('delete' as const),
			names: fc.uniqueArray(name, { minLength: 1, maxLength: 2 }),
		}),
	},
);
const turn = fc.array(op, { minLength: 1, maxLength: 3 });
const plan = fc.record({
	turns: fc.array(turn, { minLength: 1, maxLength: 4 }),
	faults: fc.record({
		throws: fc.uniqueArray(
			fc.tuple(fc.nat({ max: 10 }), fc.constantFrom('before' as const, 'after' as const)),
			{
				maxLength: 3,
				selector: ([at]) => at,
			},
		),
		stopAt: fc.option(fc.nat({ max: 30 }), { freq: 3 }),
	}),
});

/** What a record may read back as: a key per outcome. */
const LOST_KEY = 'lost';
const keyOf = (read: RecordRead): string =>
	typeof read === 'string' ? `text:${read}` : read === undefined ? 'none' : LOST_KEY;

/** The reference: a Map of records, with what each may read back as after a failed call. */
class Reference {
	private readonly possible = new Map<string, Set<string>>(
		NAMES.map((n) => [n, new Set(['none'])]),
	);
	readonly mismatches: string[] = [];

	read(names: string[], reads: RecordRead[]): void {
		names.forEach((each, index) => {
			const got = keyOf(reads[index]);
			const allowed = this.possible.get(each)!;
			if (!allowed.has(got))
				this.mismatches.push(`${each} read as ${got}, expected one of ${[...allowed].join(' | ')}`);
			this.possible.set(each, new Set([got]));
		});
	}

	applied(op: Op): void {
		if (op.kind === 'write') {
			for (const [each, value] of op.records) this.possible.set(each, new Set([keyOf(value)]));
		}
		if (op.kind === 'delete')
			for (const each of op.names) this.possible.set(each, new Set(['none']));
	}

	/** Entries were dropped from the row, oldest first, by a writer outside the store layer: each
	 * record is as it was, lost, or gone without a trace. */
	trimmed(): void {
		for (const allowed of this.possible.values()) allowed.add(LOST_KEY).add('none');
	}

	/** A call of `op` failed or its process stopped: each record it names is as before, as after, or lost. */
	cutShort(op: Op): void {
		const after = new Map<string, string>();
		if (op.kind === 'write') for (const [each, value] of op.records) after.set(each, keyOf(value));
		if (op.kind === 'delete') for (const each of op.names) after.set(each, 'none');
		const names = op.kind === 'write' ? op.records.map(([each]) => each) : op.names;
		for (const each of names) {
			const allowed = this.possible.get(each)!;
			// A lost record rewritten is cleared first: cut short after that, it is gone.
			if (allowed.has(LOST_KEY) && op.kind !== 'read') allowed.add('none');
			allowed.add(LOST_KEY);
			if (after.has(each)) allowed.add(after.get(each)!);
		}
	}
}

/** A process has stopped: none of its calls goes out any more. */
class Stopped extends Error {}

/**
 * A node context of one process over the shared store: every call waits for the scheduler to let
 * it go, and the process's fault happens at its `at`-th call that writes.
 */
function contextOf(
	store: MemoryProcessedData,
	scheduler: fc.Scheduler,
	label: string,
	faults: Faults,
	stopped: { now: boolean },
): IExecuteFunctions {
	const where = { workflow: { id: 'wf', active: true }, node: { id: 'n', type: label } as never };
	let writes = 0;
	let rowWrites = 0;
	const call = async <T,>(
		kind: string,
		scope: 'node' | 'workflow',
		writing: boolean,
		run: () => Promise<T>,
	): Promise<T> => {
		await scheduler.schedule(Promise.resolve(), `${label} ${kind} ${scope}`);
		if (stopped.now) throw new Stopped(`${label} stopped`);
		if (!writing) return await run();
		if (writes++ === faults.stopAt) {
			stopped.now = true;
			throw new Stopped(`${label} stopped`);
		}
		const at = scope === 'node' ? rowWrites++ : -1;
		const thrown = faults.throws.find(([each]) => each === at);
		if (!thrown) return await run();
		if (thrown[1] === 'after') await run();
		throw new Error(`${label}: the database failed (${thrown[1]} the write)`);
	};
	const helpers = {
		checkProcessedAndRecord: (items: string[], scope: 'node' | 'workflow', options: never) =>
			call('record', scope, true, () =>
				store.checkProcessedAndRecord(items, scope, where, options),
			),
		removeProcessed: (items: string[], scope: 'node' | 'workflow', options: never) =>
			call('remove', scope, true, () => store.removeProcessed(items, scope, where, options)),
		clearAllProcessedItems: (scope: 'node' | 'workflow') =>
			call('clear', scope, true, () => store.clearAllProcessedItems(scope, where)),
		getProcessedDataCount: (scope: 'node' | 'workflow', options: never) =>
			call('count', scope, false, () => store.getProcessedDataCount(scope, where, options)),
	};
	return {
		helpers,
		getWorkflow: () => ({ id: 'wf' }),
		getNode: () => ({ id: 'n', name: 'Send', type: label }),
		logger: { warn: () => undefined },
	} as unknown as IExecuteFunctions;
}

/** Lets every call, timer and immediate run, in the scheduler's order, until `done` settles. */
async function drive(scheduler: fc.Scheduler, done: Promise<unknown>): Promise<void> {
	let settled = false;
	void done.finally(() => (settled = true));
	const immediate = () => new Promise((resolve) => setImmediate(resolve));
	for (let step = 0; !settled; step++) {
		if (step > 200_000) throw new Error('the processes never ended');
		for (let round = 0; round < 3; round++) await immediate();
		if (scheduler.count() > 0) await scheduler.waitNext(1);
		else if (jest.getTimerCount() > 0) jest.advanceTimersToNextTimer();
	}
	await done;
}

describe('the store layer against its reference (a Map of records)', () => {
	const processes = [aProcess(), aProcess(), aProcess()];
	const olderVersion = aProcess();

	beforeEach(() => {
		jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
	});
	afterEach(() => jest.useRealTimers());

	test('interleaved turns of three processes, with a failed call or a stop anywhere: every read as the reference says, no two turns at once', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.scheduler(),
				fc.array(plan, { minLength: 2, maxLength: 3 }),
				fc.option(fc.integer({ min: 1, max: 80 }), { freq: 3 }),
				async (scheduler, plans, trimmed) => {
					const store = new MemoryProcessedData();
					const reference = new Reference();
					let inTurn = 0;
					const overlaps: string[] = [];
					const runs = plans.map(async ({ turns, faults }, index) => {
						const label = `P${index}`;
						const process = processes[index];
						process.resetProcessState();
						process.useTimings(LEASE);
						const stopped = { now: false };
						const context = contextOf(store, scheduler, label, faults, stopped);
						for (const ops of turns) {
							if (stopped.now) return;
							let failed = false;
							await process.inStoreTurn(context, async (storeTurn) => {
								if (inTurn++ > 0) overlaps.push(`${label} began a turn inside another`);
								try {
									for (const each of ops) {
										try {
											if (each.kind === 'read')
												reference.read(each.names, await storeTurn.read(each.names));
											if (each.kind === 'write') await storeTurn.write(each.records);
											if (each.kind === 'delete') await storeTurn.delete(each.names);
										} catch (error) {
											reference.cutShort(each);
											failed = true;
											throw error;
										}
										reference.applied(each);
									}
								} finally {
									inTurn--;
								}
							});
							// A failed turn's lock may be lost or given back: the next turn reads anew.
							if (failed) continue;
						}
					});
					// An older version of the package in another worker, whose keys' write (under the same
					// lock) drops the oldest entries of the row: what the store's bound keeps from happening.
					if (trimmed !== null) {
						olderVersion.resetProcessState();
						olderVersion.useTimings(LEASE);
						const context = contextOf(
							store,
							scheduler,
							'OLD',
							{ throws: [], stopAt: null },
							{
								now: false,
							},
						);
						runs.push(
							olderVersion
								.withStoreLock(context, async () => {
									const count = await context.helpers.getProcessedDataCount('node', {
										mode: 'entries',
									});
									await context.helpers.checkProcessedAndRecord(['an older key'], 'node', {
										mode: 'entries',
										maxEntries: Math.max(1, count + 1 - trimmed),
									});
									reference.trimmed();
								})
								.then(() => undefined),
						);
					}
					await drive(scheduler, Promise.all(runs));
					expect({ mismatches: reference.mismatches, overlaps }).toEqual({
						mismatches: [],
						overlaps: [],
					});
				},
			),
			{ numRuns: 200 },
		);
		// 200 runs take seconds; the limit only stops a run that hangs, on a loaded machine.
	}, 300_000);
});
