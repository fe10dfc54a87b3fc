import type { IExecuteFunctions } from 'n8n-workflow';

import { oneAtATime } from '../common/oneAtATime';
import { storeFailure, withStoreLock } from './lock';
import type { LockOutcome } from './lock';
import { storeState } from './state';

/*
 * Turns on a node's row, and the row's bound (README.md beside this file, "The bound"). Every work
 * this process has waiting for one node's row runs in one turn under the store's lock, and their
 * writes go in together (group commit): n8n rewrites the whole row at every call, so N works at once
 * pay about what one does. A write waits until every work of the turn waits for one (or has ended),
 * then those go in as one record and one removal; a work's own writes keep their order, so n8n dying
 * between two calls leaves each work at a point it allows. Two writes naming the same entry never go
 * together (n8n would count it new twice): the later one waits for the next round.
 */

/** The most entries a node's row holds once it holds records. */
export const ROW_ENTRIES = 200_000;
/** Present in a row that holds records: nothing of it is trimmed any more. */
const RECORDS_MARK = JSON.stringify(['storeHoldsRecords']);

/** What the writes of a work may let n8n drop, oldest first: all but the newest `n` entries of the
 * row besides its own values, or nothing (`'all'`: a write of records). */
export type Keep = number | 'all';

/** A node's row, entry by entry, as one work in a turn writes it (records.ts builds on it). */
export interface RowWrites {
	/** Records `values`; the values that were not there. */
	record(values: string[], keep: Keep): Promise<Set<string>>;
	remove(values: string[]): Promise<void>;
}

export type RowWork<T> = (writes: RowWrites) => Promise<T>;

interface WaitingWrite {
	kind: 'record' | 'remove';
	values: string[];
	keep: Keep;
	resolve: (fresh: Set<string>) => void;
	reject: (error: unknown) => void;
}

const ENTRIES = { mode: 'entries' } as const;

/** One round-based run of the works of a turn: their writes merged, round by round. */
class MergedWrites implements RowWrites {
	private waiting: WaitingWrite[] = [];
	private writing = false;
	/** Entries the turn's records added so far: one work's probe, taken out at its end, must not
	 * push out what another work relies on (alone, each would have had the row to itself). */
	private added = 0;
	/** The row's entries at most, once read in this turn. */
	private count: number | undefined;
	/** Whether the row holds records (its mark), once known in this turn. */
	private holdsRecords: boolean | undefined;
	/** The mark, recorded by a test of it, to take out again. */
	private markProbed = false;

	constructor(
		private readonly context: IExecuteFunctions,
		/** Works not ended yet. */
		private running: number,
	) {}

	async record(values: string[], keep: Keep): Promise<Set<string>> {
		return values.length > 0 ? await this.wait('record', values, keep) : new Set();
	}

	async remove(values: string[]): Promise<void> {
		if (values.length > 0) await this.wait('remove', values, 0);
	}

	/** A work ended: the others may be all waiting now. */
	ended(): void {
		this.running--;
		this.writeWhenAllWait();
	}

	/** Every work ended: the mark a test recorded goes out again. */
	async finish(): Promise<void> {
		if (this.markProbed) await this.removeValues([]);
	}

	private wait(kind: WaitingWrite['kind'], values: string[], keep: Keep): Promise<Set<string>> {
		return new Promise((resolve, reject) => {
			this.waiting.push({ kind, values, keep, resolve, reject });
			this.writeWhenAllWait();
		});
	}

	private writeWhenAllWait(): void {
		if (this.writing || this.waiting.length === 0 || this.waiting.length < this.running) return;
		this.writing = true;
		void this.writeRound().finally(() => {
			this.writing = false;
			this.writeWhenAllWait();
		});
	}

	/** Writes what waits: one record, then one removal (each work waits for one write at a time). */
	private async writeRound(): Promise<void> {
		const named = new Set<string>();
		const now: WaitingWrite[] = [];
		const later: WaitingWrite[] = [];
		for (const write of this.waiting) {
			if (write.values.some((value) => named.has(value))) later.push(write);
			else {
				now.push(write);
				for (const value of write.values) named.add(value);
			}
		}
		this.waiting = later;
		const records = now.filter((write) => write.kind === 'record');
		const removals = now.filter((write) => write.kind === 'remove');
		if (records.length > 0) {
			await this.settle(records, async () => await this.recordValues(records));
		}
		if (removals.length > 0) {
			await this.settle(removals, async () => {
				await this.removeValues(removals.flatMap((write) => write.values));
				return new Set<string>();
			});
		}
	}

