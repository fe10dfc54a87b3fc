import { NodeOperationError, sleep } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, IPairedItemData, NodeApiError } from 'n8n-workflow';

import { checkMessage, isProblem } from '../../helpers/message';
import type { CheckedMessage } from '../../helpers/message';
import { runPool } from '../../helpers/pool';
import type { PoolResult } from '../../helpers/pool';
import { parseUserIds, toBatches, uniqueUserIds } from '../../helpers/recipients';
import { failedSendOutcome, listActiveUserIds, listUsers, sendNotification } from '../../transport';
import type { SendRequest } from '../../transport';
import { asNodeError, errorItem, fieldError } from '../../nodeErrors';
import { readMaxParallelRequests, readParameter } from '../itemLoop';
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
	maxParallelRequests: number;
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
	const maxParallelRequests = readMaxParallelRequests(context, options, itemIndex);
	const checked: CheckedItem = { itemIndex, message, audience, userIds, batchSize, waitTimeoutSeconds, idempotency, maxParallelRequests };
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

/** How far back the list of sends is searched for the send of an unconfirmed claim. */
const UNCONFIRMED_LOOKBACK_MS = 24 * 60 * 60 * 1000;
/** A claim may be unconfirmed because its send is still in flight in another execution: it gets
 * this long to be confirmed before the list is searched (a send takes well under a second). */
const UNCONFIRMED_SETTLE_MS = 5_000;

