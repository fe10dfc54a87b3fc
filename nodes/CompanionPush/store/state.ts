/*
 * The store layer's process memory (one copy per n8n process: across processes the lock orders the
 * turns; the works waiting for a row's next turn are turns.ts's rowTurns). lockQueues: per workflow,
 * this process's turns one at a time (they would only contend for the lock's row). aloneQueues: per
 * kind of work and row, works that each need a turn of their own (two would decide from one reading).
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
