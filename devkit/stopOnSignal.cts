// How `npm start` (plain and --queue) ends: Ctrl-C, SIGTERM, SIGHUP (the terminal closed), the
// process that started it gone (npm killed, even with SIGKILL, leaves this process behind with a
// new parent) or a part that died stops every part that runs, all at once, each reported with its
// time, then exits. Once only.

type Log = (line: string) => void;
/** What runs, read when stopping: a part not started yet is undefined. */
type Parts = () => Array<[what: string, stop: (() => Promise<void>) | undefined]>;

/** How often the parent is checked: a stopped npm leaves n8n serving at most this long. */
const PARENT_CHECK_MS = 1000;

export function stopOnSignal(log: Log, heading: string, parts: Parts) {
	let stopping = false;
	const stopAll = async (code: number) => {
		if (stopping) return;
		stopping = true;
		clearInterval(parentWatch);
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
	process.on('SIGHUP', () => stopAll(0));
	// npm forwards a signal only to its own child, and a shell between them may not pass it on;
	// npm killed outright forwards nothing. Either way this process gets a new parent.
	const parentAtStart = process.ppid;
	const parentWatch = setInterval(() => {
		if (process.ppid === parentAtStart) return;
		log(`\nThe process that started this one (pid ${parentAtStart}) is gone.`);
		void stopAll(0);
	}, PARENT_CHECK_MS);
	parentWatch.unref();
	return { stopAll, isStopping: () => stopping };
}
