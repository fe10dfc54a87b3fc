import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { asNodeError } from '../../../nodeErrors';
import { failedSendOutcome, sendNotification } from '../../../transport';
import type { SendOptions, SendRequest } from '../../../transport';
import type { EarlierTries } from '../../../neverTwice/earlierTries';
import type { KeyedEvent } from '../../../neverTwice/keyedEvent';
import type { CheckedItem } from './input';
import type { SendGroup, SendTask } from './plan';

/** What a run knows of sends made before it: its earlier tries, and the events of its Idempotency Keys. */
export interface SendMemory {
	earlierTries: EarlierTries;
	events: Map<SendGroup, KeyedEvent>;
}

/** When n8n's store cannot say whether a key was used, the list of sends of this long is read:
 * nothing like the send there, twice, proves it was not made. */
const LOOKBACK_WITHOUT_STORE_MS = 24 * 60 * 60 * 1000;

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

/** The fields every output item of a batch carries, whatever became of it. */
function describeBatch({ group, batch, batchIndex, batchCount }: SendTask): IDataObject {
	const { lead } = group;
	return {
		...(batchCount > 1 ? { batch: batchIndex + 1, batchCount } : {}),
		recipients: batch.length,
		title: lead.message.title,
		...(lead.scheduledAtWithOffset ? { scheduledAt: lead.scheduledAtWithOffset } : {}),
		...(lead.sentImmediately ? { sentImmediately: true } : {}),
		...(lead.message.warnings.length > 0 ? { warnings: lead.message.warnings } : {}),
	};
}

/** A send that must not be made because what came before it cannot be told: the outcome is unknown. */
function cannotTell(context: IExecuteFunctions, task: SendTask, reason: string, check: string): NodeOperationError {
	const error = new NodeOperationError(context.getNode(), `Sending the notification: the outcome is unknown (${reason}), so it was not sent`, {
		itemIndex: task.group.lead.itemIndex,
		description: `${check} If they did not get it, send it again without the earlier run's records (a new execution, or a new Idempotency Key).`,
	});
	error.context.sendOutcome = 'unknown';
	return error;
}

/** How to send a batch of an event with an Idempotency Key, or the item to output instead. */
async function underKey(
	context: IExecuteFunctions,
	task: SendTask,
	event: KeyedEvent,
	about: IDataObject,
): Promise<{ output: IDataObject } | { options: SendOptions }> {
	const { batch, batchId } = task;
	const key = event.idempotency.key;
	const claim = await event.claim();
	if (claim.state === 'used') {
		const earlierSendId = 'earlierSendIds' in claim ? claim.earlierSendIds.get(batchId) : undefined;
		const output = { skipped: true, skipReason: 'Idempotency Key already used: not sent again', idempotencyKey: key, ...(earlierSendId ? { earlierSendId } : {}) };
		return { output: { ...output, ...about, targetUserIds: batch } };
	}
	if (claim.state === 'storeFailed') {
		// The store cannot say whether this event was sent: only a list without anything like it decides.
		const reason = `n8n's store of Idempotency Keys could not be read (${claim.reason})`;
		return { options: { lookUpFrom: Date.now() - LOOKBACK_WITHOUT_STORE_MS, lookUpReason: reason, ifFoundFirst: 'unknown' } };
	}
	if (claim.state === 'claimed') return { options: {} };
	// Claimed by another run that never confirmed it (it died, or its outcome stayed unknown).
	if (claim.acceptedBatches.has(batchId)) {
		const output = { skipped: true, skipReason: 'Idempotency Key already used: this batch was sent by an earlier run', idempotencyKey: key };
		return { output: { ...output, ...about, targetUserIds: batch } };
	}
	const check = `Check the list of sends (Notification > Get Many) for sends titled "${task.group.lead.message.title.slice(0, 80)}" to learn who was notified.`;
	if (!claim.sameLayout) {
		throw cannotTell(context, task, `an earlier run claimed the Idempotency Key "${key}" for other recipients, and may have sent to some of these`, check);
	}
	if (claim.claimedAt === undefined) {
		throw cannotTell(context, task, `the Idempotency Key "${key}" was claimed by a run that never confirmed its send, and when cannot be told (more than 48 hours ago, or n8n stopped while the key was being written)`, check);
	}
	return { options: { lookUpFrom: claim.claimedAt, lookUpReason: 'an earlier run that claimed its Idempotency Key' } };
}

/**
 * Sends one batch: never a send an earlier try of this node already made (its item comes out with
 * `sentByEarlierTry`), never a send whose Idempotency Key was used (its item comes out `skipped`),
 * and, where an earlier try or run may have made it, only after the list of sends proved it absent.
 * Otherwise sent by the transport's rule, and remembered as sent, not sent, or unknown.
 */
export async function sendBatch(context: IExecuteFunctions, memory: SendMemory, task: SendTask): Promise<IDataObject> {
	const { group, batch: userIds, batchId } = task;
	const { lead } = group;
	const about = describeBatch(task);
	const earlier = memory.earlierTries.get(lead.itemIndex, batchId);
	if (earlier?.id) return { id: earlier.id, status: earlier.status, ...about, sentByEarlierTry: true, targetUserIds: userIds };
	const changed = memory.earlierTries.batchesOf(lead.itemIndex).filter((earlierBatch) => !group.layout.includes(earlierBatch));
	if (changed.length > 0) {
		throw cannotTell(
			context,
			task,
			'the recipients changed since an earlier try of this node, which sent, or may have sent, other batches of them',
			'The earlier try\'s output or error names what it sent.',
		);
	}
	const event = memory.events.get(group);
	let options: SendOptions = {};
	if (event) {
		const keyed = await underKey(context, task, event, about);
		if ('output' in keyed) return keyed.output;
		options = keyed.options;
	}
	const holder = event ? event.holder(batchId) : memory.earlierTries.holderOf(lead.itemIndex, batchId);
	if (earlier?.unknownSince !== undefined) {
		// This execution's earlier try lost its answer: look from its own time.
		options = { lookUpFrom: earlier.unknownSince, lookUpReason: 'an earlier try whose answer was lost' };
	}
	const startedAt = Date.now();
	try {
		const outcome = await sendNotification(context, requestFor(lead, userIds), lead.itemIndex, { ...options, holder });
		memory.earlierTries.sent(lead.itemIndex, batchId, holder, outcome.id, outcome.status);
		await event?.accepted(batchId, outcome.id);
		return {
			id: outcome.id,
			status: outcome.status,
			...about,
			...(outcome.recoveredAfter ? { recoveredAfter: outcome.recoveredAfter } : {}),
			...(event ? { idempotencyKey: event.idempotency.key } : {}),
			targetUserIds: userIds,
		};
	} catch (error) {
		const nodeError = asNodeError(context, error, lead.itemIndex);
		if (failedSendOutcome(error) === 'notSent') {
			memory.earlierTries.notSent(lead.itemIndex, batchId);
		} else {
			memory.earlierTries.unknown(lead.itemIndex, batchId, holder, options.lookUpFrom ?? startedAt);
			const note = event
				? ` Its Idempotency Key "${event.idempotency.key}" stays claimed: a later run looks the send up first.`
				: ' A retry of this execution looks the send up first.';
			nodeError.description = `${nodeError.description ?? ''}${note}`.trim();
		}
		throw nodeError;
	}
}
