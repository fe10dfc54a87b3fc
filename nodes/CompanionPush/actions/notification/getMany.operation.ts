import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { listNotifications } from '../../transport';
import { forEachItem } from '../item-loop';
import { returnAllOrLimit, readLimit } from '../return-all';

export const description: INodeProperties[] = returnAllOrLimit('notification', 'getMany');

/** The organization's sends, newest first. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await forEachItem(this, async (itemIndex) => {
		const max = readLimit(this, itemIndex);
		return await listNotifications(this, { max, itemIndex });
	});
}
