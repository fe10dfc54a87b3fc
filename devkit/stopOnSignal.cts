// How `npm start` (plain and --queue) ends: Ctrl-C, SIGTERM or a part that died stops every part
// that runs, all at once, each reported with its time, then exits. Once only.

type Log = (line: string) => void;
/** What runs, read when stopping: a part not started yet is undefined. */
type Parts = () => Array<[what: string, stop: (() => Promise<void>) | undefined]>;

export function stopOnSignal(log: Log, heading: string, parts: Parts) {
	let stopping = false;
	const stopAll = async (code: number) => {
		if (stopping) return;
		stopping = true;
		log(`\n${heading}`);
		const begun = Date.now();
		const stopOne = async (what: string, stop: () => Promise<void>) => {
			try {
				await stop();
				log(`  ${what} stopped (${((Date.now() - begun) / 1000).toFixed(1)} s)`);
			} catch (error) {
				console.error(`  ${what} did not stop cleanly: ${error.message}`);
			}
		};
		await Promise.all(parts().map(([what, stop]) => stop && stopOne(what, stop)));
		log('Stopped.');
		process.exit(code);
	};
	process.on('SIGINT', () => stopAll(0));
	process.on('SIGTERM', () => stopAll(0));
	return { stopAll, isStopping: () => stopping };
}