/** What this run knows of sends made before it (earlier tries) and of Idempotency Keys. */
interface SendMemory {
	earlierTries: EarlierTries;
	keys: IdempotencyKeys;
	/** The sends of keys claimed in this very run, by stored key: a skipped copy names the send
	 * (once it is made: copies may run in parallel with it). */
	sentByKey: Map<string, Promise<string | undefined>>;
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
	let claim = idempotency && earlier?.unknownSince === undefined ? await memory.keys.claim(idempotency, batchIndex) : undefined;
	if (idempotency && claim === 'unconfirmed') {
		// Claimed before but never confirmed: perhaps a send still in flight in another execution.
		// Given time to finish, it is confirmed by then; otherwise its send is looked for below.
		await sleep(UNCONFIRMED_SETTLE_MS);
		claim = await memory.keys.claim(idempotency, batchIndex);
	}
	if (idempotency && claim === 'used') {
		const earlierSendId = await memory.sentByKey.get(storedKey(idempotency.key, batchIndex));
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
	// A key claimed before but never confirmed (n8n died in between, or the outcome stayed unknown):
	// the send is looked for in the list of sends, and made only when it is not there.
	const lookUpSince = earlier?.unknownSince ?? (claim === 'unconfirmed' ? Date.now() - UNCONFIRMED_LOOKBACK_MS : undefined);
	const sending = sendNotification(context, requestFor(lead, batch), lead.itemIndex, {
		lookUpSince,
		lookUpReason: claim === 'unconfirmed' ? 'an earlier run that claimed its Idempotency Key' : undefined,
	});
	if (idempotency) {
		memory.sentByKey.set(
			storedKey(idempotency.key, batchIndex),
			sending.then(
				(outcome) => outcome.id,
				() => undefined,
			),
		);
	}
	try {
		const outcome = await sending;
		memory.earlierTries.sent(lead.itemIndex, batchIndex, outcome.id, outcome.status);
		if (idempotency) {
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

	const memory: SendMemory = { earlierTries: new EarlierTries(context), keys: new IdempotencyKeys(context), sentByKey: new Map() };
	const maxParallel = checkedItems[0].maxParallelRequests;

	// 1. The audiences, read before any send (those read from the API once per run): a group
	// whose audience cannot be read, or is empty, fails whole.
	const readAudience = audienceReader(context);
	const tasks: SendTask[] = [];
	const groupErrors = new Map<SendGroup, NodeApiError | NodeOperationError>();
	for (const group of groups) {
		try {
			const recipients = uniqueUserIds(await readAudience(group));
			if (recipients.length === 0) {
				throw new NodeOperationError(context.getNode(), 'The audience has no users: nothing was sent', {
					itemIndex: group.lead.itemIndex,
					description:
						group.lead.audience === 'activeUsers'
							? 'No user has an active app right now (installed, logged in, notifications allowed).'
							: 'The organization has no users.',
				});
			}
			const batches = toBatches(recipients, group.lead.batchSize);
			batches.forEach((batch, batchIndex) => tasks.push({ group, batch, batchIndex, batchCount: batches.length }));
		} catch (error) {
			const nodeError = asNodeError(context, error, group.lead.itemIndex);
			if (!context.continueOnFail()) {
				const others = groups.filter((other) => other !== group).map((other) => other.lead.itemIndex);
				if (others.length > 0) nodeError.description = joinSentences(nodeError.description ?? undefined, `Not sent: ${itemList(others)}.`);
				throw nodeError;
			}
			groupErrors.set(group, nodeError);
		}
	}

	// 2. The sends, in parallel up to Max Parallel Requests, started in item order. When one fails
	// and the node does not continue on fail, nothing new starts: what is in flight finishes, then
	// the error says what was sent and what was not.
	const stopOnFailure = !context.continueOnFail();
	const results = await runPool(
		tasks.length,
		maxParallel,
		async (index) => {
			const { group, batch, batchIndex, batchCount } = tasks[index];
			return await sendBatch(context, memory, group.lead, batch, batchIndex, batchCount);
		},
		stopOnFailure,
	);
	if (stopOnFailure && results.some((result) => result?.ok === false)) throw stopError(context, tasks, results);

	// 3. Wait for Final Status: every send followed at once, in parallel up to the same bound.
	const toFollow = tasks.flatMap((task, index) => {
		const result = results[index];
		const json = result?.ok ? result.value : undefined;
		return json && typeof json.id === 'string' && task.group.lead.waitTimeoutSeconds !== undefined ? [{ json, lead: task.group.lead }] : [];
	});
	await runPool(toFollow.length, maxParallel, async (index) => {
		const { json, lead } = toFollow[index];
		try {
			const result = await waitForFinalStatus(context, json.id as string, lead.waitTimeoutSeconds!, lead.itemIndex);
			Object.assign(json, waitFields(result), { stats: result.detail.notification.stats, sentAt: result.detail.notification.sent_at });
		} catch (error) {
			// The send went out: its id must reach the workflow even when following it up fails.
			Object.assign(json, { finalStatusReached: false, waitError: (error as Error).message });
		}
	});

	// 4. The output, in item and batch order, each item paired with the input items it stands for.
	for (const group of groups) {
		const groupError = groupErrors.get(group);
		if (groupError) outputByItem[group.lead.itemIndex].push(errorItem(groupError, group.pairedItems));
	}
	tasks.forEach((task, index) => {
		const result = results[index]!;
		const { group } = task;
		if (result.ok) outputByItem[group.lead.itemIndex].push({ json: result.value, pairedItem: group.pairedItems });
		else {
			const nodeError = asNodeError(context, result.error, group.lead.itemIndex);
			if (task.batchCount > 1) nodeError.description = batchFailure(nodeError.description, task, tasks, results);
			const batchFields = task.batchCount > 1 ? { batch: task.batchIndex + 1, batchCount: task.batchCount } : {};
			outputByItem[group.lead.itemIndex].push(
				errorItem(nodeError, group.pairedItems, { ...batchFields, recipients: task.batch.length, targetUserIds: task.batch }),
			);
		}
	});
	const output = outputByItem.flat();
	// With error items n8n may run the node again (Retry On Fail retries a run whose first item is an
	// error), so the records stay; otherwise nothing runs this node run again.
	if (!output.some((item) => item.json.error !== undefined)) memory.earlierTries.forgetRun();
	return output;
}

/** One send to make: a batch of a group. */
interface SendTask {
	group: SendGroup;
	batch: string[];
	batchIndex: number;
	batchCount: number;
}

function joinSentences(...parts: Array<string | undefined>): string {
	return parts.filter(Boolean).join(' ');
}

function itemList(itemIndexes: number[]): string {
	return `item${itemIndexes.length > 1 ? 's' : ''} ${itemIndexes.join(', ')}`;
}

/** For a failed batch of a group in batches: which batch, and what its group already sent. */
function batchFailure(
	description: string | null | undefined,
	failed: SendTask,
	tasks: SendTask[],
	results: Array<PoolResult<IDataObject>>,
	notStarted = 0,
): string {
	const sentSummaries = tasks.flatMap((task, index) => {
		const result = results[index];
		return task.group === failed.group && result?.ok && typeof result.value.id === 'string'
			? [`batch ${task.batchIndex + 1}: ${result.value.id}`]
			: [];
	});
	return joinSentences(
		description ?? undefined,
		`Batch ${failed.batchIndex + 1} of ${failed.batchCount} failed.`,
		sentSummaries.length > 0 ? `Already sent (not repeated): ${sentSummaries.join(', ')}.` : 'No batch was sent before it.',
		notStarted > 0 ? `Not sent: the ${notStarted} batch(es) after it.` : '',
	);
}

/**
 * The error that stops the node: the first failed send, in item order. Its output is dropped with
 * it, so it names every send already made (a re-run would notify those people twice otherwise),
 * what was skipped, what else failed, and what was not sent.
 */
function stopError(context: IExecuteFunctions, tasks: SendTask[], results: Array<PoolResult<IDataObject>>) {
	const firstFailed = results.findIndex((result) => result?.ok === false);
	const failedTask = tasks[firstFailed];
	const failedItem = failedTask.group.lead.itemIndex;
	const nodeError = asNodeError(context, (results[firstFailed] as { error: unknown }).error, failedItem);
	const name = (task: SendTask) => `item ${task.group.lead.itemIndex}${task.batchCount > 1 ? ` batch ${task.batchIndex + 1}` : ''}`;
	const sent: string[] = [];
	const skipped: string[] = [];
	const alsoFailed: string[] = [];
	const notSent: SendTask[] = [];
	let laterSent = false;
	tasks.forEach((task, index) => {
		const result = results[index];
		if (task.group === failedTask.group) return;
		if (result === undefined) notSent.push(task);
		else if (!result.ok) alsoFailed.push(`${name(task)} (${(result.error as Error).message})`);
		else if (result.value.skipped === true) skipped.push(name(task));
		else {
			sent.push(`${name(task)}: ${String(result.value.id)}`);
			laterSent ||= task.group.lead.itemIndex > failedItem;
		}
	});
	if (failedTask.batchCount > 1) {
		const notStartedOfGroup = tasks.filter((task, index) => task.group === failedTask.group && results[index] === undefined).length;
		nodeError.description = batchFailure(nodeError.description, failedTask, tasks, results, notStartedOfGroup);
	}
	// A group none of whose batches started is named as an item; one cut short, by its batches.
	const notSentNames = [...new Set(notSent.map((task) => task.group))].flatMap((group) => {
		const ofGroup = tasks.filter((task) => task.group === group);
		const unstarted = notSent.filter((task) => task.group === group);
		return unstarted.length === ofGroup.length
			? [`${group.lead.itemIndex}`]
			: unstarted.map((task) => `${group.lead.itemIndex} batch ${task.batchIndex + 1}`);
	});
	nodeError.description = joinSentences(
		nodeError.description ?? undefined,
		sent.length > 0 ? `Already sent for ${laterSent ? 'other' : 'earlier'} items (not repeated): ${sent.join(', ')}.` : '',
		skipped.length > 0 ? `Skipped (Idempotency Key already used): ${skipped.join(', ')}.` : '',
		alsoFailed.length > 0 ? `Also failed: ${alsoFailed.join('; ')}.` : '',
		notSentNames.length > 0 ? `Not sent: item${notSentNames.length > 1 ? 's' : ''} ${notSentNames.join(', ')}.` : '',
	);
	return nodeError;
}
