import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { asNodeError } from '../nodeErrors';
import { failedSendOutcome, tagged } from '../transport';
import type { EarlierAttempt, SendOptions, SendOutcome } from '../transport';
import { EarlierTries } from './earlierTries';
import type { EarlierSend } from './earlierTries';
import { IdempotencyKeys } from './idempotencyKeys';
import type { IdempotencyKey } from './idempotencyKeys';
import { KeyedEvent } from './keyedEvent';

/*
 * Never twice: what keeps the batches of a Send or Schedule run from going out twice, across the
 * tries of one execution (earlierTries.ts) and, for an item with an Idempotency Key, across
 * executions and processes (keyedEvent.ts, which claims the key in n8n's store, idempotencyKeys.ts,
 * in turns of the store, ../store). How and why: docs/reliability.md.
 *
 * One run makes one NeverTwice; the batch path calls `send` for each batch, and the run calls
 * `finish` once every batch has ended. A keyed event's life is driven from here: created with the
 * run, claimed by its first batch, each batch accepted or not, done, and finished with the run.
 */

export { DEFAULT_KEYS_TO_KEEP, MAX_KEY_LENGTH, MAX_KEYS_TO_KEEP } from './idempotencyKeys';
export type { IdempotencyKey, IdempotencyScope } from './idempotencyKeys';
export { NodeRunRecords } from './earlierTries';
export type { LockOutcome } from '../store';

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
}

/** What became of a batch that did not fail. */
export type Guarded =
	| { kind: 'sent'; outcome: SendOutcome; idempotencyKey?: string }
	| { kind: 'sentByEarlierTry'; id: string; status?: string }
	| { kind: 'keyUsed'; skipReason: string; idempotencyKey: string; earlierSendId?: string };

export class NeverTwice {
	private readonly earlierTries: EarlierTries;
	private readonly events = new Map<Group, KeyedEvent>();

	constructor(
		private readonly context: IExecuteFunctions,
		groups: Group[],
	) {
		this.earlierTries = new EarlierTries(context);
		const keys = new IdempotencyKeys(context);
		for (const group of groups) {
			const { idempotency } = group.lead;
			if (!idempotency || group.layout.length === 0) continue;
			this.events.set(group, new KeyedEvent(context, keys, idempotency, group.layout));
		}
	}

	/**
	 * Sends one batch with `sendWith`, unless an earlier try already sent it (`sentByEarlierTry`) or
	 * its Idempotency Key was used (`keyUsed`); where an earlier try or run may have made it, the
	 * transport is told so and looks it up first. Whatever happens, the batch's event and the
	 * execution's records learn the outcome. A failure comes out as a node error saying what a later
	 * run will do about it.
	 */
	async send(
		batch: Batch,
		sendWith: (options: SendOptions) => Promise<SendOutcome>,
	): Promise<Guarded> {
		const event = this.events.get(batch.group);
		try {
			const guarded = await this.sendOnce(batch, event, sendWith);
			await event?.batchDone(batch.batchId, 'accepted');
			return guarded;
		} catch (error) {
			await event?.batchDone(batch.batchId, failedSendOutcome(error));
			throw asNodeError(this.context, error, batch.group.lead.itemIndex);
		}
	}

	private async sendOnce(
		batch: Batch,
		event: KeyedEvent | undefined,
		sendWith: (options: SendOptions) => Promise<SendOutcome>,
	): Promise<Guarded> {
		const { group, batchId } = batch;
		const { itemIndex } = group.lead;
		const earlier = this.earlierTries.get(itemIndex, batchId);
		if (earlier?.id) return { kind: 'sentByEarlierTry', id: earlier.id, status: earlier.status };
		if (earlier?.acceptedSince !== undefined)
			return await this.idOfAccepted(batch, event, earlier, earlier.acceptedSince, sendWith);
		const changed = this.earlierTries
			.batchesOf(itemIndex)
			.filter((earlierBatch) => !group.layout.includes(earlierBatch));
		if (changed.length > 0) {
			throw this.cannotTell(
				batch,
				'the recipients changed since an earlier try of this node, which sent, or may have sent, other batches of them',
				"The earlier try's output or error names what it sent.",
			);
		}
		let earlierAttempt: EarlierAttempt | undefined;
		if (event) {
			const keyed = await this.underKey(batch, event);
			if ('kind' in keyed) return keyed;
			earlierAttempt = keyed.earlierAttempt;
		}
		if (earlier?.unknownSince !== undefined) {
			// This execution's earlier try lost its answer: the lookup starts at whichever attempt came first.
			earlierAttempt = earliest(earlierAttempt, {
				since: earlier.unknownSince,
				until: earlier.unknownUntil,
				cause: 'an earlier try whose answer was lost',
				sinceIsAttempt: true,
			});
		}
		const owner = event ? event.ownerOf(batchId) : this.earlierTries.ownerOf(itemIndex, batchId);
		const startedAt = Date.now();
		try {
			const outcome = await sendWith({
				owner,
				earlierAttempt,
				...(event ? { beforeRequest: this.leaseCheck(batch, event) } : {}),
			});
			this.earlierTries.sent(itemIndex, batchId, owner, outcome.id, outcome.status);
			await event?.accepted(batchId, outcome.id);
			return { kind: 'sent', outcome, ...(event ? { idempotencyKey: event.idempotency.key } : {}) };
		} catch (error) {
			const nodeError = asNodeError(this.context, error, itemIndex);
			const outcome = failedSendOutcome(error);
			if (outcome === 'notSent') {
				this.earlierTries.notSent(itemIndex, batchId);
			} else if (outcome === 'accepted') {
				// It went out: no try or run sends it again. (No id to record: the key's entry holds none.)
				this.earlierTries.acceptedWithoutId(itemIndex, batchId, owner, startedAt, Date.now());
				await event?.accepted(batchId);
				const note = event
					? ` Its Idempotency Key "${event.idempotency.key}" records it as sent.`
					: ' A retry of this execution sends nothing for it, and looks for its id in the list again.';
				nodeError.description = `${nodeError.description ?? ''}${note}`.trim();
			} else {
				// Its requests have all ended: none of them can be registered later than now.
				this.earlierTries.unknown(
					itemIndex,
					batchId,
					owner,
					earlierAttempt?.since ?? startedAt,
					Date.now(),
				);
				const note = event
					? ` Its Idempotency Key "${event.idempotency.key}" stays claimed: a later run looks the send up first.`
					: ' A retry of this execution looks the send up first.';
				nodeError.description = `${nodeError.description ?? ''}${note}`.trim();
			}
			throw nodeError;
		}
	}

