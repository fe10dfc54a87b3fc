import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { sendFields } from './send-fields';
import { executeSend } from './send-flow';

export const description: INodeProperties[] = sendFields('schedule');

/** Schedules a send: as Send, with `scheduled_at` always carrying an explicit offset, and a past
 * time refused unless "Send If Time Is Past" is on. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await executeSend(this, 'schedule');
}
