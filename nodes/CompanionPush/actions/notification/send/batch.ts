import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { NeverTwice } from '../../../neverTwice';
import { sendNotification } from '../../../transport';
import type { SendRequest } from '../../../transport';
import type { CheckedItem, SendTask } from './types';

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
		async (options) =>
			await sendNotification(context, requestFor(lead, targetUserIds), lead.itemIndex, options),
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
