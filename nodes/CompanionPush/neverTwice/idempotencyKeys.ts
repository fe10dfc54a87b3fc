import type { IExecuteFunctions } from 'n8n-workflow';

import { MINUTE_MS } from '../common/time';
import { inMarksTurn } from '../store';
import type { LockOutcome } from '../store';
import { attemptEntries, entriesOf, KeysRow, markEntries, marksToTakeOut } from './keysRow';

/**
 * Idempotency Keys in n8n's processed-data store: an event whose key was used is not sent again, by
 * any execution of any n8n process. The protocol, write by write, and why each write leaves a state
 * that cannot pass for a later one: docs/reliability.md, "The keys' protocol". What this file relies
 * on: every read and write happens under the store's lock (../store/lock.ts), in this process's turn
 * for the row (../store/turns.ts: the writes of events waiting together go in together, each event's
 * in its order); a used event is `claimed` without `pending`; the claim's batches, time and attempts
 * (a digest of each batch's request, keysRow.ts) are written by the claim alone; a probe is marked by
 * `probing` until it is taken out; the run holding a claim marks the minutes it lives in (its
 * lease, claimLease.ts) and `ended` once it has nothing out, so another run decides from these
 * whether it may still be sending, and takes a claim over only in the same turn that saw it lapse.
 */

/** Only the node's own row: the workflow's is the lock's (../store/lock.ts). */
export type IdempotencyScope = 'node';

export interface IdempotencyKey {
	key: string;
	scope: IdempotencyScope;
	keysToKeep: number;
}

/** Every write rewrites the keys' whole row under the lock (the events of one turn share them,
 * ../store/turns.ts), so the time of a keyed event grows with the events kept (docs/scaling-out.md). */
export const DEFAULT_KEYS_TO_KEEP = 5_000;
/** Beyond this, every keyed send would rewrite a row of megabytes, three times. */
export const MAX_KEYS_TO_KEEP = 100_000;
/** A key names an event (an order id and a status): longer ones would be echoed in every output item. */
export const MAX_KEY_LENGTH = 1_000;

/**
 * Where an event's claim stands: what a caller needs to confirm or release it later.
 * - `claimed`: it was free; this run holds it now.
 * - `used`: every batch was accepted before.
 * - `held`: another run holds it and may still be sending (its lease runs until `heldUntil`).
 * - `unconfirmed`: another run claimed it and is gone (it ended without confirming, or its lease
 *   ran out); when its time is known, this run took it over in the same turn and holds it now.
 */
export interface StoreClaim {
	state: 'claimed' | 'used' | 'unconfirmed' | 'held';
	/** The start of the minute the event was claimed in, when known. */
	claimedAt?: number;
	/** Until when the run that held it may have had a request out (n8n's clock): the end of its last
	 * marked minute, plus its lease unless it marked that it ended. */
	heldUntil?: number;
	/** The minutes marked for this claim that this run knows of (taken out when it is confirmed or
	 * released); the newest is this run's own when it holds the claim. */
	markedMinutes: number[];
	/** The batches (their content ids) an unconfirmed claim's run had sent. */
	acceptedBatches: Set<string>;
	/** Whether an unconfirmed claim's run sent the same batches as this one. */
	sameLayout: boolean;
	/** The batches whose attempt the claim recorded is the one this run would send (attemptDigest):
	 * every batch, for a claim this run made; absent when this run gave no attempts to compare. */
	sameAttempts?: Set<string>;
}

export type ClaimOutcome = StoreClaim | { state: 'storeFailed'; reason: string };

export class IdempotencyKeys {
	constructor(private readonly context: IExecuteFunctions) {}

	/** A work on the node's keys' row, under the lock of the workflow's keys (every node's, shared),
	 * in this process's next turn for the row. */
	private locked<T>(work: (row: KeysRow) => Promise<T>): Promise<LockOutcome<T>> {
		return inMarksTurn(this.context, async (marks) => await work(new KeysRow(marks)));
	}

