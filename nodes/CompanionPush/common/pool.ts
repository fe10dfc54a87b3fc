/** What became of one task of a pool: its value, its error, or nothing when it was never started. */
export type PoolResult<T> = { ok: true; value: T } | { ok: false; error: unknown } | undefined;

/**
 * Runs `task(0)` ... `task(count - 1)` with at most `limit` running at once, starting them in
 * order. With `stopAfterFailure`, nothing new starts once a task failed; what runs is finished.
 * Results come back by index, whatever order the tasks ended in.
 */
export async function runPool<T>(
	count: number,
	limit: number,
	task: (index: number) => Promise<T>,
	stopAfterFailure = false,
): Promise<Array<PoolResult<T>>> {
	const results: Array<PoolResult<T>> = new Array(count).fill(undefined);
	let next = 0;
	let failed = false;
	const worker = async () => {
		while (next < count && !(stopAfterFailure && failed)) {
			const index = next++;
			try {
				results[index] = { ok: true, value: await task(index) };
			} catch (error) {
				results[index] = { ok: false, error };
				failed = true;
			}
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, worker));
	return results;
}
