import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { sendFields } from './send-fields';
import { executeSend } from './send-flow';

export const description: INodeProperties[] = sendFields('send');

/** Sends now: one send per item (or one for all items), split into batches of at most Batch Size. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await executeSend(this, 'send');
}