	/** Claims the event of `layout` (its batches' content ids, in order), recording `attempts` (the
	 * attemptDigest of each batch's request, in order) with it. See the top of this file. */
	async claim(
		idempotency: IdempotencyKey,
		layout: string[],
		attempts: string[] = [],
	): Promise<ClaimOutcome> {
		const entries = entriesOf(idempotency.key, layout);
		const outcome = await this.locked(async (row): Promise<StoreClaim> => {
			const nowMinute = Math.floor(Date.now() / MINUTE_MS);
			// `claimed` first: when the row is full, the oldest entries go first, and an event that lost
			// `claimed` but kept `pending` would look sent.
			const fresh = await row.record(idempotency, [entries.claimed, entries.pending]);
			if (fresh.has(entries.claimed)) {
				// Free: ours. Its batches and time go in only now (a test of another run's claim must not
				// write them: they would pass for that claim's).
				await row.record(idempotency, [
					entries.layout,
					...attemptEntries(entries, layout, attempts),
					...markEntries(entries, [nowMinute]),
				]);
				return {
					state: 'claimed',
					claimedAt: nowMinute * MINUTE_MS,
					markedMinutes: [nowMinute],
					acceptedBatches: new Set(),
					sameLayout: true,
					sameAttempts: new Set(layout),
				};
			}
			if (fresh.has(entries.pending)) {
				// Claimed and confirmed: used. What this test added goes again.
				await row.remove([entries.pending]);
				return {
					state: 'used',
					markedMinutes: [],
					acceptedBatches: new Set(),
					sameLayout: true,
					sameAttempts: new Set(),
				};
			}
			const probe = await row.probeClaim(idempotency, entries, layout, attempts);
			const { added, ended, ...found } = probe;
			// Gone: it marked its end (it has nothing out), or its lease ran out.
			const gone = ended || (found.heldUntil !== undefined && found.heldUntil <= Date.now());
			if (found.claimedAt === undefined || !gone) {
				// `probing K` goes last, with everything else this probe added, in one write.
				await row.remove(added);
				return { ...found, state: found.claimedAt === undefined ? 'unconfirmed' : 'held' };
			}
			// Taken over in this turn, so no other run can take it too. This run's mark first, then
			// the probe's entries and the previous holder's end go in one write (cut short in between,
			// `probing K` stays, and later probes trust nothing).
			const takenAt = Math.floor(Date.now() / MINUTE_MS);
			const mark = markEntries(entries, [takenAt]);
			await row.record(idempotency, mark, added.length);
			// The probe may have tested this very mark: it stays.
			const probed = added.filter((value) => !mark.includes(value));
			await row.remove([...probed, ...(ended ? [entries.ended] : [])]);
			return {
				...found,
				state: 'unconfirmed',
				markedMinutes: [...found.markedMinutes, takenAt],
			};
		});
		return outcome.ok ? outcome.value : { state: 'storeFailed', reason: outcome.reason };
	}

	/** The holder of a claim marks the minute it lives in, and takes out its previous mark (`kept`:
	 * the marks that stay): its lease runs on (claimLease.ts). The minute marked. */
	async renew(
		idempotency: IdempotencyKey,
		layout: string[],
		previous: number | undefined,
		kept: number[],
	): Promise<LockOutcome<number>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(async (row) => {
			const minute = Math.floor(Date.now() / MINUTE_MS);
			await row.record(idempotency, markEntries(entries, [minute]));
			// Cut short here, both marks stay: the later one still tells the latest sign of life.
			if (previous !== undefined && previous !== minute)
				await row.remove(marksToTakeOut(entries, [previous], [...kept, minute]));
			return minute;
		});
	}

	/** The holder ended without confirming (an outcome unknown, a batch refused): it has nothing out
	 * any more, so another run need not wait out its lease. Its last mark goes in with the end. */
	async ended(idempotency: IdempotencyKey, layout: string[]): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(async (row) => {
			const minute = Math.floor(Date.now() / MINUTE_MS);
			await row.record(idempotency, [...markEntries(entries, [minute]), entries.ended]);
		});
	}

	/** One batch of a multi-batch event was accepted: a later run does not send it again. */
	async batchAccepted(
		idempotency: IdempotencyKey,
		layout: string[],
		batch: string,
	): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(async (row) => {
			await row.record(idempotency, [entries.batchAccepted(batch)]);
		});
	}

	/** Every batch of the event was accepted: the key is used. One write takes out its working
	 * entries (n8n dying before it leaves the event unconfirmed, looked up by the next run). `ended`
	 * only from a claim taken over: a run that found the key free is its claim's only holder, and marks
	 * the end only when it does not confirm. (n8n scans the row for every value taken out, there or not.) */
	async confirm(
		idempotency: IdempotencyKey,
		layout: string[],
		markedMinutes: number[],
		claim: 'madeHere' | 'takenOver',
		attempts: string[] = [],
	): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(async (row) => {
			const batches = layout.length > 1 ? layout.map(entries.batchAccepted) : [];
			await row.remove([
				entries.pending,
				...markEntries(entries, markedMinutes),
				entries.layout,
				...attemptEntries(entries, layout, attempts),
				...(claim === 'takenOver' ? [entries.ended] : []),
				...batches,
			]);
		});
	}

	/** Nothing of the event was sent (the API refused it): the key is free for the next run. */
	async release(
		idempotency: IdempotencyKey,
		layout: string[],
		markedMinutes: number[],
		attempts: string[] = [],
	): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(async (row) => {
			// `claimed` in the same write as the rest: nothing is left that looks used.
			await row.remove([
				entries.claimed,
				entries.pending,
				...markEntries(entries, markedMinutes),
				entries.layout,
				...attemptEntries(entries, layout, attempts),
				entries.ended,
			]);
		});
	}
}
