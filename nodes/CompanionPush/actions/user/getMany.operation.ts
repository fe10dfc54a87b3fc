import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { listUsers } from '../../transport';
import { readLimit, returnAllOrLimit } from '../descriptions';
import { forEachItem } from '../itemLoop';

export const description: INodeProperties[] = updateDisplayOptions(
	{ show: { resource: ['user'], operation: ['getMany'] } },
	returnAllOrLimit,
);

/** The organization's users, read in pages of 1000 until a page comes back empty. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await forEachItem(
		this,
		async (itemIndex) => await listUsers(this, readLimit(this, itemIndex), itemIndex),
	);
}
