/*
 * The turns this process takes on n8n's processed-data store, one at a time per row (process
 * memory: each queue-mode worker has its own, and a restart empties it). Across processes the
 * store's lock orders the turns (storeLock.ts).
 *
 * | piece | what it holds |
 * |---|---|
 * | storeQueues | claims of Idempotency Keys one at a time in this process (they would only contend for the store's lock) |
 * | capQueues | per node's row, the Cap per Person works of this process one at a time: each reads the slots, decides and writes them in its own turn (actions/notification/send/capSlots.ts) |
 * | digestQueues | per node's row, the Digest runs of this process one at a time: each reads the windows, cancels, schedules and writes them in its own turn (actions/notification/send/digest.ts) |
 * | keysTurns | per node's keys' row, the claims, renewals and confirmations waiting for this process's next turn under the store's lock: they run in that one turn, their writes merged (keysTurn.ts) |
 */

/** A turn of the keys' row (keysTurn.ts's KeysTurn), by what is asked of it here: works join it and
 * learn their outcome. Written out, so that this module imports nothing from its users. */
interface RowTurn {
	join<T>(
		work: (writes: {
			record(values: string[], keep: number): Promise<Set<string>>;
			remove(values: string[]): Promise<void>;
		}) => Promise<T>,
	): Promise<{ ok: true; value: T } | { ok: false; reason: string }>;
}

export const storeQueues = new Map<string, Promise<unknown>>();
export const capQueues = new Map<string, Promise<unknown>>();
export const digestQueues = new Map<string, Promise<unknown>>();
export const keysTurns = new Map<string, RowTurn>();

/** Tests: forgets every queue and turn. */
export function resetStoreQueues(): void {
	storeQueues.clear();
	capQueues.clear();
	digestQueues.clear();
	keysTurns.clear();
}
