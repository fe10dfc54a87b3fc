import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { fieldError } from '../../nodeErrors';
import { readParameter } from '../itemLoop';

/** The "Notification ID" field of Get and Cancel. */
export const notificationIdField: INodeProperties = {
	displayName: 'Notification ID',
	name: 'notificationId',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. 3f2b8c1e-9d4a-4e7b-8a61-2c5d9e0f7a13',
	description: 'The ID the API gave the send, found in the output of Send or Schedule',
};

export function readNotificationId(context: IExecuteFunctions, itemIndex: number): string {
	const value = readParameter(context, 'notificationId', 'Notification ID', itemIndex, '');
	if (typeof value !== 'string' && typeof value !== 'number') {
		throw fieldError(context, 'Notification ID', 'must be one ID (text)', itemIndex);
	}
	return checkedNotificationId(context, String(value), 'Notification ID', itemIndex);
}

/** An ID as typed or mapped, trimmed; an empty one, or one that cannot be part of the API's path,
 * fails naming `field` and the item. */
export function checkedNotificationId(
	context: IExecuteFunctions,
	value: string,
	field: string,
	itemIndex: number,
): string {
	const notificationId = value.trim();
	if (notificationId === '') throw fieldError(context, field, 'is empty', itemIndex);
	if (/[/?#\s]/.test(notificationId)) {
		throw fieldError(
			context,
			field,
			`is not a valid ID: "${notificationId.slice(0, 60)}"`,
			itemIndex,
		);
	}
	return notificationId;
}
