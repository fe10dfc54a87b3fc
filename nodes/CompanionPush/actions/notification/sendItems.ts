import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, IPairedItemData } from 'n8n-workflow';

import { checkMessage, isProblem } from '../../helpers/message';
import type { CheckedMessage } from '../../helpers/message';
import { parseUserIds, toBatches, uniqueUserIds } from '../../helpers/recipients';
import { failedSendOutcome, listActiveUserIds, listUsers, sendNotification } from '../../transport';
import type { SendRequest } from '../../transport';
import { asNodeError, errorItem, fieldError } from '../../nodeErrors';
import { readParameter } from '../itemLoop';
import { EarlierTries } from './earlierTries';
import { DEFAULT_KEYS_TO_KEEP, IdempotencyKeys, storedKey } from './idempotencyKeys';
import type { IdempotencyKey } from './idempotencyKeys';
import { readWaitTimeout, waitFields, waitForFinalStatus } from './wait';

type Audience = 'userIds' | 'user' | 'allUsers' | 'activeUsers';

/** One input item, checked: everything needed to send it, read before anything is sent. */
interface CheckedItem {
	itemIndex: number;
	message: CheckedMessage;
	audience: Audience;
	/** The recipients given on the item (for the userIds and user audiences). */
	userIds: string[];
	/** Absent for Send, and for a past time sent at once with "Send If Time Is Past". */
	scheduledAtWithOffset?: string;
	sentImmediately?: boolean;
	batchSize: number;
	waitTimeoutSeconds?: number;
	/** The option "Idempotency Key", when set. */
	idempotency?: IdempotencyKey;
}

/** Schedule's reading of "Scheduled At" for an item (see schedule.operation.ts). */
export type ScheduleReader = (
	context: IExecuteFunctions,
	itemIndex: number,
	options: IDataObject,
) => Pick<CheckedItem, 'scheduledAtWithOffset' | 'sentImmediately'>;

/** What one send goes out with: the lead item's message, the recipients, the items it stands for. */
interface SendGroup {
	lead: CheckedItem;
	userIds: string[];
	pairedItems: IPairedItemData[];
}

function checkItem(context: IExecuteFunctions, itemIndex: number, readSchedule?: ScheduleReader): CheckedItem {
	const additional = readParameter(context, 'additionalFields', 'Additional Fields', itemIndex, {}) as IDataObject;
	const options = readParameter(context, 'options', 'Options', itemIndex, {}) as IDataObject;
	const message = checkMessage({
		title: readParameter(context, 'title', 'Title', itemIndex, ''),
		body: readParameter(context, 'body', 'Body', itemIndex, ''),
		imageUrl: additional.imageUrl,
		deeplink: additional.deeplink,
		deeplinkAnnouncementId: additional.deeplinkAnnouncementId,
		customDeeplink: additional.customDeeplink,
		announcementId: additional.announcementId,
	});
	if (isProblem(message)) throw fieldError(context, message.field, message.problem, itemIndex);

	const audience = readParameter(context, 'audience', 'Audience', itemIndex, 'userIds') as Audience;
	let userIds: string[] = [];
	if (audience === 'userIds') {
		const parsed = parseUserIds(readParameter(context, 'userIds', 'User IDs', itemIndex, ''));
		if ('problem' in parsed) throw fieldError(context, 'User IDs', parsed.problem, itemIndex);
		if (parsed.userIds.length === 0) {
			throw fieldError(context, 'User IDs', 'is empty: give at least one user ID', itemIndex);
		}
		userIds = parsed.userIds;
	} else if (audience === 'user') {
		const userId = readParameter(context, 'user', 'User', itemIndex, '', { extractValue: true });
		if (typeof userId !== 'string' && typeof userId !== 'number') {
			throw fieldError(context, 'User', 'must be one user ID', itemIndex);
		}
		if (String(userId).trim() === '') throw fieldError(context, 'User', 'is empty: pick a user', itemIndex);
		userIds = [String(userId).trim()];
	} else if (audience !== 'allUsers' && audience !== 'activeUsers') {
		throw fieldError(context, 'Audience', `has an unknown value "${String(audience)}"`, itemIndex);
	}

	const batchSize = Number(options.batchSize ?? 1000);
	if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000) {
		throw fieldError(context, 'Batch Size', `must be a whole number from 1 to 1000 (got ${String(options.batchSize)})`, itemIndex);
	}
	const waitTimeoutSeconds = readWaitTimeout(context, options, itemIndex);
	const idempotency = readIdempotencyKey(context, options, itemIndex);
	const checked: CheckedItem = { itemIndex, message, audience, userIds, batchSize, waitTimeoutSeconds, idempotency };
	if (readSchedule) Object.assign(checked, readSchedule(context, itemIndex, options));
	return checked;
}

