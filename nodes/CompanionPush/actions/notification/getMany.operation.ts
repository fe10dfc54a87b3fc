import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { isListProbe, listNotifications } from '../../transport';
import { readLimit, returnAllOrLimit } from '../descriptions';
import { forEachItem } from '../itemLoop';

export const description: INodeProperties[] = updateDisplayOptions(
	{ show: { resource: ['notification'], operation: ['getMany'] } },
	returnAllOrLimit,
);

/** The organization's sends, newest first. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await forEachItem(this, async (itemIndex) => {
		const max = readLimit(this, itemIndex);
		const sends = await listNotifications(this, { max, itemIndex });
		return sends.filter((send) => !isListProbe(send)); // sends to nobody a lookup made
	});
}
