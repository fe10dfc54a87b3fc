import { sleep } from 'n8n-workflow';

/** The longest single sleep of a pause: n8n 1.x's `sleep` takes no abort signal, so a pause that is
 * stopped there still ends within this (no timer of a lease outlives it for longer). */
const STEP_MS = 250;

/**
 * Waits `ms`, or less when `stopped` is aborted meanwhile: whether it was. With n8n 2.x's `sleep`
 * the abort ends it at once; with 1.x's, at the end of the current step.
 */
export async function pauseUnlessStopped(ms: number, stopped: AbortSignal): Promise<boolean> {
	const endAt = Date.now() + ms;
	for (let left = ms; left > 0 && !stopped.aborted; left = endAt - Date.now()) {
		try {
			await sleep(Math.min(STEP_MS, left), stopped);
		} catch {
			break; // aborted
		}
	}
	return stopped.aborted;
}
