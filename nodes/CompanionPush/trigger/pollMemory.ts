/*
 * What the trigger keeps in process memory. Triggers poll on the main process only; a restart
 * empties it (and reports a gap of the list once more).
 * - polledContexts: the poll contexts n8n has polled with, to tell the poll n8n runs while
 *   activating a trigger (n8n keeps one poll context per activation).
 * - listGapsReported: per poll context, the floor of the trigger's last reading of the list that
 *   could not reach it and was reported as an error: the next poll that cannot reach it either goes
 *   on past it (a poll that throws keeps no state, so the report itself cannot be stored).
 * Both are weak: forgotten with their context. Reassigned only by the test reset below.
 */
export let polledContexts = new WeakSet<object>();
export let listGapsReported = new WeakMap<object, number>();

/** Tests: forgets every poll context. */
export function resetPollMemory(): void {
	polledContexts = new WeakSet();
	listGapsReported = new WeakMap();
}
