import type { IExecuteFunctions } from 'n8n-workflow';

import type { LockOutcome } from './lock';
import { Records } from './records';
import { inRowTurn } from './turns';
import type { RowWrites } from './turns';

/*
 * The store: the only code that knows n8n's processed-data store. A turn on a node's row, under the
 * lock of its workflow; small records and flags read, written and deleted inside it; the row's
 * bound. How it holds records in a store of hashes, its lock and its bound: README.md beside this file.
 */

export { LOST, fitsRecord } from './records';
export type { RecordRead } from './records';
export { ROW_ENTRIES } from './turns';
export type { LockOutcome } from './lock';

/** The records and flags of a node's row, inside one turn (records.ts, flags.ts). Every call is a
 * step n8n may stop after: a record is then read back whole as it was before the call or after it,
 * or LOST (never another text). */
export type StoreTurn = Pick<
	Records,
	'read' | 'write' | 'delete' | 'readOldMarks' | 'hasFlags' | 'setFlags' | 'clearFlags'
>;

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
	return await inRowTurn(context, async (writes) => await work(new Records(writes)), alone);
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
