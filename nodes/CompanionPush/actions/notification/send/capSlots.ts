import type { IExecuteFunctions } from 'n8n-workflow';

import { oneAtATime } from '../../../helpers/oneAtATime';
import { MINUTE_MS } from '../../../helpers/time';
import { inKeysTurn } from '../../../neverTwice';
import type { LockOutcome, RowWrites } from '../../../neverTwice';
import { processState } from '../../../processState';

/*
 * The slots of "Cap per Person" in n8n's processed-data store: the node's own row (the one the
 * Idempotency Keys use), read and written only in this process's turn under the store's lock
 * (neverTwice/keysTurn.ts, storeLock.ts), so two processes never count from the same reading.
 * The protocol and its costs: docs/local-delivery.md, "Cap per Person".
 *
 * The store keeps hashes, so a value is read by recording it: what comes back new was absent (a
 * probe, taken out again). A slot is `capSlot <user> <minute> <index>`: the minute (n8n's clock) it
 * was taken in, and its place among that minute's slots of the person. Slots of one minute are
 * alike, so a slot given back takes out the highest index of its minute, and the indexes stay
 * 0, 1, 2... A probe cut short (n8n dying before it is taken out) can only leave what looks like
 * slots: a person may be capped early, never notified over the cap.
 */

export interface CapRule {
	/** At most this many sends per person... */
	maxSends: number;
	/** ...within this many minutes, rolling. */
	windowMinutes: number;
}

/** What the cap decided for one recipient of one send. */
export type SlotDecision =
	| { granted: true; minute: number }
	| { granted: false; notifyAfter: number };

/** A slot to give back: its person and the minute it was taken in. */
export interface TakenSlot {
	userId: string;
	minute: number;
}

/** The row's entries the cap's writes keep at least (n8n drops the oldest beyond them): its bound. */
export const CAP_ROW_ENTRIES = 100_000;

const slotEntry = (userId: string, minute: number, index: number) =>
	JSON.stringify(['capSlot', userId, minute, index]);

/** When a slot taken in `minute` stops counting: the end of its minute plus the window (its second
 * is not kept, so it counts up to a minute longer, never shorter). */
export function slotExpiry(minute: number, rule: CapRule): number {
	return (minute + 1 + rule.windowMinutes) * MINUTE_MS;
}

/** The cap's works of one row, one at a time in this process: each reads, decides and writes in
 * its turn, and two of them in one turn would decide from the same reading. */
function capTurn<T>(
	context: IExecuteFunctions,
	work: (writes: RowWrites) => Promise<T>,
): Promise<LockOutcome<T>> {
	const row = JSON.stringify([context.getWorkflow().id ?? '', context.getNode().id]);
	return oneAtATime(processState.capQueues, row, async () => await inKeysTurn(context, work));
}

/** The minutes a person's slots are read in: the window and the one before it (what expired in it
 * is taken out: a person counted again leaves no expired slot behind). */
function minutesToRead(nowMinute: number, rule: CapRule): number[] {
	const span = 2 * (rule.windowMinutes + 1);
	return Array.from({ length: span + 1 }, (_, back) => nowMinute - back);
}

/**
 * Takes a slot for each request (a person of one send), in order, while the person has fewer than
 * `maxSends` slots in the window; the others are refused with the time the person's oldest counted
 * slot expires. Four writes in one turn, whatever the number of people.
 */
export async function takeSlots(
	context: IExecuteFunctions,
	rule: CapRule,
	requests: string[],
): Promise<LockOutcome<SlotDecision[]>> {
	return await capTurn(context, async (writes) => {
		const now = Date.now();
		const nowMinute = Math.floor(now / MINUTE_MS);
		const people = [...new Set(requests)];
		const minutes = minutesToRead(nowMinute, rule);
		const firsts = people.flatMap((userId) =>
			minutes.map((minute) => slotEntry(userId, minute, 0)),
		);
		const absentFirsts = await writes.record(firsts, CAP_ROW_ENTRIES);
		const probed = firsts.filter((entry) => absentFirsts.has(entry));
		const usedMinutes = people.flatMap((userId) =>
			minutes
				.filter((minute) => !absentFirsts.has(slotEntry(userId, minute, 0)))
				.map((minute) => ({ userId, minute })),
		);
		const others = usedMinutes.flatMap(({ userId, minute }) =>
			Array.from({ length: rule.maxSends - 1 }, (_, index) => slotEntry(userId, minute, index + 1)),
		);
		const absentOthers = await writes.record(others, CAP_ROW_ENTRIES);
		probed.push(...others.filter((entry) => absentOthers.has(entry)));
		const present = new Set(
			[...firsts, ...others].filter(
				(entry) => !absentFirsts.has(entry) && !absentOthers.has(entry),
			),
		);

		// Each person's slots that still count, oldest first; the expired ones go.
		const expired: string[] = [];
		const counted = new Map<string, number[]>();
		for (const userId of people) {
			const slots: number[] = [];
			for (const minute of [...minutes].reverse()) {
				for (let index = 0; index < rule.maxSends; index++) {
					const entry = slotEntry(userId, minute, index);
					if (!present.has(entry)) continue;
					if (slotExpiry(minute, rule) > now) slots.push(minute);
					else expired.push(entry);
				}
			}
			counted.set(userId, slots);
		}

		const taken = new Set<string>();
		const decisions = requests.map((userId): SlotDecision => {
			const slots = counted.get(userId)!;
			if (slots.length >= rule.maxSends)
				return {
					granted: false,
					notifyAfter: slotExpiry(slots[slots.length - rule.maxSends], rule),
				};
			let index = 0;
			while (
				present.has(slotEntry(userId, nowMinute, index)) ||
				taken.has(slotEntry(userId, nowMinute, index))
			)
				index++;
			taken.add(slotEntry(userId, nowMinute, index));
			slots.push(nowMinute);
			return { granted: true, minute: nowMinute };
		});
		// The slots first (a probe may have put some there already), then the probes and the expired
		// slots out: cut short in between, what stays only counts more.
		await writes.record([...taken], CAP_ROW_ENTRIES);
		await writes.remove([...probed.filter((entry) => !taken.has(entry)), ...expired]);
		return decisions;
	});
}

/** Gives back slots whose send was surely not made: per minute, the highest indexes go. Two writes
 * in one turn. */
export async function giveSlotsBack(
	context: IExecuteFunctions,
	rule: CapRule,
	slots: TakenSlot[],
): Promise<LockOutcome<void>> {
	const byMinute = new Map<string, { userId: string; minute: number; count: number }>();
	for (const { userId, minute } of slots) {
		const key = JSON.stringify([userId, minute]);
		const entry = byMinute.get(key) ?? { userId, minute, count: 0 };
		entry.count++;
		byMinute.set(key, entry);
	}
	return await capTurn(context, async (writes) => {
		const probes = [...byMinute.values()].flatMap(({ userId, minute }) =>
			Array.from({ length: rule.maxSends }, (_, index) => slotEntry(userId, minute, index)),
		);
		const absent = await writes.record(probes, CAP_ROW_ENTRIES);
		const toRemove = probes.filter((entry) => absent.has(entry));
		for (const { userId, minute, count } of byMinute.values()) {
			const held = Array.from({ length: rule.maxSends }, (_, index) =>
				slotEntry(userId, minute, index),
			).filter((entry) => !absent.has(entry));
			toRemove.push(...held.slice(Math.max(0, held.length - count)));
		}
		await writes.remove(toRemove);
	});
}
