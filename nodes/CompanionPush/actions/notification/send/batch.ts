import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { NeverTwice } from '../../../neverTwice';
import { sendNotification } from '../../../transport';
import type { SendRequest } from '../../../transport';
import type { BatchDelivery, SendTask } from './types';

/** The time the batch goes out at: its zone's with a delivery policy (absent: now), else the item's. */
function scheduledAtOf({ group, delivery }: SendTask): string | undefined {
	return delivery ? delivery.scheduledAt : group.lead.scheduledAtWithOffset;
}

function requestFor(task: SendTask): SendRequest {
	const { title, body, image_url, deeplink, announcement_id } = task.group.lead.message;
	const scheduledAt = scheduledAtOf(task);
	return {
		title,
		body,
		target_user_ids: task.batch,
		...(image_url ? { image_url } : {}),
		...(deeplink ? { deeplink } : {}),
		...(announcement_id ? { announcement_id } : {}),
		...(scheduledAt ? { scheduled_at: scheduledAt } : {}),
	};
}

/** The fields every output item of a batch carries, whatever became of it. */
function describeBatch(task: SendTask): IDataObject {
	const { group, batch, batchIndex, batchCount } = task;
	const { lead } = group;
	const scheduledAt = scheduledAtOf(task);
	return {
		...(batchCount > 1 ? { batch: batchIndex + 1, batchCount } : {}),
		recipients: batch.length,
		title: lead.message.title,
		...(scheduledAt ? { scheduledAt } : {}),
		...(task.delivery ? describeDelivery(task.delivery) : {}),
		...(lead.sentImmediately ? { sentImmediately: true } : {}),
		...(lead.message.warnings.length > 0 ? { warnings: lead.message.warnings } : {}),
	};
}

/** Where and when a batch with a delivery policy goes out, and why, in words a user reads. */
function describeDelivery(delivery: BatchDelivery): IDataObject {
	const { timeZone, scheduledAtUtc, localTime, movedToNextDay, movedByQuietHours } = delivery;
	const notes = [
		movedToNextDay
			? 'the local time had already passed on its day, so it goes out the next day'
			: '',
		movedByQuietHours
			? 'it would have arrived during the quiet hours, so it goes out at their end'
			: '',
	].filter(Boolean);
	return {
		timeZone,
		localTime,
		...(scheduledAtUtc ? { scheduledAtUtc } : { sentNow: true }),
		...(movedToNextDay ? { movedToNextDay } : {}),
		...(movedByQuietHours ? { movedByQuietHours } : {}),
		...(notes.length > 0 ? { deliveryNote: `${timeZone}: ${notes.join('; ')}` } : {}),
		...(delivery.usersWithoutTimeZone.length > 0
			? { usersWithoutTimeZone: delivery.usersWithoutTimeZone }
			: {}),
	};
}

/**
 * Sends one batch, as never-twice allows (neverTwice/): never a send an earlier try of this node
 * already made (its item comes out with `sentByEarlierTry`), never a send whose Idempotency Key was
 * used (its item comes out `skipped`), and, where an earlier try or run may have made it, only
 * after the list of sends proved it absent. Its output item, or the error that says what is known.
 */
export async function sendBatch(
	context: IExecuteFunctions,
	neverTwice: NeverTwice,
	task: SendTask,
): Promise<IDataObject> {
	const { lead } = task.group;
	const about = describeBatch(task);
	const targetUserIds = task.batch;
	const guarded = await neverTwice.send(
		task,
		async (options) => await sendNotification(context, requestFor(task), lead.itemIndex, options),
	);
	switch (guarded.kind) {
		case 'sentByEarlierTry':
			return {
				id: guarded.id,
				status: guarded.status,
				...about,
				sentByEarlierTry: true,
				targetUserIds,
			};
		case 'keyUsed': {
			const { skipReason, idempotencyKey, earlierSendId } = guarded;
			return {
				skipped: true,
				skipReason,
				idempotencyKey,
				...(earlierSendId ? { earlierSendId } : {}),
				...about,
				targetUserIds,
			};
		}
		case 'sent': {
			const { outcome, idempotencyKey } = guarded;
			return {
				id: outcome.id,
				status: outcome.status,
				...about,
				...(outcome.recoveredAfter ? { recoveredAfter: outcome.recoveredAfter } : {}),
				...(idempotencyKey ? { idempotencyKey } : {}),
				targetUserIds,
			};
		}
	}
}
