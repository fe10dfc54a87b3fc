import type {
	IDataObject,
	IExecuteFunctions,
	IGetNodeParameterOptions,
	INodeExecutionData,
} from 'n8n-workflow';

import { checkMessage, isProblem } from '../../../input/message';
import {
	describeUnusualUserIds,
	MAX_USER_ID_LENGTH,
	parseUserIds,
} from '../../../input/recipients';
import { asNodeError, errorItem, fieldError } from '../../../nodeErrors';
import { readMaxParallelRequests, readParameter } from '../../itemLoop';
import { readWaitTimeout } from '../wait';
import { digestConflicts, readDigestRule } from '../digest/options';
import { readCapRule } from './capPerPerson';
import { readIdempotencyKey } from './idempotencyKeyOption';
import { readDeliveryPolicy } from './localDelivery';
import type { Audience, CheckedItem, ScheduleReader, SendInput } from './types';

/*
 * The first stage of the send path: every item read and checked, its message, audience and
 * options. The options that change who gets what when are read by their own files (the
 * Idempotency Key, Deliver at Local Time and Quiet Hours, Cap per Person, Digest).
 */

/**
 * Reads and checks every item before anything is sent: with bad input nothing at all is sent (the
 * first bad item stops the node), or, when the node continues on fail, that item becomes an error
 * item and the others go on.
 */
export function readSendInput(
	context: IExecuteFunctions,
	readSchedule?: ScheduleReader,
): SendInput {
	const sendMode = readParameter(context, 'sendMode', 'Send Mode', 0, 'perItem', undefined, 'run');
	// An unknown mode must not fall back to one send per item: that could turn one intended send into many.
	if (sendMode !== 'perItem' && sendMode !== 'combined') {
		throw fieldError(
			context,
			'Send Mode',
			`has an unknown value "${String(sendMode).slice(0, 60)}": use perItem or combined`,
			0,
			'run',
		);
	}
	const combined = sendMode === 'combined';
	const checkedItems: CheckedItem[] = [];
	const rejected = new Map<number, INodeExecutionData>();
	const itemCount = context.getInputData().length;
	const unusualIds: Array<{ itemIndex: number; warning: string }> = [];
	for (let itemIndex = 0; itemIndex < itemCount; itemIndex++) {
		try {
			const checked = checkItem(context, itemIndex, readSchedule, unusualIds);
			// One send for all items takes its audience from the first item: another audience on a
			// later item would be dropped without a word, so it is an error instead.
			if (combined && checkedItems.length > 0 && checked.audience !== checkedItems[0].audience) {
				throw sendFieldError(
					context,
					'Audience',
					`must be the same on every item in "One Send for All Items" mode (item ${checkedItems[0].itemIndex} has "${checkedItems[0].audience}", this one "${checked.audience}")`,
					itemIndex,
				);
			}
			const first = checkedItems[0];
			if (first && JSON.stringify(checked.cap) !== JSON.stringify(first.cap)) {
				// One count per person for the node: items with other caps would each break the others'.
				throw sendFieldError(
					context,
					'Cap per Person',
					`must be the same on every item (item ${first.itemIndex} has ${capText(first)}, this one ${capText(checked)})`,
					itemIndex,
				);
			}
			const conflicts = checked.digest ? digestConflicts(checked, combined) : [];
			if (conflicts.length > 0) {
				throw sendFieldError(
					context,
					'Digest Key',
					`cannot go with ${conflicts.join(', ')}: remove one of them`,
					itemIndex,
				);
			}
			checkedItems.push(checked);
		} catch (error) {
			const nodeError = asNodeError(context, error, itemIndex);
			if (!context.continueOnFail()) throw nodeError;
			rejected.set(itemIndex, errorItem(nodeError, { item: itemIndex }));
		}
	}
	warnOfUnusualIds(context, unusualIds, checkedItems);
	return { combined, checkedItems, rejected };
}

/** One execution hint (shown above the output in the editor) for the items whose User IDs look
 * like e-mails or names and go out with "Unusual User IDs: Warn"; each item's output says which. */
function warnOfUnusualIds(
	context: IExecuteFunctions,
	unusual: Array<{ itemIndex: number; warning: string }>,
	checkedItems: CheckedItem[],
) {
	const sent = unusual.filter(({ itemIndex }) =>
		checkedItems.some((item) => item.itemIndex === itemIndex),
	);
	if (sent.length === 0) return;
	const others = sent.slice(1).map(({ itemIndex }) => itemIndex);
	const also =
		others.length > 0
			? ` Also on item ${others.slice(0, 5).join(', ')}${others.length > 5 ? ` and ${others.length - 5} more` : ''}.`
			: '';
	context.addExecutionHints({
		type: 'warning',
		location: 'outputPane',
		message: `Item ${sent[0].itemIndex}: ${sent[0].warning}.${also}`,
	});
}

const capText = ({ cap }: CheckedItem) =>
	cap ? `${cap.maxSends} per ${cap.windowMinutes} minutes` : 'none';

/** A bad value of a Send or Schedule item: nothing is sent for it. */
function sendFieldError(
	context: IExecuteFunctions,
	field: string,
	problem: string,
	itemIndex: number,
) {
	return fieldError(context, field, problem, itemIndex, 'item');
}

