import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { listUsers } from '../../transport';
import { forEachItem } from '../item-loop';
import { readLimit, returnAllOrLimit } from '../return-all';

export const description: INodeProperties[] = returnAllOrLimit('user', 'getMany');

/** The organization's users, read in pages of 1000 until a page comes back empty. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await forEachItem(this, async (itemIndex) => await listUsers(this, readLimit(this, itemIndex), itemIndex));
}
