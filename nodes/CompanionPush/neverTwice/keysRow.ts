import { createHash } from 'crypto';

import { MINUTE_MS } from '../common/time';
import { timings } from '../common/timings';
import type { Marks } from '../store';
import type { SendRequest } from '../transport';

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
 * and the batches of an audience of 100,000 by 1000 with their attempts). */
const PROBE_ROOM = PERIODS_LOOKED_AT + 2 * MINUTES_PER_PERIOD + 6 + 2 * 100;

/**
 * A digest of the request a batch goes out with, every field as sent (`scheduled_at` too): what the
 * claim records of its attempt. A request of 1000 recipients does not fit a store entry, and the
 * row holds only hashes; a later run of the event tests the digest of the request it would send,
 * and sends nothing it cannot prove is the attempt recorded.
 */
export function attemptDigest(request: SendRequest): string {
	const { title, body, target_user_ids, image_url, deeplink, announcement_id, scheduled_at } =
		request;
	const fields = [title, body, target_user_ids, image_url, deeplink, announcement_id, scheduled_at];
	return createHash('sha256')
		.update(JSON.stringify(fields.map((field) => field ?? null)))
		.digest('base64url');
}

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
		/** The attempt of a batch (attemptDigest of its request), recorded with the claim. */
		attempt: (batch: string, digest: string) => JSON.stringify(['attempt', key, batch, digest]),
		/** The claim recorded its batches' attempts (claims of earlier versions did not). */
		attemptsRecorded: JSON.stringify(['attemptsRecorded', key]),
	};
}

/** The entries of an event's attempts, as its claim records them: `attempts` holds each batch's
 * attemptDigest, in layout order (none: the caller records none). */
export function attemptEntries(
	entries: ReturnType<typeof entriesOf>,
	layout: string[],
	attempts: string[],
): string[] {
	if (attempts.length !== layout.length || layout.length === 0) return [];
	const ofBatches = layout.map((batch, index) => entries.attempt(batch, attempts[index]));
	return [...ofBatches, entries.attemptsRecorded];
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

	/**
	 * When another run claimed the event (the 10-minute period, then the minute in it) and when it was
	 * last seen alive (the last period, then the minute in it), whether it marked its end, whether for
	 * these batches, which of them it had sent, and which it recorded as the attempts (`attempts`) this
	 * run would send (none recorded: a claim of an earlier version, left unchecked). The probes are
	 * recorded with `probing K` and taken out with it (by the caller, with `added`): a probe cut short
	 * by n8n's end leaves `probing K`, and every later probe then trusts nothing it finds (no claim
	 * time, no batch sent: the caller reports the outcome as unknown).
	 */
	async probeClaim(
		idempotency: { keysToKeep: number },
		entries: ReturnType<typeof entriesOf>,
		layout: string[],
		attempts: string[],
	): Promise<{
		claimedAt?: number;
		heldUntil?: number;
		markedMinutes: number[];
		ended: boolean;
		acceptedBatches: Set<string>;
		sameLayout: boolean;
		sameAttempts?: Set<string>;
		added: string[];
	}> {
		const nowPeriod = Math.floor(Date.now() / MINUTE_MS / MINUTES_PER_PERIOD);
		const periods = Array.from({ length: PERIODS_LOOKED_AT }, (_, back) => nowPeriod - back);
		// The mark last: when the row is full, the oldest entries go first, and the mark must outlive the probes.
		const probes = [
			...periods.map(entries.claimedIn),
			...layout.map(entries.batchAccepted),
			...attemptEntries(entries, layout, attempts),
			entries.layout,
			entries.ended,
			entries.probing,
		];
		const absent = await this.record(idempotency, probes);
		const added = probes.filter((value) => absent.has(value));
		const cutShort = !absent.has(entries.probing);
		const ended = !absent.has(entries.ended);
		let claimedAt: number | undefined;
		let heldUntil: number | undefined;
		const markedMinutes: number[] = [];
		const claimedPeriods = periods.filter((period) => !absent.has(entries.claimedIn(period)));
		if (!cutShort && claimedPeriods.length > 0) {
			const first = Math.min(...claimedPeriods);
			const last = Math.max(...claimedPeriods);
			const minutes = [...new Set([first, last])].flatMap((period) =>
				Array.from(
					{ length: MINUTES_PER_PERIOD },
					(_, index) => period * MINUTES_PER_PERIOD + index,
				),
			);
			const minuteProbes = minutes.map(entries.claimedAt);
			const absentMinutes = await this.record(idempotency, minuteProbes, added.length);
			added.push(...minuteProbes.filter((value) => absentMinutes.has(value)));
			const marked = minutes.filter((minute) => !absentMinutes.has(entries.claimedAt(minute)));
			// A period whose minute entries were pushed out of the row (Keys to Keep): its first minute
			// for the claim, its last for the latest sign of life.
			const firstMinute = marked.length > 0 ? Math.min(...marked) : first * MINUTES_PER_PERIOD;
			const lastMinute =
				marked.length > 0 && Math.floor(Math.max(...marked) / MINUTES_PER_PERIOD) === last
					? Math.max(...marked)
					: (last + 1) * MINUTES_PER_PERIOD - 1;
			claimedAt = firstMinute * MINUTE_MS;
			heldUntil = heldUntilOf(lastMinute, ended);
			markedMinutes.push(...new Set([...marked, firstMinute, lastMinute]));
		}
		const acceptedBatches = cutShort
			? new Set<string>()
			: new Set(layout.filter((batch) => !absent.has(entries.batchAccepted(batch))));
		const recorded = attemptEntries(entries, layout, attempts).length > 0;
		const sameAttempts =
			!recorded || (!cutShort && absent.has(entries.attemptsRecorded))
				? undefined
				: new Set(
						layout.filter(
							(batch, index) => !cutShort && !absent.has(entries.attempt(batch, attempts[index])),
						),
					);
		return {
			claimedAt,
			heldUntil,
			markedMinutes,
			ended,
			acceptedBatches,
			sameLayout: !cutShort && !absent.has(entries.layout),
			sameAttempts,
			added,
		};
	}
}
