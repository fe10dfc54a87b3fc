import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { maxParallelRequestsOption, optionsCollection, updateDisplayOptions } from '../descriptions';
import {
	additionalFields,
	asyncNotice,
	audienceFields,
	batchSizeOption,
	idempotencyOptions,
	messageFields,
	SEND_WAIT_DESCRIPTION,
	sendModeField,
} from './sendFields';
import { sendItems } from './sendItems';
import { waitOptions } from './wait';

const properties: INodeProperties[] = [
	asyncNotice,
	...messageFields,
	...audienceFields,
	sendModeField,
	additionalFields,
	optionsCollection([batchSizeOption, ...idempotencyOptions, maxParallelRequestsOption, ...waitOptions(SEND_WAIT_DESCRIPTION)]),
];

export const description = updateDisplayOptions({ show: { resource: ['notification'], operation: ['send'] } }, properties);

/** Sends now: one send per item (or one for all items), split into batches of at most Batch Size. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await sendItems(this);
}
