import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { sendOperationProperties } from './send/fields';
import { sendItems } from './send/run';

export const description = updateDisplayOptions(
	{ show: { resource: ['notification'], operation: ['send'] } },
	sendOperationProperties(),
);

/** Sends now (or, with Deliver at Local Time or Quiet Hours, when each time zone is due): one send
 * per item (or one for all items), per time zone when a delivery policy applies, split into batches
 * of at most Batch Size. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await sendItems(this);
}
