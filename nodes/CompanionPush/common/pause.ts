import { waitFor } from './timings';

/**
 * Waits `ms`, or less when `stopped` is aborted meanwhile: whether it was. With n8n 2.x's `sleep`
 * the abort ends it at once; with 1.x's, within a step (common/timings.ts).
 */
export async function pauseUnlessStopped(ms: number, stopped: AbortSignal): Promise<boolean> {
	try {
		await waitFor(ms, stopped);
	} catch {
		// aborted
	}
	return stopped.aborted;
}
