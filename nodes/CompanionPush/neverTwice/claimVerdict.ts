import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { tagged } from '../transport';
import type { EarlierAttempt, SendOutcome, SendRequest } from '../transport';
import type { IdempotencyKey } from './idempotencyKeys';
import type { KeyedEvent } from './keyedEvent';

/* What the claim of a batch's Idempotency Key says (index.ts asks it before a keyed batch goes out):
 * skip the batch, send it, or look it up first; or, where nothing can tell, an error saying the
 * outcome is unknown. */

/** What this module reads of a send group (the send path's SendGroup has this shape). */
export interface Group {
	lead: { itemIndex: number; idempotency?: IdempotencyKey; message: { title: string } };
	/** The content ids of its batches, in order: the event an Idempotency Key names. */
	layout: string[];
}

/** One batch of a group (the send path's SendTask has this shape). */
export interface Batch {
	group: Group;
	/** The batch's identity by its recipients. */
	batchId: string;
	/** The request this try would send (an earlier try's recorded attempt goes instead). */
	request: SendRequest;
}

/** What became of a batch that did not fail; `request`: the request as sent, by this try or an
 * earlier one. */
export type Guarded =
	| { kind: 'sent'; outcome: SendOutcome; request: SendRequest; idempotencyKey?: string }
	| { kind: 'sentByEarlierTry'; id: string; status?: string; request: SendRequest }
	| { kind: 'keyUsed'; skipReason: string; idempotencyKey: string; earlierSendId?: string };

/** What the claim of a batch's Idempotency Key says: skip it, or send it (after a lookup, when
 * another run may have made it). Throws when nothing can tell. */
export async function underKey(
	context: IExecuteFunctions,
	batch: Batch,
	event: KeyedEvent,
): Promise<Guarded | { earlierAttempt?: EarlierAttempt }> {
	const { batchId } = batch;
	const key = event.idempotency.key;
	const claim = await event.claim();
	if (claim.state === 'used') {
		const earlierSendId = 'earlierSendIds' in claim ? claim.earlierSendIds.get(batchId) : undefined;
		return {
			kind: 'keyUsed',
			skipReason: 'Idempotency Key already used: not sent again',
			idempotencyKey: key,
			...(earlierSendId ? { earlierSendId } : {}),
		};
	}
	if (claim.state === 'storeFailed') {
		// The store cannot say whether this event was sent, nor when: a key may be kept for any time.
		// Only the whole list, read to its end with nothing like it, proves it was not.
		const cause = `n8n's store of Idempotency Keys could not be read (${claim.reason})`;
		return { earlierAttempt: { since: undefined, cause, sinceIsAttempt: false } };
	}
	if (claim.state === 'claimed') return {};
	if (claim.state === 'held') {
		throw cannotTell(
			context,
			batch,
			`another run holds the Idempotency Key "${key}" and is still sending it: it renews its claim in n8n's store, for now until ${new Date(claim.heldUntil ?? 0).toISOString()}`,
			`That run's output tells whether it went out; or check the list of sends (Notification > Get Many) for sends titled "${batch.group.lead.message.title.slice(0, 80)}".`,
		);
	}
	// Claimed by another run that never confirmed it (it died, or its outcome stayed unknown).
	if (claim.acceptedBatches.has(batchId)) {
		return {
			kind: 'keyUsed',
			skipReason: 'Idempotency Key already used: this batch was sent by an earlier run',
			idempotencyKey: key,
		};
	}
	const check = `Check the list of sends (Notification > Get Many) for sends titled "${batch.group.lead.message.title.slice(0, 80)}" to learn who was notified.`;
	// A claim's batches and time go in with one write: n8n stopping before it leaves neither. A
	// claim for other recipients made over 48 hours ago looks the same to this copy.
	if (claim.claimedAt === undefined) {
		const norForWhom = claim.sameLayout ? '' : ', nor for whom';
		throw cannotTell(
			context,
			batch,
			`the Idempotency Key "${key}" was claimed by a run that never confirmed its send, and when cannot be told${norForWhom} (more than 48 hours ago, or n8n stopped while the key was being written)`,
			check,
		);
	}
	if (!claim.sameLayout) {
		throw cannotTell(
			context,
			batch,
			`an earlier run claimed the Idempotency Key "${key}" for other recipients, and may have sent to some of these`,
			check,
		);
	}
	if (claim.sameAttempts && !claim.sameAttempts.has(batchId)) {
		// Only a digest of its request is kept: what it sent cannot be sent again as it was, and a send
		// rebuilt now (another time, after Quiet Hours ended) would not be found as that one.
		throw cannotTell(
			context,
			batch,
			`an earlier run claimed the Idempotency Key "${key}" and may have sent this batch as another request than this run would send now (its text or its scheduled time differs)`,
			check,
		);
	}
	return {
		earlierAttempt: {
			since: claim.claimedAt,
			until: claim.heldUntil,
			cause: 'an earlier run that claimed its Idempotency Key',
			sinceIsAttempt: true,
		},
	};
}

/** A send that must not be made because what came before it cannot be told: the outcome is unknown. */
export function cannotTell(
	context: IExecuteFunctions,
	batch: Batch,
	reason: string,
	check: string,
): NodeOperationError {
	const error = new NodeOperationError(
		context.getNode(),
		`Sending the notification: the outcome is unknown (${reason}), so it was not sent`,
		{
			itemIndex: batch.group.lead.itemIndex,
			description: `${check} If they did not get it, send it again without the earlier run's records (a new execution, or a new Idempotency Key).`,
		},
	);
	return tagged(error, 'unknown');
}