/** The options "Idempotency Key", "Idempotency Scope" and "Keys to Keep" of an item. */
function readIdempotencyKey(context: IExecuteFunctions, options: IDataObject, itemIndex: number): IdempotencyKey | undefined {
	if (options.idempotencyKey === undefined) return undefined;
	const value = options.idempotencyKey;
	if (typeof value !== 'string' && typeof value !== 'number') {
		throw fieldError(context, 'Idempotency Key', 'must be a text, for example {{ $json.orderId }}:{{ $json.status }}', itemIndex);
	}
	const key = String(value).trim();
	if (key === '') {
		throw fieldError(context, 'Idempotency Key', 'is empty for this item: give each event its own key, or remove the option', itemIndex);
	}
	const scope = options.idempotencyScope ?? 'node';
	if (scope !== 'node' && scope !== 'workflow') {
		throw fieldError(context, 'Idempotency Scope', `has an unknown value "${String(scope)}": use node or workflow`, itemIndex);
	}
	const keysToKeep = Number(options.keysToKeep ?? DEFAULT_KEYS_TO_KEEP);
	if (!Number.isInteger(keysToKeep) || keysToKeep < 1) {
		throw fieldError(context, 'Keys to Keep', `must be a whole number of at least 1 (got ${String(options.keysToKeep)})`, itemIndex);
	}
	return { key, scope, keysToKeep };
}

/** Reads audiences that live in the API once per run, however many items ask for them. */
function audienceReader(context: IExecuteFunctions) {
	const cache = new Map<Audience, Promise<string[]>>();
	return async (group: SendGroup): Promise<string[]> => {
		const { audience, itemIndex } = group.lead;
		if (audience === 'userIds' || audience === 'user') return group.userIds;
		if (!cache.has(audience)) {
			cache.set(
				audience,
				audience === 'allUsers'
					? listUsers(context, Infinity, itemIndex).then((users) => users.map((user) => user.id))
					: listActiveUserIds(context, itemIndex),
			);
		}
		return await cache.get(audience)!;
	};
}

function requestFor(item: CheckedItem, targetUserIds: string[]): SendRequest {
	const { title, body, image_url, deeplink, announcement_id } = item.message;
	return {
		title,
		body,
		target_user_ids: targetUserIds,
		...(image_url ? { image_url } : {}),
		...(deeplink ? { deeplink } : {}),
		...(announcement_id ? { announcement_id } : {}),
		...(item.scheduledAtWithOffset ? { scheduled_at: item.scheduledAtWithOffset } : {}),
	};
}

/** What this run knows of sends made before it (earlier tries) and of Idempotency Keys. */
interface SendMemory {
	earlierTries: EarlierTries;
	keys: IdempotencyKeys;
	/** Send ids by stored key, for keys used in this very run (a skipped item names the send). */
	sentByKey: Map<string, string>;
}

/**
 * One batch of a group: never a send an earlier try of this node already made (its item comes out
 * with `sentByEarlierTry`), never a send whose Idempotency Key was used (its item comes out
 * `skipped`), otherwise sent by the safe-send rule, and remembered as sent, not sent, or unknown.
 */
