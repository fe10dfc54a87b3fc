/*
 * What the store layer keeps in process memory. n8n runs one copy of this module per process (the
 * main process, each queue-mode worker), so nothing here is shared between processes: across
 * processes the store's lock (lock.ts) orders the turns. The works waiting for a row's next turn
 * are turns.ts's own (rowTurns there).
 *
 * | piece | what it holds |
 * |---|---|
 * | lockQueues | per workflow, the turns of this process one at a time: they would only contend for the lock's row |
 * | aloneQueues | per kind of work and row, the works that must each have a turn of their own (a count that reads, decides and writes: two in one turn would decide from the same reading) |
 */
export const storeState = {
	lockQueues: new Map<string, Promise<unknown>>(),
	aloneQueues: new Map<string, Promise<unknown>>(),
};

/** Empties the store layer's process memory (tests, between cases). */
export function resetStoreState(): void {
	storeState.lockQueues = new Map();
	storeState.aloneQueues = new Map();
}