function checkItem(
	context: IExecuteFunctions,
	itemIndex: number,
	readSchedule: ScheduleReader | undefined,
	unusualIds: Array<{ itemIndex: number; warning: string }>,
): CheckedItem {
	const read = (
		name: string,
		field: string,
		fallback: unknown,
		options?: IGetNodeParameterOptions,
	) => readParameter(context, name, field, itemIndex, fallback, options, 'item');
	const additional = read('additionalFields', 'Additional Fields', {}) as IDataObject;
	const options = read('options', 'Options', {}) as IDataObject;
	const message = checkMessage({
		title: read('title', 'Title', ''),
		body: read('body', 'Body', ''),
		imageUrl: additional.imageUrl,
		deeplink: additional.deeplink,
		deeplinkAnnouncementId: additional.deeplinkAnnouncementId,
		customDeeplink: additional.customDeeplink,
		announcementId: additional.announcementId,
	});
	if (isProblem(message)) throw sendFieldError(context, message.field, message.problem, itemIndex);

	const audience = read('audience', 'Audience', 'userIds') as Audience;
	let userIds: string[] = [];
	if (audience === 'userIds') {
		const parsed = parseUserIds(read('userIds', 'User IDs', ''));
		if ('problem' in parsed) throw sendFieldError(context, 'User IDs', parsed.problem, itemIndex);
		if (parsed.userIds.length === 0) {
			throw sendFieldError(context, 'User IDs', 'is empty: give at least one user ID', itemIndex);
		}
		userIds = parsed.userIds;
	} else if (audience === 'user') {
		const userId = read('user', 'User', '', { extractValue: true });
		if (typeof userId !== 'string' && typeof userId !== 'number') {
			throw sendFieldError(context, 'User', 'must be one user ID', itemIndex);
		}
		if (String(userId).trim() === '')
			throw sendFieldError(context, 'User', 'is empty: pick a user', itemIndex);
		if (String(userId).trim().length > MAX_USER_ID_LENGTH) {
			throw sendFieldError(
				context,
				'User',
				`is longer than ${MAX_USER_ID_LENGTH} characters: a user ID is short, as the list shows it`,
				itemIndex,
			);
		}
		userIds = [String(userId).trim()];
	} else if (audience !== 'allUsers' && audience !== 'activeUsers') {
		throw sendFieldError(
			context,
			'Audience',
			`has an unknown value "${String(audience)}"`,
			itemIndex,
		);
	}

	const unusual = checkUnusualUserIds(context, options, userIds, audience, itemIndex);
	if (unusual) {
		message.warnings.push(unusual);
		unusualIds.push({ itemIndex, warning: unusual });
	}

	const batchSize = Number(options.batchSize ?? 1000);
	if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000) {
		throw sendFieldError(
			context,
			'Batch Size',
			`must be a whole number from 1 to 1000 (got ${String(options.batchSize)})`,
			itemIndex,
		);
	}
	// The options that change who gets what when are read only when the item has them: a plain send
	// goes through none of their files.
	const added = (option: string) => options[option] !== undefined;
	const waitTimeoutSeconds = readWaitTimeout(context, options, itemIndex, 'item');
	const idempotency = added('idempotencyKey')
		? readIdempotencyKey(context, options, itemIndex)
		: undefined;
	const maxParallelRequests = readMaxParallelRequests(context, options, itemIndex, 'item');
	const checked: CheckedItem = {
		itemIndex,
		message,
		audience,
		userIds,
		batchSize,
		waitTimeoutSeconds,
		idempotency,
		maxParallelRequests,
	};
	const delivery =
		added('deliverAtLocalTime') || added('quietHours')
			? readDeliveryPolicy(context, options, itemIndex, userIds)
			: undefined;
	if (delivery) checked.delivery = delivery;
	// Send only: Schedule's sends go out later, when the count would no longer hold.
	if (!readSchedule && added('capPerPerson'))
		checked.cap = readCapRule(context, options, itemIndex);
	if (!readSchedule && added('digestKey'))
		checked.digest = readDigestRule(context, options, itemIndex);
	if (readSchedule) Object.assign(checked, readSchedule(context, itemIndex, options));
	return checked;
}

/**
 * The option "Unusual User IDs": User IDs that look like an e-mail or a name fail the item
 * ("refuse", the default) or go out as given with a warning ("warn"), returned for the item's
 * output. The API answers 202 to IDs it does not know and notifies nobody, so without this a typo
 * such as a pasted e-mail would be a send that reaches no one while the run shows success.
 */
function checkUnusualUserIds(
	context: IExecuteFunctions,
	options: IDataObject,
	userIds: string[],
	audience: Audience,
	itemIndex: number,
): string | undefined {
	const field = audience === 'user' ? 'User' : 'User IDs';
	const mode = options.unusualUserIds ?? 'refuse';
	if (mode !== 'refuse' && mode !== 'warn') {
		throw sendFieldError(
			context,
			'Unusual User IDs',
			`has an unknown value "${String(mode).slice(0, 60)}": use refuse or warn`,
			itemIndex,
		);
	}
	const unusual = describeUnusualUserIds(userIds);
	if (!unusual) return undefined;
	const advice =
		'User IDs are service user IDs as returned by Get Many Users, not e-mails or names, and are separated by commas or new lines; the API accepts an unknown ID without notifying anyone';
	if (mode === 'refuse') {
		throw sendFieldError(
			context,
			field,
			`has IDs that are not user IDs: ${unusual}. ${advice} (to send such IDs anyway, set Options > Unusual User IDs to Warn)`,
			itemIndex,
		);
	}
	return `${field} sent as given although ${unusual}: ${advice}`;
}