	/** A batch an earlier try sent, the API accepting it without a readable id: never sent again. The
	 * list of sends may show it by now, with its id; if not, the item says it was accepted. */
	private async idOfAccepted(
		batch: Batch,
		event: KeyedEvent | undefined,
		earlier: EarlierSend,
		since: number,
		sendWith: (options: SendOptions) => Promise<SendOutcome>,
	): Promise<Guarded> {
		const { itemIndex } = batch.group.lead;
		const { owner } = earlier;
		const outcome = await sendWith({
			owner,
			earlierAttempt: {
				since,
				until: earlier.acceptedUntil,
				cause: 'an earlier try of this node',
				sinceIsAttempt: true,
				accepted: true,
			},
		});
		this.earlierTries.sent(itemIndex, batch.batchId, owner, outcome.id, outcome.status);
		await event?.accepted(batch.batchId, outcome.id);
		return { kind: 'sentByEarlierTry', id: outcome.id, status: outcome.status };
	}

	/** What the claim of a batch's Idempotency Key says: skip it, or send it (after a lookup, when
	 * another run may have made it). Throws when nothing can tell. */
	private async underKey(
		batch: Batch,
		event: KeyedEvent,
	): Promise<Guarded | { earlierAttempt?: EarlierAttempt }> {
		const { batchId } = batch;
		const key = event.idempotency.key;
		const claim = await event.claim();
		if (claim.state === 'used') {
			const earlierSendId =
				'earlierSendIds' in claim ? claim.earlierSendIds.get(batchId) : undefined;
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
			throw this.cannotTell(
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
			throw this.cannotTell(
				batch,
				`the Idempotency Key "${key}" was claimed by a run that never confirmed its send, and when cannot be told${norForWhom} (more than 48 hours ago, or n8n stopped while the key was being written)`,
				check,
			);
		}
		if (!claim.sameLayout) {
			throw this.cannotTell(
				batch,
				`an earlier run claimed the Idempotency Key "${key}" for other recipients, and may have sent to some of these`,
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

	/** Before each request of a keyed batch: its claim's lease must outlast it, or it does not start. */
	private leaseCheck(batch: Batch, event: KeyedEvent): (timeoutMs?: number) => Promise<void> {
		return async (timeoutMs) => {
			const why = await event.whyNoRequestNow(timeoutMs);
			if (why === undefined) return;
			throw new NodeOperationError(
				this.context.getNode(),
				`Sending the notification: not sent, because the Idempotency Key "${event.idempotency.key}" can no longer be held (${why})`,
				{
					itemIndex: batch.group.lead.itemIndex,
					description:
						"Another run may have taken the key over, and sends the event. n8n's store was too slow or unreachable; check n8n's database.",
				},
			);
		};
	}

	/** A send that must not be made because what came before it cannot be told: the outcome is unknown. */
	private cannotTell(batch: Batch, reason: string, check: string): NodeOperationError {
		const error = new NodeOperationError(
			this.context.getNode(),
			`Sending the notification: the outcome is unknown (${reason}), so it was not sent`,
			{
				itemIndex: batch.group.lead.itemIndex,
				description: `${check} If they did not get it, send it again without the earlier run's records (a new execution, or a new Idempotency Key).`,
			},
		);
		return tagged(error, 'unknown');
	}

	/** Ends every event, also those a failure cut short: their keys say what was sent. */
	async finish(): Promise<void> {
		for (const event of this.events.values()) await event.finish();
	}

	/** What n8n's store could not record for a group's event, for its output items. */
	storeNoteOf(group: Group): string | undefined {
		return this.events.get(group)?.storeNote;
	}

	/** The run ended without an error item: nothing runs it again, so its records of earlier tries go.
	 * (With error items n8n may run the node again: Retry On Fail retries a run whose first item is an error.) */
	runSucceeded(): void {
		this.earlierTries.forgetRun();
	}
}

/** Of two earlier attempts, the one the lookup must start from; a reach back makes a find unprovable. */
function earliest(first: EarlierAttempt | undefined, second: EarlierAttempt): EarlierAttempt {
	if (!first) return second;
	// Undefined (the whole list) is the earliest.
	const [from, other] =
		first.since === undefined || (second.since !== undefined && first.since <= second.since)
			? [first, second]
			: [second, first];
	// The later end (no end, when either has none): the window must cover both.
	const until =
		first.until === undefined || second.until === undefined
			? undefined
			: Math.max(first.until, second.until);
	return { ...from, until, sinceIsAttempt: from.sinceIsAttempt && other.sinceIsAttempt };
}
