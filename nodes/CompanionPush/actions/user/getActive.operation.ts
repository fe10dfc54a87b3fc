import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { listActiveUserIds } from '../../transport';
import { optionsCollection } from '../descriptions';
import { forEachItem, readParameter } from '../itemLoop';

const properties: INodeProperties[] = [
	optionsCollection([
		{
			displayName: 'IDs Only',
			name: 'idsOnly',
			type: 'boolean',
			default: false,
			description:
				'Whether to return one item holding the list of user IDs (and their count) instead of one item per user',
		},
	]),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['user'], operation: ['getActive'] } },
	properties,
);

/** Users who can receive notifications now: app installed, logged in, notifications allowed. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await forEachItem(this, async (itemIndex) => {
		const userIds = await listActiveUserIds(this, itemIndex);
		const { idsOnly } = readParameter(this, 'options', 'Options', itemIndex, {}) as {
			idsOnly?: boolean;
		};
		if (idsOnly) return { userIds, count: userIds.length };
		return userIds.map((id) => ({ id }));
	});
}
