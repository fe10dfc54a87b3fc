import type { IExecuteFunctions } from 'n8n-workflow';

import { MINUTE_MS } from '../helpers/time';
import { withStoreLock } from './storeLock';
import type { LockOutcome } from './storeLock';

/**
 * Idempotency Keys in n8n's processed-data store: an event whose key was used is not sent again, by
 * any execution of any n8n process. The protocol, write by write, and why each write leaves a state
 * that cannot pass for a later one: docs/reliability.md, "The keys' protocol". What this file relies
 * on: every read and write happens under the store's lock (storeLock.ts); a used event is `claimed`
 * without `pending`; the claim's batches and time are written by the claim alone; a probe is marked
 * by `probing` until it is taken out.
 */

/** Only the node's own row: the workflow's is the lock's (storeLock.ts). */
export type IdempotencyScope = 'node';

export interface IdempotencyKey {
	key: string;
	scope: IdempotencyScope;
	keysToKeep: number;
}

/** Every claim and confirmation rewrites the keys' whole row under the lock, so the time of a keyed
 * event grows with the events kept (docs/scaling-out.md has the figures). */
export const DEFAULT_KEYS_TO_KEEP = 5_000;
/** Beyond this, every keyed send would rewrite a row of megabytes, three times. */
export const MAX_KEYS_TO_KEEP = 100_000;
/** A key names an event (an order id and a status): longer ones would be echoed in every output item. */
export const MAX_KEY_LENGTH = 1_000;

const MINUTES_PER_PERIOD = 10;
/** How far back an unconfirmed claim's time is looked for: 48 hours of 10-minute periods. */
const PERIODS_LOOKED_AT = 288;
/** Room in the row beyond the used events kept (as many again, up to this): the entries of events
 * being sent, so that they never push out used events before `keysToKeep` of them are kept. */
const ROW_SLACK = 2_000;
/** The least room beyond them: what one probe of a claim's time leaves when n8n dies in the middle
 * of it (its periods and minutes, its mark and the batches of an audience of 100,000 by 1000). */
const PROBE_ROOM = PERIODS_LOOKED_AT + MINUTES_PER_PERIOD + 1 + 100;

/** Where an event's claim stands: what a caller needs to confirm or release it later. */
export interface StoreClaim {
	state: 'claimed' | 'used' | 'unconfirmed';
	/** The start of the minute the event was claimed in, when known. */
	claimedAt?: number;
	/** The batches (their content ids) an unconfirmed claim's run had sent. */
	acceptedBatches: Set<string>;
	/** Whether an unconfirmed claim's run sent the same batches as this one. */
	sameLayout: boolean;
}

export type ClaimOutcome = StoreClaim | { state: 'storeFailed'; reason: string };

/** The values stored for one event (each hashed by n8n). JSON keeps their parts apart. */
export function entriesOf(key: string, layout: string[]) {
	const layoutId = layout.join(',');
	return {
		claimed: JSON.stringify(['claimed', key]),
		/** Present from the claim until the confirmation: `claimed` without it is a used event. */
		pending: JSON.stringify(['pending', key]),
		layout: JSON.stringify(['layout', key, layoutId]),
		/** Present while a claim's time and batches are being probed: what a probe recorded is in the row. */
		probing: JSON.stringify(['probing', key]),
		/** The 10-minute period the claim was made in (found by testing 48 hours of them). */
		claimedIn: (period: number) => JSON.stringify(['claimedIn', key, period]),
		/** The minute it was made in (found by testing the 10 minutes of its period). */
		claimedAt: (minute: number) => JSON.stringify(['claimedAt', key, minute]),
		batchAccepted: (batch: string) => JSON.stringify(['batchAccepted', key, batch]),
	};
}

/** The entries of a claim's time, from the minute it was made in. */
function claimTimeEntries(
	entries: ReturnType<typeof entriesOf>,
	claimedAt: number | undefined,
): string[] {
	if (claimedAt === undefined) return [];
	const minute = Math.floor(claimedAt / MINUTE_MS);
	return [entries.claimedAt(minute), entries.claimedIn(Math.floor(minute / MINUTES_PER_PERIOD))];
}

export class IdempotencyKeys {
	constructor(private readonly context: IExecuteFunctions) {}

	/** The lock of the workflow's keys: every node's, shared. */
	private locked<T>(work: () => Promise<T>): Promise<LockOutcome<T>> {
		return withStoreLock(this.context, work);
	}

	/** Records values; the row keeps its newest entries, at least `keysToKeep` used events among them
	 * (this call's own values, and the `alreadyAdded` of the same probe, never push any out). */
	private async record(
		idempotency: IdempotencyKey,
		values: string[],
		alreadyAdded = 0,
	): Promise<Set<string>> {
		const room = Math.max(Math.min(ROW_SLACK, idempotency.keysToKeep), PROBE_ROOM);
		const maxEntries = idempotency.keysToKeep + room + alreadyAdded + values.length;
		const result = await this.context.helpers.checkProcessedAndRecord(values, idempotency.scope, {
			mode: 'entries',
			maxEntries,
		});
		return new Set(result.new.map(String));
	}

	private async remove(idempotency: IdempotencyKey, values: string[]): Promise<void> {
		if (values.length === 0) return;
		await this.context.helpers.removeProcessed(values, idempotency.scope, { mode: 'entries' });
	}

