import { sleep } from 'n8n-workflow';

/**
 * Requests started together (a run's hundreds of sends once the token is there) would each be
 * built by n8n's HTTP helper in one run of the event loop's microtasks: every one of them is built
 * before the loop writes the first to its socket, so the API sees none of them for as long as
 * building all of them takes (half a second for 500 on a busy machine). A caller about to start a
 * request awaits `letIoThrough()` first: the callers waiting are let through in batches, in the
 * order they came, with the loop's I/O between two batches, so each batch's requests leave while
 * the next is built. A batch starts at one request and grows by one while building it takes less
 * than a slice; it halves while it takes more than two, so the machine's own speed sets it. It
 * never limits how many are in flight. One queue for the process: every run's requests take turns
 * alike.
 */

/** How long building one batch may hold the loop: a matter of speed alone (longer delays the
 * first requests of a burst, shorter adds turns of the loop). */
const SLICE_MS = 16;

/** The callers waiting, from `next` on (a head index: taking from the front stays cheap for many). */
let waiting: Array<() => void> = [];
let next = 0;
let releasing = false;

export async function letIoThrough(): Promise<void> {
	await new Promise<void>((resolve) => {
		waiting.push(resolve);
		if (!releasing) {
			releasing = true;
			void releaseInBatches();
		}
	});
}

/**
 * The first batch goes at once (a request alone waits for nothing). n8n's sleep is a timer, and a
 * timer that came due while a batch was built runs before the loop's I/O: so after a batch, one
 * timer only waits until the batch is built, and the next, set after that, lets the I/O through
 * before the next batch.
 */
async function releaseInBatches(): Promise<void> {
	let batchSize = 1;
	for (;;) {
		const startedAt = performance.now();
		const end = Math.min(waiting.length, next + batchSize);
		while (next < end) waiting[next++]();
		await sleep(0); // the batch built
		if (next >= waiting.length) break;
		const builtInMs = performance.now() - startedAt;
		if (builtInMs < SLICE_MS) batchSize++;
		else if (builtInMs > 2 * SLICE_MS) batchSize = Math.max(1, Math.floor(batchSize / 2));
		await sleep(0); // the I/O
	}
	waiting = [];
	next = 0;
	releasing = false;
}