async function sendBatch(
	context: IExecuteFunctions,
	memory: SendMemory,
	lead: CheckedItem,
	batch: string[],
	batchIndex: number,
	batchCount: number,
): Promise<IDataObject> {
	const about: IDataObject = {
		...(batchCount > 1 ? { batch: batchIndex + 1, batchCount } : {}),
		recipients: batch.length,
		title: lead.message.title,
		...(lead.scheduledAtWithOffset ? { scheduledAt: lead.scheduledAtWithOffset } : {}),
		...(lead.sentImmediately ? { sentImmediately: true } : {}),
		...(lead.message.warnings.length > 0 ? { warnings: lead.message.warnings } : {}),
	};
	const earlier = memory.earlierTries.get(lead.itemIndex, batchIndex);
	if (earlier?.id) {
		return { id: earlier.id, status: earlier.status, ...about, sentByEarlierTry: true, targetUserIds: batch };
	}
	const { idempotency } = lead;
	// A send whose outcome stayed unknown in an earlier try still holds its key: it is looked up, not skipped.
	if (idempotency && earlier?.unknownSince === undefined && !(await memory.keys.claim(idempotency, batchIndex))) {
		const earlierSendId = memory.sentByKey.get(storedKey(idempotency.key, batchIndex));
		return {
			skipped: true,
			skipReason: 'Idempotency Key already used: not sent again',
			idempotencyKey: idempotency.key,
			...(earlierSendId ? { earlierSendId } : {}),
			...about,
			targetUserIds: batch,
		};
	}
	const startedAt = Date.now();
	try {
		const outcome = await sendNotification(context, requestFor(lead, batch), lead.itemIndex, { lookUpSince: earlier?.unknownSince });
		memory.earlierTries.sent(lead.itemIndex, batchIndex, outcome.id, outcome.status);
		if (idempotency) {
			memory.sentByKey.set(storedKey(idempotency.key, batchIndex), outcome.id);
			// The send is made: a failing store must not hide its id from the workflow.
			await memory.keys.confirm(idempotency, batchIndex).catch(() => undefined);
		}
		return {
			id: outcome.id,
			status: outcome.status,
			...about,
			...(outcome.recoveredAfter ? { recoveredAfter: outcome.recoveredAfter } : {}),
			...(idempotency ? { idempotencyKey: idempotency.key } : {}),
			targetUserIds: batch,
		};
	} catch (error) {
		const nodeError = asNodeError(context, error, lead.itemIndex);
		if (failedSendOutcome(error) === 'notSent') {
			memory.earlierTries.notSent(lead.itemIndex, batchIndex);
			if (idempotency) {
				const freed = await memory.keys.release(idempotency, batchIndex).then(
					() => true,
					() => false,
				);
				if (!freed)
					nodeError.description = `${nodeError.description ?? ''} The Idempotency Key "${idempotency.key}" could not be freed.`.trim();
			}
		} else {
			memory.earlierTries.unknown(lead.itemIndex, batchIndex, earlier?.unknownSince ?? startedAt);
			const note = idempotency
				? ` Its Idempotency Key "${idempotency.key}" stays used: a retry of this execution looks the send up first.`
				: ' A retry of this execution looks the send up first.';
			nodeError.description = `${nodeError.description ?? ''}${note}`.trim();
		}
		throw nodeError;
	}
}

/** Sends one group, batch after batch. A failing batch does not hide the batches already sent:
 * they are named in the error (or output before the error item when the node continues). */
async function sendGroup(
	context: IExecuteFunctions,
	memory: SendMemory,
	group: SendGroup,
	recipients: string[],
): Promise<INodeExecutionData[]> {
	const { lead } = group;
	const batches = toBatches(recipients, lead.batchSize);
	const output: INodeExecutionData[] = [];
	const sentSummaries: string[] = [];
	for (let index = 0; index < batches.length; index++) {
		const batch = batches[index];
		try {
			const json = await sendBatch(context, memory, lead, batch, index, batches.length);
			if (typeof json.id === 'string') sentSummaries.push(`batch ${index + 1}: ${json.id}`);
			output.push({ json, pairedItem: group.pairedItems });
		} catch (error) {
			const nodeError = asNodeError(context, error, lead.itemIndex);
			const notSent = batches.length - index - 1;
			if (batches.length > 1) {
				nodeError.description = [
					nodeError.description,
					`Batch ${index + 1} of ${batches.length} failed.`,
					sentSummaries.length > 0 ? `Already sent (not repeated): ${sentSummaries.join(', ')}.` : 'No batch was sent before it.',
					!context.continueOnFail() && notSent > 0 ? `Not sent: the ${notSent} batch(es) after it.` : '',
				]
					.filter(Boolean)
					.join(' ');
			}
			if (!context.continueOnFail()) throw nodeError;
			const batchFields = batches.length > 1 ? { batch: index + 1, batchCount: batches.length } : {};
			output.push(errorItem(nodeError, group.pairedItems, { ...batchFields, recipients: batch.length, targetUserIds: batch }));
		}
	}
	if (lead.waitTimeoutSeconds !== undefined) {
		for (const item of output) {
			if (typeof item.json.id !== 'string' || item.json.error || item.json.skipped) continue;
			try {
				const result = await waitForFinalStatus(context, item.json.id, lead.waitTimeoutSeconds, lead.itemIndex);
				Object.assign(item.json, waitFields(result), {
					stats: result.detail.notification.stats,
					sentAt: result.detail.notification.sent_at,
				});
			} catch (error) {
				// The send went out: its id must reach the workflow even when following it up fails.
				Object.assign(item.json, { finalStatusReached: false, waitError: (error as Error).message });
			}
		}
	}
	return output;
}

