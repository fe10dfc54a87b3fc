import type { DeduplicationScope, IExecuteFunctions } from 'n8n-workflow';

import { withStoreLock } from './storeLock';
import type { LockOutcome } from './storeLock';

/**
 * Idempotency Keys: an event (one item's send, in one or more batches) whose key was used is not
 * sent again, by any execution of any n8n process.
 *
 * The keys live in n8n's processed-data store (the helpers of n8n's Remove Duplicates node): n8n's
 * own database, shared by every process of a queue-mode setup, per node (scope `node`) or per
 * workflow (scope `workflow`). Every read and write of them happens under the store's lock
 * (storeLock.ts), so the row behaves as a set that loses nothing. The store keeps hashes: a value
 * can only be tested by recording it, so a test of a value that was absent takes it out again.
 *
 * What is stored for an event with key K (at least the newest `keysToKeep` accepted events are kept;
 * beyond them and some room, the oldest are forgotten):
 * - while it is being sent: `claimed K`, `claimedIn K <10-minute period>` and `claimedAt K <minute>`,
 *   `layout K <its batches>`, and `batchAccepted K <batch>` for each batch the API accepted;
 * - once every batch was accepted: only `accepted K`.
 * A claim reads these and answers:
 * - `claimed`: the key was free; it is ours now;
 * - `used`: the event was accepted before: not sent again;
 * - `unconfirmed`: another run claimed it and did not confirm it (it may still be sending, it may
 *   have died, its outcome may have stayed unknown). It comes with when that run claimed it (to the
 *   minute, up to 48 hours back), which batches it had sent, and whether its batches were
 *   these (the audience may have changed since). The caller waits for that run, then looks the
 *   send up in the list of sends from the claim's time, and sends only when it is proven absent.
 * - `storeFailed`: the store could not be read; the caller decides from the list of sends alone.
 */

export type IdempotencyScope = 'node' | 'workflow';

export interface IdempotencyKey {
	key: string;
	scope: IdempotencyScope;
	keysToKeep: number;
}

/** Every claim and confirmation rewrites the keys' whole row under the lock: measured in queue mode
 * (Postgres, 2 workers), 10,000 kept events add about 90 ms of serialized store time per keyed event
 * (at most about 11 events a second per workflow), 100,000 about 750 ms; 5,000 about half of 10,000. */
export const DEFAULT_KEYS_TO_KEEP = 5_000;

/** Room in the row beyond the accepted events kept (as many again, up to this): the entries of events
 * being sent, so that they never push out accepted events before `keysToKeep` of them are kept. */
const ROW_SLACK = 2_000;
export const MINUTE_MS = 60_000;
const MINUTES_PER_PERIOD = 10;
/** How far back an unconfirmed claim's time is looked for: 48 hours of 10-minute periods. */
const PERIODS_LOOKED_AT = 288;

/** Where an event's claim stands: what a caller needs to confirm or release it later. */
export interface EventClaim {
	state: 'claimed' | 'used' | 'unconfirmed';
	/** The start of the minute the event was claimed in, when known. */
	claimedAt?: number;
	/** The batches (their content ids) an unconfirmed claim's run had sent. */
	acceptedBatches: Set<string>;
	/** Whether an unconfirmed claim's run sent the same batches as this one. */
	sameLayout: boolean;
}

export type ClaimOutcome = EventClaim | { state: 'storeFailed'; reason: string };

/** The values stored for one event (each hashed by n8n). JSON keeps their parts apart. */
export function entriesOf(key: string, layout: string[]) {
	const layoutId = layout.join(',');
	return {
		claimed: JSON.stringify(['claimed', key]),
		accepted: JSON.stringify(['accepted', key]),
		layout: JSON.stringify(['layout', key, layoutId]),
		/** The 10-minute period the claim was made in (found by testing 48 hours of them). */
		claimedIn: (period: number) => JSON.stringify(['claimedIn', key, period]),
		/** The minute it was made in (found by testing the 10 minutes of its period). */
		claimedAt: (minute: number) => JSON.stringify(['claimedAt', key, minute]),
		batchAccepted: (batch: string) => JSON.stringify(['batchAccepted', key, batch]),
	};
}

/** The entries of a claim's time, from the minute it was made in. */
function claimTimeEntries(entries: ReturnType<typeof entriesOf>, claimedAt: number | undefined): string[] {
	if (claimedAt === undefined) return [];
	const minute = Math.floor(claimedAt / MINUTE_MS);
	return [entries.claimedAt(minute), entries.claimedIn(Math.floor(minute / MINUTES_PER_PERIOD))];
}

export class IdempotencyKeys {
	constructor(private readonly context: IExecuteFunctions) {}

	/** The lock lives in the row the keys do not use. */
	private locked<T>(idempotency: IdempotencyKey, work: () => Promise<T>): Promise<LockOutcome<T>> {
		const lockScope: DeduplicationScope = idempotency.scope === 'node' ? 'workflow' : 'node';
		return withStoreLock(this.context, lockScope, work);
	}

