import { MINUTE_MS } from '../common/time';
import { timings } from '../common/timings';
import type { Marks } from '../store';

/*
 * The keys' row of a node in n8n's processed-data store, as the keys' protocol (idempotencyKeys.ts)
 * writes it: the values stored for one event (each hashed by n8n), the minutes and periods a claim
 * is marked in, and the room the row keeps beyond the used events.
 */

export const MINUTES_PER_PERIOD = 10;
/** How far back an unconfirmed claim's time is looked for: 48 hours of 10-minute periods. */
export const PERIODS_LOOKED_AT = 288;
/** Room in the row beyond the used events kept (as many again, up to this): the entries of events
 * being sent, so that they never push out used events before `keysToKeep` of them are kept. */
const ROW_SLACK = 2_000;
/** The least room beyond them: what one probe of a claim's time leaves when n8n dies in the middle
 * of it (its periods, the minutes of its first and last period, its marks, a takeover's own mark,
 * and the batches of an audience of 100,000 by 1000). */
const PROBE_ROOM = PERIODS_LOOKED_AT + 2 * MINUTES_PER_PERIOD + 5 + 100;

/** Until when a run whose last marked minute is `minute` may have a request out: it starts none
 * that could outlast its lease (claimLease.ts); one that marked its end has none out after it. */
export function heldUntilOf(minute: number, ended: boolean): number {
	return (minute + 1) * MINUTE_MS + (ended ? 0 : timings().claimLeaseMs);
}

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
		/** The run holding the claim has nothing out any more (it ended without confirming it). */
		ended: JSON.stringify(['ended', key]),
		/** A 10-minute period the claim was held in: the first is its claim's (found by testing 48
		 * hours of them), the last its holder's latest sign of life. */
		claimedIn: (period: number) => JSON.stringify(['claimedIn', key, period]),
		/** A minute it was held in (found by testing the 10 minutes of a period): the first is the
		 * claim's, the last its holder's latest mark. */
		claimedAt: (minute: number) => JSON.stringify(['claimedAt', key, minute]),
		batchAccepted: (batch: string) => JSON.stringify(['batchAccepted', key, batch]),
	};
}

/** The entries of minutes `gone` that no minute of `kept` needs: a period's entry stays while a
 * kept minute is in it (taking it out would move the claim's time later). */
export function marksToTakeOut(
	entries: ReturnType<typeof entriesOf>,
	gone: number[],
	kept: number[],
): string[] {
	const keep = new Set(markEntries(entries, kept));
	return markEntries(entries, gone).filter((entry) => !keep.has(entry));
}

/** The entries marking minutes a claim was held in. */
export function markEntries(entries: ReturnType<typeof entriesOf>, minutes: number[]): string[] {
	return [
		...new Set(
			minutes.flatMap((minute) => [
				entries.claimedAt(minute),
				entries.claimedIn(Math.floor(minute / MINUTES_PER_PERIOD)),
			]),
		),
	];
}

/** The node's keys' row, as one event's work in a turn writes it. */
export class KeysRow {
	constructor(private readonly marks: Marks) {}

	/** Records values; the row keeps its newest entries, at least `keysToKeep` used events among them
	 * (this call's own values, and the `alreadyAdded` of the same probe, never push any out). */
	async record(
		idempotency: { keysToKeep: number },
		values: string[],
		alreadyAdded = 0,
	): Promise<Set<string>> {
		const room = Math.max(Math.min(ROW_SLACK, idempotency.keysToKeep), PROBE_ROOM);
		return await this.marks.add(values, idempotency.keysToKeep + room + alreadyAdded);
	}

	async remove(values: string[]): Promise<void> {
		await this.marks.remove(values);
	}
}
