import type { IDataObject } from 'n8n-workflow';

import type { Guarded } from '../../../neverTwice';
import type { SendRequest } from '../../../transport';
import type { BatchDelivery, SendTask } from './types';

/**
 * The fields every output item of a batch carries, whatever became of it, told from `sent`: the
 * request as it went out. An earlier try's recorded attempt may have gone out at another time than
 * this try planned (Quiet Hours that ended since, a Schedule's time now past): then its time is the
 * one told, and this try's plan for it is not.
 */
function describeBatch(task: SendTask, sent: SendRequest): IDataObject {
	const { group, batch, batchIndex, batchCount } = task;
	const { lead } = group;
	const asPlanned = sent.scheduled_at === task.request.scheduled_at;
	return {
		...(batchCount > 1 ? { batch: batchIndex + 1, batchCount } : {}),
		recipients: batch.length,
		title: sent.title,
		...(sent.scheduled_at ? { scheduledAt: sent.scheduled_at } : {}),
		...(task.delivery
			? asPlanned
				? describeDelivery(task.delivery)
				: { timeZone: task.delivery.timeZone }
			: {}),
		...(lead.sentImmediately && asPlanned ? { sentImmediately: true } : {}),
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
 * The output item of a batch that never-twice let through (neverTwice/): its send, made now or by
 * an earlier try of this node (`sentByEarlierTry`), or its skip (an Idempotency Key already used).
 */
export function batchOutput(task: SendTask, guarded: Guarded): IDataObject {
	const targetUserIds = task.batch;
	switch (guarded.kind) {
		case 'sentByEarlierTry':
			return {
				id: guarded.id,
				status: guarded.status,
				...describeBatch(task, guarded.request),
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
				...describeBatch(task, task.request),
				targetUserIds,
			};
		}
		case 'sent': {
			const { outcome, idempotencyKey } = guarded;
			return {
				id: outcome.id,
				status: outcome.status,
				...describeBatch(task, guarded.request),
				...(outcome.recoveredAfter ? { recoveredAfter: outcome.recoveredAfter } : {}),
				...(idempotencyKey ? { idempotencyKey } : {}),
				targetUserIds,
			};
		}
	}
}