/**
 * Send and Schedule (with `readSchedule`). Every item is checked first: with bad input nothing at all is sent (or,
 * when the node continues on fail, that item becomes an error item). Then each item (or, in
 * "One Send for All Items" mode, all items together) is de-duplicated, split into batches and sent.
 */
export async function sendItems(context: IExecuteFunctions, readSchedule?: ScheduleReader): Promise<INodeExecutionData[]> {
	const items = context.getInputData();
	const sendMode = readParameter(context, 'sendMode', 'Send Mode', 0, 'perItem');
	// An unknown mode must not fall back to one send per item: that could turn one intended send into many.
	if (sendMode !== 'perItem' && sendMode !== 'combined') {
		throw fieldError(context, 'Send Mode', `has an unknown value "${String(sendMode).slice(0, 60)}": use perItem or combined`, 0);
	}
	const combined = sendMode === 'combined';
	const outputByItem: INodeExecutionData[][] = items.map(() => []);
	const checkedItems: CheckedItem[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const checked = checkItem(context, itemIndex, readSchedule);
			// One send for all items takes its audience from the first item: another audience on a
			// later item would be dropped without a word, so it is an error instead.
			if (combined && checkedItems.length > 0 && checked.audience !== checkedItems[0].audience) {
				throw fieldError(
					context,
					'Audience',
					`must be the same on every item in "One Send for All Items" mode (item ${checkedItems[0].itemIndex} has "${checkedItems[0].audience}", this one "${checked.audience}")`,
					itemIndex,
				);
			}
			checkedItems.push(checked);
		} catch (error) {
			const nodeError = asNodeError(context, error, itemIndex);
			if (!context.continueOnFail()) throw nodeError;
			outputByItem[itemIndex].push(errorItem(nodeError, { item: itemIndex }));
		}
	}
	if (checkedItems.length === 0) return outputByItem.flat();

	const groups: SendGroup[] = combined
		? [
				{
					lead: checkedItems[0],
					userIds: checkedItems.flatMap((item) => item.userIds),
					pairedItems: checkedItems.map((item) => ({ item: item.itemIndex })),
				},
			]
		: checkedItems.map((item) => ({ lead: item, userIds: item.userIds, pairedItems: [{ item: item.itemIndex }] }));

	const readAudience = audienceReader(context);
	const memory: SendMemory = { earlierTries: new EarlierTries(context), keys: new IdempotencyKeys(context), sentByKey: new Map() };
	// Sends of earlier items, named in the error when a later item stops the node: its output is
	// lost then, and a send the workflow is not told about would be made again by a re-run.
	const sentBefore: string[] = [];
	for (const [groupIndex, group] of groups.entries()) {
		const itemIndex = group.lead.itemIndex;
		try {
			const recipients = uniqueUserIds(await readAudience(group));
			if (recipients.length === 0) {
				throw new NodeOperationError(context.getNode(), 'The audience has no users: nothing was sent', {
					itemIndex,
					description:
						group.lead.audience === 'activeUsers'
							? 'No user has an active app right now (installed, logged in, notifications allowed).'
							: 'The organization has no users.',
				});
			}
			const output = await sendGroup(context, memory, group, recipients);
			outputByItem[itemIndex].push(...output);
			for (const { json } of output) {
				if (typeof json.id === 'string') sentBefore.push(`item ${itemIndex}${json.batch ? ` batch ${json.batch}` : ''}: ${json.id}`);
			}
		} catch (error) {
			const nodeError = asNodeError(context, error, itemIndex);
			if (!context.continueOnFail()) {
				const notSent = groups.slice(groupIndex + 1).map((later) => later.lead.itemIndex);
				if (sentBefore.length > 0 || notSent.length > 0) {
					nodeError.description = [
						nodeError.description,
						sentBefore.length > 0 ? `Already sent for earlier items (not repeated): ${sentBefore.join(', ')}.` : '',
						notSent.length > 0 ? `Not sent: item${notSent.length > 1 ? 's' : ''} ${notSent.join(', ')}.` : '',
					]
						.filter(Boolean)
						.join(' ');
				}
				throw nodeError;
			}
			outputByItem[itemIndex].push(errorItem(nodeError, group.pairedItems));
		}
	}
	const output = outputByItem.flat();
	// With error items n8n may run the node again (Retry On Fail retries a run whose first item is an
	// error), so the records stay; otherwise nothing runs this node run again.
	if (!output.some((item) => item.json.error !== undefined)) memory.earlierTries.forgetRun();
	return output;
}
