/** What became of one task of a pool: its value, its error, or nothing when it was never started. */
export type PoolResult<T> = { ok: true; value: T } | { ok: false; error: unknown } | undefined;

/**
 * Runs `task(0)` ... `task(count - 1)` with at most `limit` running at once, starting them in
 * order. Once `stop()` answers true (checked before each start), nothing new starts; what runs is
 * finished. Results come back by index, whatever order the tasks ended in.
 */
export async function runPool<T>(
	count: number,
	limit: number,
	task: (index: number) => Promise<T>,
	stop: () => boolean = () => false,
): Promise<Array<PoolResult<T>>> {
	const results: Array<PoolResult<T>> = new Array(count).fill(undefined);
	let next = 0;
	const worker = async () => {
		while (next < count && !stop()) {
			const index = next++;
			try {
				results[index] = { ok: true, value: await task(index) };
			} catch (error) {
				results[index] = { ok: false, error };
			}
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, worker));
	return results;
}