	private async recordValues(records: WaitingWrite[]): Promise<Set<string>> {
		const helpers = this.context.helpers;
		const values = records.flatMap((write) => write.values);
		const ofRecords = records.some((write) => write.keep === 'all');
		if (ofRecords && this.holdsRecords !== true) values.push(RECORDS_MARK);
		this.count ??= await helpers.getProcessedDataCount('node', ENTRIES);
		const keeps = records.flatMap((write) => (write.keep === 'all' ? [] : [write.keep]));
		// Every work keeps what it asked for, and nothing this turn added pushes out anything.
		let maxEntries = ofRecords ? ROW_ENTRIES : Math.max(...keeps) + this.added + values.length;
		if (this.count + values.length > maxEntries && maxEntries < ROW_ENTRIES) {
			// This write would drop the oldest entries: not in a row that holds records.
			if (this.holdsRecords === undefined) {
				const absent = await helpers.checkProcessedAndRecord([RECORDS_MARK], 'node', ENTRIES);
				this.holdsRecords = absent.new.length === 0;
				this.markProbed = !this.holdsRecords;
				if (this.markProbed) this.count++;
			}
			if (this.holdsRecords) maxEntries = ROW_ENTRIES;
		}
		if (this.count + values.length > ROW_ENTRIES) {
			this.count = await helpers.getProcessedDataCount('node', ENTRIES);
			if (this.count + values.length > ROW_ENTRIES) {
				throw new Error(
					`this node's row is full (${ROW_ENTRIES} entries): nothing was written. It holds Digest windows, Cap per Person slots or Idempotency Keys; see the store's bound in the docs`,
				);
			}
		}
		const result = await helpers.checkProcessedAndRecord(values, 'node', {
			...ENTRIES,
			maxEntries,
		});
		if (ofRecords) this.holdsRecords = true;
		this.added += result.new.length;
		this.count = Math.min(maxEntries, this.count + result.new.length);
		return new Set(result.new.map(String));
	}

	private async removeValues(values: string[]): Promise<void> {
		const withMark = this.markProbed && !this.holdsRecords ? [...values, RECORDS_MARK] : values;
		await this.context.helpers.removeProcessed(withMark, 'node', ENTRIES);
		if (withMark !== values) this.markProbed = false;
	}

	private async settle(writes: WaitingWrite[], write: () => Promise<Set<string>>): Promise<void> {
		try {
			const fresh = await write();
			for (const each of writes)
				each.resolve(new Set(each.values.filter((value) => fresh.has(value))));
		} catch (error) {
			for (const each of writes) each.reject(error);
		}
	}
}

type Done = (outcome: LockOutcome<unknown>) => void;

/** The works waiting for one row's next turn. */
class RowTurn {
	private readonly works: Array<{ work: RowWork<unknown>; done: Done }> = [];

	/** Runs the works of the turn, merged, under the store's lock (again, all, when the lock was
	 * taken over meanwhile: each work reads what it decides from). */
	static async run(turn: RowTurn, context: IExecuteFunctions, row: string): Promise<void> {
		const close = () => {
			if (rowTurns.get(row) === turn) rowTurns.delete(row);
		};
		const outcome = await withStoreLock(context, async () => {
			close(); // works that come from now on wait for the next turn
			const writes = new MergedWrites(context, turn.works.length);
			const outcomes = await Promise.all(
				turn.works.map(async ({ work }): Promise<LockOutcome<unknown>> => {
					try {
						return { ok: true, value: await work(writes) };
					} catch (error) {
						return { ok: false, reason: storeFailure(error) };
					} finally {
						writes.ended();
					}
				}),
			);
			await writes.finish();
			return outcomes;
		});
		close();
		turn.works.forEach(({ done }, index) =>
			done(outcome.ok ? outcome.value[index] : { ok: false, reason: outcome.reason }),
		);
	}

	join<T>(work: RowWork<T>): Promise<LockOutcome<T>> {
		return new Promise((resolve) => this.works.push({ work, done: resolve as Done }));
	}
}

/** Per row, the works waiting for this process's next turn: they run in that one turn, their writes
 * merged. Process memory: across processes the store's lock orders the turns. */
let rowTurns = new Map<string, RowTurn>();

/** Rows with works waiting for a turn of this process (tests). */
export const rowTurnsWaiting = (): number => rowTurns.size;

/** Forgets the waiting works (tests, with the store's reset). */
export function resetRowTurns(): void {
	rowTurns = new Map();
}

/** The row of this node: its workflow and its id. */
const rowOf = (context: IExecuteFunctions) =>
	JSON.stringify([context.getWorkflow().id ?? '', context.getNode().id]);

/**
 * Runs `work` on this node's row in the next turn of this process, with the other works waiting for
 * it; with `alone` (a kind of work), never in the same turn as another work of that kind of this
 * process. When the store fails or the lock cannot be had, `work` does not run (or its result does
 * not count), and the reason comes back.
 */
export async function inRowTurn<T>(
	context: IExecuteFunctions,
	work: RowWork<T>,
	alone?: string,
): Promise<LockOutcome<T>> {
	const row = rowOf(context);
	if (alone !== undefined) {
		return await oneAtATime(
			storeState.aloneQueues,
			JSON.stringify([alone, row]),
			async () => await inRowTurn(context, work),
		);
	}
	const waiting = rowTurns.get(row);
	if (waiting) return await waiting.join(work);
	const turn = new RowTurn();
	rowTurns.set(row, turn);
	const joined = turn.join(work);
	void RowTurn.run(turn, context, row);
	return await joined;
}
