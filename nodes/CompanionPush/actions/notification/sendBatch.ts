import { sleep } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { asNodeError } from '../../nodeErrors';
import { timings } from '../../processState';
import { failedSendOutcome, sendNotification } from '../../transport';
import type { SendRequest } from '../../transport';
import type { EarlierTries } from './earlierTries';
import { storedKey } from './idempotencyKeys';
import type { IdempotencyKeys } from './idempotencyKeys';
import type { CheckedItem } from './sendInput';

/** What a run knows of sends made before it (earlier tries) and of Idempotency Keys. */
export interface SendMemory {
	earlierTries: EarlierTries;
	keys: IdempotencyKeys;
	/** The sends of keys claimed in this very run, by stored key: a skipped copy names the send
	 * (once it is made: copies may run in parallel with it). */
	sentByKey: Map<string, Promise<string | undefined>>;
}

/** One batch of a group: its lead item's message and the batch's recipients. */
export interface Batch {
	lead: CheckedItem;
	userIds: string[];
	batchIndex: number;
	batchCount: number;
}

/** How far back the list of sends is searched for the send of an unconfirmed claim. */
const UNCONFIRMED_LOOKBACK_MS = 24 * 60 * 60 * 1000;

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
function describeBatch({ lead, userIds, batchIndex, batchCount }: Batch): IDataObject {
	return {
		...(batchCount > 1 ? { batch: batchIndex + 1, batchCount } : {}),
		recipients: userIds.length,
		title: lead.message.title,
		...(lead.scheduledAtWithOffset ? { scheduledAt: lead.scheduledAtWithOffset } : {}),
		...(lead.sentImmediately ? { sentImmediately: true } : {}),
		...(lead.message.warnings.length > 0 ? { warnings: lead.message.warnings } : {}),
	};
}

/**
 * Sends one batch: never a send an earlier try of this node already made (its item comes out
 * with `sentByEarlierTry`), never a send whose Idempotency Key was used (its item comes out
 * `skipped`), otherwise sent by the transport's safe-send rule, and remembered as sent, not sent,
 * or unknown.
 */
export async function sendBatch(context: IExecuteFunctions, memory: SendMemory, batch: Batch): Promise<IDataObject> {
	const { lead, userIds, batchIndex } = batch;
	const about = describeBatch(batch);
	const earlier = memory.earlierTries.get(lead.itemIndex, batchIndex);
	if (earlier?.id) {
		return { id: earlier.id, status: earlier.status, ...about, sentByEarlierTry: true, targetUserIds: userIds };
	}
	const { idempotency } = lead;
	// A send whose outcome stayed unknown in an earlier try still holds its key: it is looked up, not skipped.
	let claim = idempotency && earlier?.unknownSince === undefined ? await memory.keys.claim(idempotency, batchIndex) : undefined;
	if (idempotency && claim === 'unconfirmed') {
		// Claimed before but never confirmed: perhaps a send still in flight in another execution.
		// Given time to finish, it is confirmed by then; otherwise its send is looked for below.
		await sleep(timings().unconfirmedClaimSettleMs);
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
			targetUserIds: userIds,
		};
	}
	const startedAt = Date.now();
	// A key claimed before but never confirmed (n8n died in between, or the outcome stayed unknown):
	// the send is looked for in the list of sends, and made only when it is not there.
	const lookUpSince = earlier?.unknownSince ?? (claim === 'unconfirmed' ? Date.now() - UNCONFIRMED_LOOKBACK_MS : undefined);
	const sending = sendNotification(context, requestFor(lead, userIds), lead.itemIndex, {
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
			targetUserIds: userIds,
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
