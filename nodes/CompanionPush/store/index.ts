import type { IExecuteFunctions } from 'n8n-workflow';

import { Flags } from './flags';
import type { LockOutcome } from './lock';
import { Records } from './records';
import type { RecordRead } from './records';
import { inRowTurn } from './turns';
import type { RowWrites } from './turns';

/*
 * The store: the only code that knows n8n's processed-data store. A turn on a node's row, under the
 * lock of its workflow; small records and flags read, written and deleted inside it; the row's bound. How it
 * holds records in a store of hashes, its lock and its bound: README.md beside this file.
 */

export { LOST, MAX_RECORD_BYTES, fitsRecord } from './records';
export type { RecordRead } from './records';
export { ROW_ENTRIES } from './turns';
export { storeFailure } from './lock';
export type { LockOutcome } from './lock';
export { resetStoreState } from './state';

/** The records of a node's row, inside one turn. Every call is a step n8n may stop after: a record
 * is then read back whole as it was before the call or after it, or LOST (never another text). */
export interface StoreTurn {
	/** Each record's text, undefined when there is none, or LOST (a read or write of it was cut
	 * short). */
	read(names: string[]): Promise<RecordRead[]>;
	/** Writes records: a name and a text of at most MAX_RECORD_BYTES bytes. */
	write(records: Array<[name: string, value: string]>): Promise<void>;
	delete(names: string[]): Promise<void>;
	/** Whether each name was kept as one value, as the package kept marks before it kept records
	 * (read across the upgrade; never written any more). */
	readOldMarks(names: string[]): Promise<boolean[]>;
	/** Flags (flags.ts): names kept as one entry each, for many small facts. Whether each is set; a
	 * test cut short leaves the flags it tested set. */
	hasFlags(names: string[]): Promise<boolean[]>;
	setFlags(names: string[]): Promise<void>;
	clearFlags(names: string[]): Promise<void>;
}

/**
 * Runs `work` in this process's next turn on the node's row, under the store's lock: no other turn,
 * of this process or another, runs meanwhile. With `alone` (a kind of work), never in one turn with
 * another work of that kind (they would decide from the same reading). When the store fails or the
 * lock cannot be had, the reason comes back (`work` may have run: what it read does not count).
 */
export async function inStoreTurn<T>(
	context: IExecuteFunctions,
	work: (turn: StoreTurn) => Promise<T>,
	alone?: string,
): Promise<LockOutcome<T>> {
	return await inRowTurn(
		context,
		async (writes) => {
			const records = new Records(writes);
			const flags = new Flags(writes);
			return await work({
				read: async (names) => await records.read(names),
				write: async (values) => await records.write(values),
				delete: async (names) => await records.delete(names),
				readOldMarks: async (names) => await records.readOldMarks(names),
				hasFlags: async (names) => await flags.has(names),
				setFlags: async (names) => await flags.set(names),
				clearFlags: async (names) => await flags.clear(names),
			});
		},
		alone,
	);
}

/**
 * Marks: values kept as one entry each, which a row without records lets go oldest first beyond what
 * the writer keeps (the Idempotency Keys' Keys to Keep). `add` records values and answers those that
 * were not there (a test of a mark adds it: the caller takes out what it added); `remove` takes
 * values out. A row that holds records keeps every mark, up to its bound.
 */
export interface Marks {
	add(values: string[], keep: number): Promise<Set<string>>;
	remove(values: string[]): Promise<void>;
}

/** Runs `work` on the node's marks in this process's next turn on its row (see inStoreTurn). */
export async function inMarksTurn<T>(
	context: IExecuteFunctions,
	work: (marks: Marks) => Promise<T>,
): Promise<LockOutcome<T>> {
	return await inRowTurn(
		context,
		async (writes: RowWrites) =>
			await work({
				add: async (values, keep) => await writes.record(values, keep),
				remove: async (values) => await writes.remove(values),
			}),
	);
}
