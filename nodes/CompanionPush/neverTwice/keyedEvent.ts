import type { IExecuteFunctions } from 'n8n-workflow';

import { timings, waitFor } from '../common/timings';
import type { ClaimOutcome, IdempotencyKey, IdempotencyKeys } from './idempotencyKeys';
import type { LockOutcome } from '../store';
import { ClaimLease } from './claimLease';

/** What became of one batch of an event. */
export type BatchOutcome = 'accepted' | 'notSent' | 'unknown';

/** How often a claim another run holds is read again while that run may still be sending. */
const RECHECK_MS = 2_000;
/** Outcomes of keyed events this process keeps for later copies. */
const KEY_OUTCOMES_KEPT = 1_000;
/** Tries of a confirm or release whose store write failed. */
const STORE_WRITE_TRIES = 3;

/** What became of an event sent under an Idempotency Key in this process: every batch accepted (with
 * the send id of each batch's content id), or not; nothing sent at all, or not. */
interface KeyedSendOutcome {
	accepted: boolean;
	notSent: boolean;
	ids: Record<string, string>;
}

/** Process memory: the Idempotency Keys this process sent under lately (bounded, oldest forgotten
 * first), with the outcome or its promise: a copy of the key waits for that send's outcome instead
 * of guessing, and names its send. Across processes the keys' claim protocol decides
 * (idempotencyKeys.ts); a restart empties it. */
let keysInFlight = new Map<string, Promise<KeyedSendOutcome>>();

/** Tests: forgets the keys sent under. */
export function resetKeysInFlight(): void {
	keysInFlight = new Map();
}

export type EventClaim = ClaimOutcome | { state: 'used'; earlierSendIds: Map<string, string> };

/**
 * One event named by an Idempotency Key: the batches of one item (or of all items, in "One Send for
 * All Items" mode) sent under one key.
 * - The key is claimed once, however many batches the event has (idempotencyKeys.ts).
 * - A copy of the key in flight in this process (the same event delivered twice at once) is waited
 *   for, and its outcome decides: accepted, this copy is skipped with its send ids.
 * - A claim another run holds and still renews (its lease, claimLease.ts) is read again every few
 *   seconds: that run may still be sending (then it confirms, and this copy is skipped; releases the
 *   key, and this copy claims it; or ends or dies, and this copy takes the claim over). A copy waits
 *   at most `heldKeyWaitMs`, then sends nothing: the outcome is unknown. A claim this execution's
 *   own earlier try left is marked ended, so it is taken over at once.
 * - While it holds the claim, it renews its lease, and starts no request that could outlast it.
 * - When every batch is done, the key is confirmed (all accepted), released (nothing sent), or left
 *   claimed with the batches that were accepted and marked as ended, for the next run to finish.
 */
export class KeyedEvent {
	private claiming?: Promise<EventClaim>;
	/** Set while this run holds the event's claim. */
	private lease?: ClaimLease;
	private readonly outcomes = new Map<string, BatchOutcome>();
	private readonly sendIds = new Map<string, string>();
	private finished = false;
	private storeNotes: string[] = [];
	/** Set once this event is registered as in flight in this process: tells copies waiting for it. */
	private announce?: (outcome: KeyedSendOutcome) => void;
	/** This event's entry in keysInFlight. */
	private readonly inProcessKey: string;

	constructor(
		context: IExecuteFunctions,
		private readonly keys: IdempotencyKeys,
		readonly idempotency: IdempotencyKey,
		private readonly layout: string[],
		/** The attemptDigest of each batch's request, in layout order: recorded with the claim. */
		private readonly attempts: string[],
	) {
		// The keys live in the node's own row (the only scope there is).
		this.inProcessKey = JSON.stringify([
			context.getWorkflow().id ?? '',
			`n:${context.getNode().id}`,
			idempotency.key,
		]);
	}

	/** The owner of one batch's send, its identity for lookups: every copy of the event shares it. */
	ownerOf(batchId: string): string {
		return `key:${this.inProcessKey}:${batchId}`;
	}

	claim(): Promise<EventClaim> {
		this.claiming ??= this.claimOnce();
		return this.claiming;
	}

	private async claimOnce(): Promise<EventClaim> {
		// A copy of this event in this process, under way or done: its outcome decides, or, when it sent
		// nothing for sure, the store does. (Waiting for one copy may reveal another that started meanwhile.)
		for (
			let other = keysInFlight.get(this.inProcessKey), seen = new Set<unknown>();
			other && !seen.has(other);
			other = keysInFlight.get(this.inProcessKey)
		) {
			seen.add(other);
			const outcome = await other;
			if (outcome.accepted)
				return { state: 'used', earlierSendIds: new Map(Object.entries(outcome.ids)) };
		}
		keysInFlight.delete(this.inProcessKey);
		keysInFlight.set(this.inProcessKey, new Promise((resolve) => (this.announce = resolve)));
		const claimOnce = async () =>
			await this.keys.claim(this.idempotency, this.layout, this.attempts);
		let claim = await claimOnce();
		// Held: its holder's lease says it may still be sending. Read again until it is confirmed,
		// released, ended or lapsed, for as long as this run may wait. (A claim this execution's own
		// earlier try left was marked ended when that try finished: taken over at once.)
		const giveUpAt = Date.now() + timings().heldKeyWaitMs;
		while (claim.state === 'held' && Date.now() < giveUpAt) {
			const heldFor = (claim.heldUntil ?? 0) - Date.now();
			await waitFor(Math.max(0, Math.min(RECHECK_MS, giveUpAt - Date.now(), heldFor)));
			claim = await claimOnce();
		}
		if (
			claim.state === 'claimed' ||
			(claim.state === 'unconfirmed' && claim.claimedAt !== undefined)
		)
			this.lease = new ClaimLease(this.keys, this.idempotency, this.layout, claim);
		if (claim.state === 'storeFailed') {
			// Never silently: the item says why the key could not decide.
			this.storeNotes.push(
				`The Idempotency Key "${this.idempotency.key}" could not be checked in n8n's store (${claim.reason}): the list of sends decided instead.`,
			);
		}
		return claim;
	}

