/** Waits for a state, never for a fixed time: the dev tools and the end-to-end tests poll with it. */

/** Waits until `check` returns a value (not undefined/false), polling every `everyMs`; the error names `what`. */
export async function waitFor<T>(
	what: string,
	check: () => T | undefined | false | Promise<T | undefined | false>,
	timeoutMs: number,
	everyMs = 1000,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value !== undefined && value !== false) return value as T;
		if (Date.now() > deadline)
			throw new Error(`Timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, everyMs));
	}
}
