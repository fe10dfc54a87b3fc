import { sleep } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { getNotification } from '../../transport';
import type { NotificationDetail } from '../../transport';
import { isMoving } from '../../helpers/sendStates';
import { fieldError } from '../../nodeErrors';

const FIRST_INTERVAL_MS = 1_000;
const LONGEST_INTERVAL_MS = 15_000;

export interface WaitResult {
	detail: NotificationDetail;
	/** True when the send reached a final state; false when the timeout passed first. */
	finalStatusReached: boolean;
	waitedSeconds: number;
}

/** Reads the send until it leaves sending/scheduled or `timeoutSeconds` pass, waiting 1, 2, 4 ...
 * up to 15 seconds between reads (the spec: one read a few seconds after sending is enough). */
export async function waitForFinalStatus(
	context: IExecuteFunctions,
	notificationId: string,
	timeoutSeconds: number,
	itemIndex: number,
): Promise<WaitResult> {
	const startedAt = Date.now();
	const deadline = startedAt + timeoutSeconds * 1000;
	let interval = FIRST_INTERVAL_MS;
	for (;;) {
		const detail = await getNotification(context, notificationId, itemIndex);
		const waitedSeconds = Math.round((Date.now() - startedAt) / 100) / 10;
		// Any state a send does not leave on its own is final for this wait, an unknown one too.
		if (!isMoving(detail.notification.status)) return { detail, finalStatusReached: true, waitedSeconds };
		const remaining = deadline - Date.now();
		if (remaining <= 0) return { detail, finalStatusReached: false, waitedSeconds };
		await sleep(Math.min(interval, remaining));
		interval = Math.min(interval * 2, LONGEST_INTERVAL_MS);
	}
}

/** The fields a wait adds to an output item. */
export function waitFields(result: WaitResult) {
	return {
		status: result.detail.notification.status,
		finalStatusReached: result.finalStatusReached,
		waitedSeconds: result.waitedSeconds,
		...(result.finalStatusReached
			? {}
			: { waitNote: `Still "${result.detail.notification.status}" when the wait timeout passed` }),
	};
}

/** The "Wait for Final Status" and "Wait Timeout" options of Send, Schedule and Get. */
export function waitOptions(waitDescription: string): INodeProperties[] {
	return [
		{
			displayName: 'Wait for Final Status',
			name: 'waitForFinalStatus',
			type: 'boolean',
			default: false,
			description: waitDescription,
		},
		{
			displayName: 'Wait Timeout (Seconds)',
			name: 'waitTimeout',
			type: 'number',
			default: 120,
			typeOptions: { minValue: 1 },
			description: 'How long to wait for the final status at most; the output says whether it was reached',
		},
	];
}

/** The wait asked in `options`, in seconds, or undefined when there is none to wait. */
export function readWaitTimeout(context: IExecuteFunctions, options: IDataObject, itemIndex: number): number | undefined {
	if (options.waitForFinalStatus !== true) return undefined;
	const timeoutSeconds = Number(options.waitTimeout ?? 120);
	if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
		throw fieldError(context, 'Wait Timeout (Seconds)', `must be a positive number (got ${String(options.waitTimeout)})`, itemIndex);
	}
	return timeoutSeconds;
}
