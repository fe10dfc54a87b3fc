import type { IExecuteFunctions } from 'n8n-workflow';

import * as processState from './storeQueues';
import { storeFailure, withStoreLock } from './storeLock';
import type { LockOutcome } from './storeLock';

/*
 * Group commit of the keys' row: every claim, renewal, end and confirmation of Idempotency Keys
 * that this process has waiting for one node's row runs in one turn under the store's lock, and
 * their writes go in together. n8n reads and rewrites the whole row at every call, so a write costs
 * as much as the row is long (Keys to Keep): merged, N events at once pay about what one does.
 *
 * Each event's work (idempotencyKeys.ts) runs as written, one write after the other; a write waits
 * until every work of the turn waits for one (or has ended), then those writes go in as one record
 * and one removal. Its own writes keep their order, so n8n dying between two calls leaves each event
 * at a point its protocol allows. Two writes naming the same entry never go together (n8n would
 * count it new twice): the later one waits for the next round.
 */

/** The keys' row, as one event's work writes it. */
export interface RowWrites {
	/** Records `values`, keeping at least `keep` entries besides them (the oldest go first): the
	 * values that were not there. */
	record(values: string[], keep: number): Promise<Set<string>>;
	remove(values: string[]): Promise<void>;
}

export type RowWork<T> = (writes: RowWrites) => Promise<T>;

interface WaitingWrite {
	kind: 'record' | 'remove';
	values: string[];
	keep: number;
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

	constructor(
		private readonly context: IExecuteFunctions,
		/** Works not ended yet. */
		private running: number,
	) {}

	async record(values: string[], keep: number): Promise<Set<string>> {
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

	private wait(kind: WaitingWrite['kind'], values: string[], keep: number): Promise<Set<string>> {
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
			await this.settle(records, async () => {
				const values = records.flatMap((write) => write.values);
				// Every work keeps what it asked for, and nothing this turn added pushes out anything.
				const keep = Math.max(...records.map((write) => write.keep)) + this.added;
				const result = await this.context.helpers.checkProcessedAndRecord(values, 'node', {
					...ENTRIES,
					maxEntries: keep + values.length,
				});
				this.added += result.new.length;
				return new Set(result.new.map(String));
			});
		}
		if (removals.length > 0) {
			await this.settle(removals, async () => {
				const values = removals.flatMap((write) => write.values);
				await this.context.helpers.removeProcessed(values, 'node', ENTRIES);
				return new Set<string>();
			});
		}
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

/** The works waiting for one row's next turn. */
export class KeysTurn {
	private readonly works: Array<{
		work: RowWork<unknown>;
		done: (outcome: LockOutcome<unknown>) => void;
	}> = [];

	/** Runs the works of the turn, merged, under the store's lock (again, all, when the lock was
	 * taken over meanwhile: each work reads what it decides from). */
	static async run(turn: KeysTurn, context: IExecuteFunctions, row: string): Promise<void> {
		const close = () => {
			if (processState.keysTurns.get(row) === turn) processState.keysTurns.delete(row);
		};
		const outcome = await withStoreLock(context, async () => {
			close(); // works that come from now on wait for the next turn
			const writes = new MergedWrites(context, turn.works.length);
			return await Promise.all(
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
		});
		close();
		turn.works.forEach(({ done }, index) =>
			done(outcome.ok ? outcome.value[index] : { ok: false, reason: outcome.reason }),
		);
	}

	join<T>(work: RowWork<T>): Promise<LockOutcome<T>> {
		return new Promise((resolve) =>
			this.works.push({
				work,
				done: resolve as (outcome: LockOutcome<unknown>) => void,
			}),
		);
	}
}

/**
 * Runs `work` on the keys' row of this node in the next turn of this process, with the other works
 * waiting for it. When the store fails or the lock cannot be had, `work` does not run (or its
 * result does not count), and the reason comes back.
 */
export async function inKeysTurn<T>(
	context: IExecuteFunctions,
	work: RowWork<T>,
): Promise<LockOutcome<T>> {
	const row = JSON.stringify([context.getWorkflow().id ?? '', context.getNode().id]);
	let turn = processState.keysTurns.get(row) as KeysTurn | undefined;
	if (!turn) {
		turn = new KeysTurn();
		processState.keysTurns.set(row, turn);
		const joined = turn.join(work);
		void KeysTurn.run(turn, context, row);
		return await joined;
	}
	return await turn.join(work);
}