	/** Records values; the row keeps its newest entries, at least `keysToKeep` accepted events among
	 * them (this call's own values never push any out). */
	private async record(idempotency: IdempotencyKey, values: string[]): Promise<Set<string>> {
		const maxEntries = idempotency.keysToKeep + Math.min(ROW_SLACK, idempotency.keysToKeep) + values.length;
		const result = await this.context.helpers.checkProcessedAndRecord(values, idempotency.scope, { mode: 'entries', maxEntries });
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
		const nowPeriod = Math.floor(nowMinute / MINUTES_PER_PERIOD);
		const outcome = await this.locked(idempotency, async (): Promise<EventClaim> => {
			const asked = [entries.claimed, entries.accepted, entries.claimedIn(nowPeriod), entries.claimedAt(nowMinute), entries.layout];
			const fresh = await this.record(idempotency, asked);
			const addedByThisTest = asked.filter((value) => fresh.has(value));
			if (!fresh.has(entries.accepted)) {
				await this.remove(idempotency, addedByThisTest);
				return { state: 'used', acceptedBatches: new Set(), sameLayout: true };
			}
			if (fresh.has(entries.claimed)) {
				await this.remove(idempotency, [entries.accepted]);
				return { state: 'claimed', claimedAt: nowMinute * MINUTE_MS, acceptedBatches: new Set(), sameLayout: true };
			}
			// Claimed by another run that did not confirm it: which batches it had sent, and when it
			// claimed the key (the 10-minute period, then the minute in it). What a probe adds goes again.
			const periods = Array.from({ length: PERIODS_LOOKED_AT }, (_, back) => nowPeriod - back);
			// The current period and minute were in the first test: present before it, they are the claim's.
			const probes = [...periods.slice(1).map(entries.claimedIn), ...layout.map(entries.batchAccepted)];
			const absent = await this.record(idempotency, probes);
			const added = [...addedByThisTest, ...probes.filter((value) => absent.has(value))];
			const wasThere = (value: string, current: boolean) => (current ? !fresh.has(value) : !absent.has(value));
			const claimedPeriods = periods.filter((period) => wasThere(entries.claimedIn(period), period === nowPeriod));
			let claimedAt: number | undefined;
			if (claimedPeriods.length > 0) {
				const period = Math.min(...claimedPeriods);
				const minutes = Array.from({ length: MINUTES_PER_PERIOD }, (_, index) => period * MINUTES_PER_PERIOD + index);
				const minuteProbes = minutes.filter((minute) => minute !== nowMinute).map(entries.claimedAt);
				const absentMinutes = await this.record(idempotency, minuteProbes);
				added.push(...minuteProbes.filter((value) => absentMinutes.has(value)));
				const claimedMinutes = minutes.filter((minute) =>
					minute === nowMinute ? !fresh.has(entries.claimedAt(minute)) : !absentMinutes.has(entries.claimedAt(minute)),
				);
				// A period whose minute entry was pushed out of the row (Keys to Keep): the period's start.
				claimedAt = (claimedMinutes.length > 0 ? Math.min(...claimedMinutes) : period * MINUTES_PER_PERIOD) * MINUTE_MS;
			}
			await this.remove(idempotency, added);
			return {
				state: 'unconfirmed',
				claimedAt,
				acceptedBatches: new Set(layout.filter((batch) => !absent.has(entries.batchAccepted(batch)))),
				sameLayout: !fresh.has(entries.layout),
			};
		});
		return outcome.ok ? outcome.value : { state: 'storeFailed', reason: outcome.reason };
	}

	/** One batch of a multi-batch event was accepted: a later run does not send it again. */
	async batchAccepted(idempotency: IdempotencyKey, layout: string[], batch: string): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(idempotency, async () => {
			await this.record(idempotency, [entries.batchAccepted(batch)]);
		});
	}

	/** Every batch of the event was accepted: the key is used, and its working entries go. */
	async confirm(idempotency: IdempotencyKey, layout: string[], claim: EventClaim): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(idempotency, async () => {
			// The working entries go first, so that recording the confirmation pushes out no accepted event.
			const batches = layout.length > 1 ? layout.map(entries.batchAccepted) : [];
			await this.remove(idempotency, [entries.claimed, ...claimTimeEntries(entries, claim.claimedAt), entries.layout, ...batches]);
			await this.record(idempotency, [entries.accepted]);
		});
	}

	/** Nothing of the event was sent (the API refused it): the key is free for the next run. */
	async release(idempotency: IdempotencyKey, layout: string[], claim: EventClaim): Promise<LockOutcome<void>> {
		const entries = entriesOf(idempotency.key, layout);
		return await this.locked(idempotency, async () => {
			await this.remove(idempotency, [entries.claimed, ...claimTimeEntries(entries, claim.claimedAt), entries.layout]);
		});
	}
}
