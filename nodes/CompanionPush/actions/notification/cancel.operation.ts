import { NodeApiError, updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { cancelNotification } from '../../transport';
import { asNodeError } from '../../nodeErrors';
import { optionsCollection } from '../descriptions';
import { forEachItem, readParameter } from '../itemLoop';
import { notificationIdField, readNotificationId } from './notificationId';

const properties: INodeProperties[] = [
	notificationIdField,
	{
		displayName:
			'Only a scheduled send can be canceled. A notification that already went out cannot be taken back.',
		name: 'cancelNotice',
		type: 'notice',
		default: '',
	},
	optionsCollection([
		{
			displayName: 'Ignore If Not Scheduled',
			name: 'ignoreIfNotScheduled',
			type: 'boolean',
			default: false,
			description:
				'Whether a send that already left gives an output item (canceled: false, with its status) instead of an error',
		},
	]),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['notification'], operation: ['cancel'] } },
	properties,
);

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await forEachItem(this, async (itemIndex) => {
		const notificationId = readNotificationId(this, itemIndex);
		const options = readParameter(this, 'options', 'Options', itemIndex, {}) as {
			ignoreIfNotScheduled?: boolean;
		};
		try {
			const result = await cancelNotification(this, notificationId, itemIndex);
			return {
				id: notificationId,
				canceled: true,
				status: 'canceled',
				message: result.message,
				alreadyCanceled: result.alreadyCanceled,
			};
		} catch (error) {
			const refusedAsNotScheduled = error instanceof NodeApiError && error.httpCode === '409';
			if (!refusedAsNotScheduled || !options.ignoreIfNotScheduled)
				throw asNodeError(this, error, itemIndex);
			return {
				id: notificationId,
				canceled: false,
				status: error.context.currentStatus,
				message: error.message,
			};
		}
	});
}