	/** Claims the event of `layout` (its batches' content ids, in order). See the top of this file. */
	async claim(idempotency: IdempotencyKey, layout: string[]): Promise<ClaimOutcome> {
		const entries = entriesOf(idempotency.key, layout);
		const nowMinute = Math.floor(Date.now() / MINUTE_MS);
		const outcome = await this.locked(async (): Promise<StoreClaim> => {
			// `claimed` first: when the row is full, the oldest entries go first, and an event that lost
			// `claimed` but kept `pending` would look sent.
			const fresh = await this.record(idempotency, [entries.claimed, entries.pending]);
			if (fresh.has(entries.claimed)) {
				// Free: ours. Its batches and time go in only now (a test of another run's claim must not
				// write them: they would pass for that claim's).
				await this.record(idempotency, [
					entries.layout,
					entries.claimedAt(nowMinute),
					entries.claimedIn(Math.floor(nowMinute / MINUTES_PER_PERIOD)),
				]);
				return {
					state: 'claimed',
					claimedAt: nowMinute * MINUTE_MS,
					acceptedBatches: new Set(),
					sameLayout: true,
				};
			}
			if (fresh.has(entries.pending)) {
				// Claimed and confirmed: used. What this test added goes again.
				await this.remove(idempotency, [entries.pending]);
				return { state: 'used', acceptedBatches: new Set(), sameLayout: true };
			}
			return { state: 'unconfirmed', ...(await this.probeClaim(idempotency, entries, layout)) };
		});
		return outcome.ok ? outcome.value : { state: 'storeFailed', reason: outcome.reason };
	}

	/**
	 * When another run claimed the event (the 10-minute period, then the minute in it), whether for
	 * these batches, and which of them it had sent. The probes are recorded with `probing K` and taken out with it: a probe
	 * cut short by n8n's end leaves `probing K`, and every later probe then trusts nothing it finds
	 * (no claim time, no batch sent: the caller reports the outcome as unknown).
	 */
	private async probeClaim(
		idempotency: IdempotencyKey,
		entries: ReturnType<typeof entriesOf>,
		layout: string[],
	): Promise<{ claimedAt?: number; acceptedBatches: Set<string>; sameLayout: boolean }> {
		const nowPeriod = Math.floor(Date.now() / MINUTE_MS / MINUTES_PER_PERIOD);
		const periods = Array.from({ length: PERIODS_LOOKED_AT }, (_, back) => nowPeriod - back);
		// The mark last: when the row is full, the oldest entries go first, and the mark must outlive the probes.
		const probes = [
			...periods.map(entries.claimedIn),
			...layout.map(entries.batchAccepted),
			entries.layout,
			entries.probing,
		];
		const absent = await this.record(idempotency, probes);
		const added = probes.filter((value) => absent.has(value));
		const cutShort = !absent.has(entries.probing);
		let claimedAt: number | undefined;
		const claimedPeriods = periods.filter((period) => !absent.has(entries.claimedIn(period)));
		if (!cutShort && claimedPeriods.length > 0) {
			const period = Math.min(...claimedPeriods);
			const minuteProbes = Array.from({ length: MINUTES_PER_PERIOD }, (_, index) =>
				entries.claimedAt(period * MINUTES_PER_PERIOD + index),
			);
			const absentMinutes = await this.record(idempotency, minuteProbes, added.length);
			added.push(...minuteProbes.filter((value) => absentMinutes.has(value)));
			const claimedMinutes = minuteProbes.flatMap((value, index) =>
				absentMinutes.has(value) ? [] : [period * MINUTES_PER_PERIOD + index],
			);
			// A period whose minute entry was pushed out of the row (Keys to Keep): the period's start.
			claimedAt =
				(claimedMinutes.length > 0 ? Math.min(...claimedMinutes) : period * MINUTES_PER_PERIOD) *
				MINUTE_MS;
		}
		// `probing K` goes last, with everything else this probe added, in one write.
		await this.remove(idempotency, added);
		const acceptedBatches = cutShort
			? new Set<string>()
			: new Set(layout.filter((batch) => !absent.has(entries.batchAccepted(batch))));
		return { claimedAt, acceptedBatches, sameLayout: !cutShort && !absent.has(entries.layout) };
	}

	/** One batch of a multi-batch event was accepted: a later run does not send it again. */
	async batchAccepted(
		idempotency: IdempotencyKey,
		layout: string[],
		batch: string,
	): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(async () => {
			await this.record(idempotency, [entries.batchAccepted(batch)]);
		});
	}

	/** Every batch of the event was accepted: the key is used. One write takes out its working
	 * entries (n8n dying before it leaves the event unconfirmed, looked up by the next run). */
	async confirm(
		idempotency: IdempotencyKey,
		layout: string[],
		claim: StoreClaim,
	): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(async () => {
			const batches = layout.length > 1 ? layout.map(entries.batchAccepted) : [];
			await this.remove(idempotency, [
				entries.pending,
				...claimTimeEntries(entries, claim.claimedAt),
				entries.layout,
				...batches,
			]);
		});
	}

	/** Nothing of the event was sent (the API refused it): the key is free for the next run. */
	async release(
		idempotency: IdempotencyKey,
		layout: string[],
		claim: StoreClaim,
	): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(async () => {
			// `claimed` in the same write as the rest: nothing is left that looks used.
			await this.remove(idempotency, [
				entries.claimed,
				entries.pending,
				...claimTimeEntries(entries, claim.claimedAt),
				entries.layout,
			]);
		});
	}
}
