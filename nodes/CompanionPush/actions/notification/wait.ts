import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { fieldError } from '../../nodeErrors';
import type { NothingSent } from '../../nodeErrors';
import type { WaitResult } from './finalStatusWatch';

/** The fields a wait adds to an output item. */
export function waitFields(result: WaitResult) {
	return {
		status: result.record.status,
		finalStatusReached: result.finalStatusReached,
		waitedSeconds: result.waitedSeconds,
		...(result.finalStatusReached
			? {}
			: { waitNote: `Still "${result.record.status}" when the wait timeout passed` }),
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
			description:
				'How long to wait for the final status at most; the output says whether it was reached',
		},
	];
}

/** The wait asked in `options`, in seconds, or undefined when there is none to wait. */
export function readWaitTimeout(
	context: IExecuteFunctions,
	options: IDataObject,
	itemIndex: number,
	nothingSent?: NothingSent,
): number | undefined {
	if (options.waitForFinalStatus !== true) return undefined;
	const timeoutSeconds = Number(options.waitTimeout ?? 120);
	if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
		throw fieldError(
			context,
			'Wait Timeout (Seconds)',
			`must be a positive number (got ${String(options.waitTimeout)})`,
			itemIndex,
			nothingSent,
		);
	}
	return timeoutSeconds;
}