	/** Why a request of this event must not start now (its claim's lease could run out before the
	 * request ends); undefined when it may. */
	async whyNoRequestNow(timeoutMs?: number): Promise<string | undefined> {
		return await this.lease?.whyNotNow(timeoutMs);
	}

	/** A batch was accepted: in an event of several batches, the store remembers it at once, so a
	 * run that dies before the others are sent is continued without sending it again. */
	async accepted(batchId: string, sendId?: string): Promise<void> {
		// Without an id (an accepted answer whose body could not be read) copies get none to name.
		if (sendId !== undefined) this.sendIds.set(batchId, sendId);
		if (this.layout.length > 1)
			this.noteStoreOutcome(
				await this.keys.batchAccepted(this.idempotency, this.layout, batchId),
				'marked as used',
			);
	}

	/** A batch is done. The last one finishes the event. */
	async batchDone(batchId: string, outcome: BatchOutcome): Promise<void> {
		this.outcomes.set(batchId, outcome);
		if (this.outcomes.size === this.layout.length) await this.finish();
	}

	/** What the store could not record for this event, for its output items. */
	get storeNote(): string | undefined {
		return this.storeNotes.length > 0 ? this.storeNotes.join(' ') : undefined;
	}

	/** Ends the event: batches never started count as not sent. */
	async finish(): Promise<void> {
		if (this.finished) return;
		this.finished = true;
		const outcomes = this.layout.map((batchId) => this.outcomes.get(batchId) ?? 'notSent');
		const allAccepted = outcomes.every((outcome) => outcome === 'accepted');
		const noneSent = outcomes.every((outcome) => outcome === 'notSent');
		const claim = this.claiming ? await this.claiming : undefined;
		await this.lease?.end();
		if (claim && (claim.state === 'claimed' || claim.state === 'unconfirmed')) {
			const minutes = this.lease?.minutes ?? claim.markedMinutes;
			// A lease lost: another run may hold the claim now; freeing it or marking it ended would mislead it.
			const stillHeld = this.lease?.kept ?? true;
			if (allAccepted) {
				this.noteStoreOutcome(
					await this.withTries(() =>
						this.keys.confirm(
							this.idempotency,
							this.layout,
							minutes,
							claim.state === 'claimed' ? 'madeHere' : 'takenOver',
							this.attempts,
						),
					),
					'marked as used',
				);
			} else if (
				stillHeld &&
				noneSent &&
				// A claim taken over is this run's only with its lease.
				(claim.state === 'claimed' || (this.lease !== undefined && this.allProvenNotSent()))
			) {
				this.noteStoreOutcome(
					await this.withTries(() =>
						this.keys.release(this.idempotency, this.layout, minutes, this.attempts),
					),
					'freed',
				);
			} else if (this.lease && stillHeld) {
				// Left claimed: a later run need not wait out the lease to take it over.
				this.noteStoreOutcome(
					await this.withTries(() => this.keys.ended(this.idempotency, this.layout)),
					'marked as ended',
				);
			}
		}
		// Copies in this process learn the outcome (the store says the same, when it could be written);
		// the outcome stays for later copies (with the send ids), the oldest forgotten first.
		this.announce?.({
			accepted: allAccepted,
			notSent: noneSent,
			ids: Object.fromEntries(this.sendIds),
		});
		const kept = keysInFlight;
		if (kept.size > KEY_OUTCOMES_KEPT) kept.delete(kept.keys().next().value!);
	}

	/**
	 * Whether every batch of a claim taken over was itself found not sent: each was looked up for the
	 * earlier run's attempt and proven absent before its own request, which the API then refused (or
	 * which never left). A batch never started proves nothing of the earlier run.
	 */
	private allProvenNotSent(): boolean {
		return this.layout.every((batchId) => this.outcomes.get(batchId) === 'notSent');
	}

	private async withTries(write: () => Promise<LockOutcome<void>>): Promise<LockOutcome<void>> {
		let outcome = await write();
		for (let tries = 1; !outcome.ok && tries < STORE_WRITE_TRIES; tries++) {
			await waitFor(1_000 * tries);
			outcome = await write();
		}
		return outcome;
	}

	private noteStoreOutcome(
		outcome: LockOutcome<void>,
		meant: 'marked as used' | 'freed' | 'marked as ended',
	): void {
		if (outcome.ok) return;
		const consequence = {
			'marked as used':
				'the send was made; a later copy of this event is looked up in the list of sends before anything is sent.',
			freed:
				'nothing was sent; a later copy of this event looks the send up in the list of sends first.',
			'marked as ended':
				'a later copy of this event waits for its claim to lapse (about two minutes), then looks the send up in the list of sends first.',
		}[meant];
		this.storeNotes.push(
			`The Idempotency Key "${this.idempotency.key}" could not be ${meant} in n8n's store (${outcome.reason}): ${consequence}`,
		);
	}
}
