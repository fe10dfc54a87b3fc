import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { asNodeError } from '../nodeErrors';
import { failedSendOutcome, sendNotification } from '../transport';
import type { EarlierAttempt, SendOptions, SendRequest } from '../transport';
import { EarlierTries } from './earlierTries';
import type { EarlierSend } from './earlierTries';
import { IdempotencyKeys } from './idempotencyKeys';
import { cannotTell, underKey } from './claimVerdict';
import type { Batch, Group, Guarded } from './claimVerdict';
import { KeyedEvent } from './keyedEvent';
import { attemptDigest } from './keysRow';

/*
 * Never twice: what keeps the batches of a Send or Schedule run from going out twice, across the
 * tries of one execution (earlierTries.ts) and, for an item with an Idempotency Key, across
 * executions and processes (keyedEvent.ts, which claims the key in n8n's store, idempotencyKeys.ts,
 * in turns of the store, ../store; what a key's claim says of a batch, claimVerdict.ts). How
 * and why: docs/reliability.md.
 *
 * One run makes one NeverTwice; the run calls `send` for each batch (one step: it sends through the
 * transport and answers what became of the batch), and `finish` once every batch has ended. A keyed
 * event's life is driven from here: created with the run, claimed by its first batch, each batch
 * accepted or not, done, and finished with the run.
 *
 * One attempt model: the request a try sends is recorded before it leaves (earlierTries.ts); a later
 * try of the execution looks that request up and, proven absent, sends that request again, never one
 * it recomputed from its own clock and options (Quiet Hours, a Schedule's past time).
 */

export { DEFAULT_KEYS_TO_KEEP, MAX_KEY_LENGTH, MAX_KEYS_TO_KEEP } from './idempotencyKeys';
export type { IdempotencyKey, IdempotencyScope } from './idempotencyKeys';
export { NodeRunRecords } from './earlierTries';
export type { LockOutcome } from '../store';
export type { Batch, Group, Guarded } from './claimVerdict';

export class NeverTwice {
	private readonly earlierTries: EarlierTries;
	private readonly events = new Map<Group, KeyedEvent>();

	/** For the run's `batches`, in order. */
	constructor(
		private readonly context: IExecuteFunctions,
		batches: Batch[],
	) {
		this.earlierTries = new EarlierTries(context);
		let keys: IdempotencyKeys | undefined;
		for (const group of new Set(batches.map((batch) => batch.group))) {
			const { idempotency, itemIndex } = group.lead;
			if (!idempotency || group.layout.length === 0) continue;
			keys ??= new IdempotencyKeys(context);
			// The attempts are the requests each batch goes out with: an earlier try's, as it recorded it.
			const attempts = group.layout.map((batchId) => {
				const request =
					this.earlierTries.get(itemIndex, batchId)?.request ??
					batches.find((batch) => batch.group === group && batch.batchId === batchId)?.request;
				return request ? attemptDigest(request) : '';
			});
			this.events.set(group, new KeyedEvent(context, keys, idempotency, group.layout, attempts));
		}
	}

	/**
	 * Sends one batch's `request`, unless an earlier try already sent it (`sentByEarlierTry`) or
	 * its Idempotency Key was used (`keyUsed`); where an earlier try or run may have made it, the
	 * transport is told so and looks it up first. Whatever happens, the batch's event and the
	 * execution's records learn the outcome. A failure comes out as a node error saying what a later
	 * run will do about it.
	 */
	async send(batch: Batch): Promise<Guarded> {
		const event = this.events.get(batch.group);
		try {
			const guarded = await this.sendOnce(batch, event);
			await event?.batchDone(batch.batchId, 'accepted');
			return guarded;
		} catch (error) {
			await event?.batchDone(batch.batchId, failedSendOutcome(error));
			throw asNodeError(this.context, error, batch.group.lead.itemIndex);
		}
	}

	private async sendOnce(batch: Batch, event: KeyedEvent | undefined): Promise<Guarded> {
		const { group, batchId } = batch;
		const { itemIndex } = group.lead;
		const earlier = this.earlierTries.get(itemIndex, batchId);
		// The attempt an earlier try recorded, exactly; a record of an earlier version has none.
		const request = earlier?.request ?? batch.request;
		if (earlier?.id)
			return { kind: 'sentByEarlierTry', id: earlier.id, status: earlier.status, request };
		if (earlier?.acceptedSince !== undefined)
			return await this.idOfAccepted(batch, event, earlier, earlier.acceptedSince, request);
		const changed = this.earlierTries
			.batchesOf(itemIndex)
			.filter((earlierBatch) => !group.layout.includes(earlierBatch));
		if (changed.length > 0) {
			throw cannotTell(
				this.context,
				batch,
				'the recipients changed since an earlier try of this node, which sent, or may have sent, other batches of them',
				"The earlier try's output or error names what it sent.",
			);
		}
		let earlierAttempt: EarlierAttempt | undefined;
		if (event) {
			const keyed = await underKey(this.context, batch, event);
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
		// Recorded before it leaves: a later try finds this very request (an earlier unknown one keeps
		// its start, which the lookup reads from).
		this.earlierTries.attempting(
			itemIndex,
			batchId,
			owner,
			request,
			earlierAttempt?.since ?? startedAt,
		);
		const options: SendOptions = {
			owner,
			earlierAttempt,
			...(event ? { beforeRequest: this.leaseCheck(batch, event) } : {}),
		};
		try {
			const outcome = await sendNotification(this.context, request, itemIndex, options);
			this.earlierTries.outcome(itemIndex, batchId, outcome);
			await event?.accepted(batchId, outcome.id);
			return {
				kind: 'sent',
				outcome,
				request,
				...(event ? { idempotencyKey: event.idempotency.key } : {}),
			};
		} catch (error) {
			const nodeError = asNodeError(this.context, error, itemIndex);
			const outcome = failedSendOutcome(error);
			if (outcome === 'notSent') {
				this.earlierTries.notSent(itemIndex, batchId);
			} else if (outcome === 'accepted') {
				// It went out: no try or run sends it again. (No id to record: the key's entry holds none.)
				this.earlierTries.outcome(itemIndex, batchId, {
					acceptedSince: startedAt,
					acceptedUntil: Date.now(),
				});
				await event?.accepted(batchId);
				const note = event
					? ` Its Idempotency Key "${event.idempotency.key}" records it as sent.`
					: ' A retry of this execution sends nothing for it, and looks for its id in the list again.';
				nodeError.description = `${nodeError.description ?? ''}${note}`.trim();
			} else {
				// Its requests have all ended: none of them can be registered later than now.
				this.earlierTries.outcome(itemIndex, batchId, {
					unknownSince: earlierAttempt?.since ?? startedAt,
					unknownUntil: Date.now(),
				});
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
		request: SendRequest,
	): Promise<Guarded> {
		const { itemIndex } = batch.group.lead;
		const { owner } = earlier;
		const outcome = await sendNotification(this.context, request, itemIndex, {
			owner,
			earlierAttempt: {
				since,
				until: earlier.acceptedUntil,
				cause: 'an earlier try of this node',
				sinceIsAttempt: true,
				accepted: true,
			},
		});
		this.earlierTries.outcome(itemIndex, batch.batchId, outcome);
		await event?.accepted(batch.batchId, outcome.id);
		return { kind: 'sentByEarlierTry', id: outcome.id, status: outcome.status, request };
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
