import { updateDisplayOptions } from 'n8n-workflow';
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { getNotification } from '../../transport';
import { fieldError } from '../../nodeErrors';
import { maxParallelRequestsOption, optionsCollection } from '../descriptions';
import { forEachItem, readMaxParallelRequests, readParameter } from '../itemLoop';
import { notificationIdField, readNotificationId } from './notificationId';
import { FinalStatusWatch } from './finalStatusWatch';
import { readWaitTimeout, waitFields, waitOptions } from './wait';

const properties: INodeProperties[] = [
	notificationIdField,
	optionsCollection([
		{
			displayName: 'Deliveries',
			name: 'deliveries',
			type: 'options',
			default: 'include',
			description:
				'What to do with the delivery entries (one per phone, or one "no_device" entry per user without an active app)',
			options: [
				{ name: 'Include', value: 'include', description: 'In a "deliveries" list on the item' },
				{
					name: 'Omit',
					value: 'omit',
					description: 'Only the notification record and its counters',
				},
				{
					name: 'Split Into Items',
					value: 'split',
					description: 'One output item per delivery entry',
				},
			],
		},
		maxParallelRequestsOption,
		...waitOptions(
			'Whether to keep checking, with growing intervals, until the send leaves "sending"/"scheduled" or the timeout passes',
		),
	]),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['notification'], operation: ['get'] } },
	properties,
);

/** A send with its counters and deliveries, optionally after waiting for its final status. Items
 * run in parallel (Max Parallel Requests of the first item), and their waits share the list reads. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const firstOptions = readParameter(this, 'options', 'Options', 0, {}) as IDataObject;
	const parallel = readMaxParallelRequests(this, firstOptions, 0);
	const watch = new FinalStatusWatch(this, parallel);
	return await forEachItem(
		this,
		async (itemIndex) => {
			const notificationId = readNotificationId(this, itemIndex);
			const options = readParameter(this, 'options', 'Options', itemIndex, {}) as IDataObject;
			const deliveriesMode = (options.deliveries as string) ?? 'include';
			if (!['include', 'omit', 'split'].includes(deliveriesMode)) {
				throw fieldError(this, 'Deliveries', `has an unknown value "${deliveriesMode}"`, itemIndex);
			}
			let waited: IDataObject = {};
			let detail;
			const waitTimeoutSeconds = readWaitTimeout(this, options, itemIndex);
			if (waitTimeoutSeconds !== undefined) {
				const result = await watch.follow(notificationId, waitTimeoutSeconds, itemIndex, true);
				detail = result.detail;
				waited = waitFields(result);
			} else {
				detail = await getNotification(this, notificationId, itemIndex);
			}
			const { notification, deliveries } = detail;
			if (deliveriesMode === 'split') {
				// Each entry says whether the wait reached the final status; `status` stays the delivery's own.
				return deliveries.map((delivery, deliveryIndex) => ({
					notificationId: notification.id,
					title: notification.title,
					...waited,
					notificationStatus: notification.status,
					deliveryIndex,
					...delivery,
				}));
			}
			return {
				...notification,
				...waited,
				...(deliveriesMode === 'include' ? { deliveries } : {}),
			} as IDataObject;
		},
		parallel,
	);
}
