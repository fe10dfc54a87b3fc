/**
 * Runs `task` after every task queued before it under the same `key` in `queues` has settled, so
 * tasks of one key never overlap; other keys run freely. Process memory: the queues order only
 * this process.
 */
export async function oneAtATime<T>(
	queues: Map<string, Promise<unknown>>,
	key: string,
	task: () => Promise<T>,
): Promise<T> {
	const previous = queues.get(key) ?? Promise.resolve();
	const next = previous.then(task, task);
	const settled = next.catch(() => undefined);
	queues.set(key, settled);
	void settled.then(() => {
		if (queues.get(key) === settled) queues.delete(key);
	});
	return await next;
}
