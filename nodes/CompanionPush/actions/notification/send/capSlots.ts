import type { IExecuteFunctions } from 'n8n-workflow';

import { oneAtATime } from '../../../shared/oneAtATime';
import { MINUTE_MS } from '../../../shared/time';
import { inKeysTurn, MAX_KEYS_TO_KEEP } from '../../../neverTwice';
import type { LockOutcome, RowWrites } from '../../../neverTwice';
import * as processState from '../../../neverTwice/storeQueues';

/*
 * The slots of "Cap per Person" in n8n's processed-data store: the node's own row (the one the
 * Idempotency Keys use), read and written only in this process's turn under the store's lock
 * (neverTwice/keysTurn.ts, storeLock.ts), so two processes never count from the same reading.
 * The protocol and its costs: docs/local-delivery.md, "Cap per Person".
 *
 * The store keeps hashes, so a value is read by recording it: what comes back new was absent (a
 * probe, taken out again). A slot is `capSlot <user> <tick length> <tick> <index>`: the tick (of
 * n8n's clock) it was taken in, and its place among that tick's slots of the person. A tick is a
 * minute, or 1/60 of a longer window (rounded up to whole minutes), so a count reads at most 123
 * ticks per person whatever the window, and only those of windows the person has a mark in. Slots of one tick are alike, so a slot given back takes out
 * the highest index of its tick, and the indexes stay 0, 1, 2... A probe cut short (n8n dying
 * before it is taken out) can only leave what looks like slots: a person may be capped early, never
 * notified over the cap.
 */

export interface CapRule {
	/** At most this many sends per person... */
	maxSends: number;
	/** ...within this many minutes, rolling. */
	windowMinutes: number;
}

/** What the cap decided for one recipient of one send. */
export type SlotDecision =
	| { granted: true; tick: number }
	| { granted: false; notifyAfter: number };

/** A slot to give back: its person and the tick it was taken in. */
export interface TakenSlot {
	userId: string;
	tick: number;
}

/** Ticks per window, at most: a slot's time is kept to a tick. */
const TICKS_PER_WINDOW = 60;

/** The length of a tick of `rule`, in minutes. */
const tickMinutes = (rule: CapRule) => Math.ceil(rule.windowMinutes / TICKS_PER_WINDOW);

/** The row's entries the cap's writes keep at least (n8n drops the oldest beyond them): its bound.
 * Twice the most Keys to Keep, so that a cap's write never trims what the keys' writes keep. */
export const CAP_ROW_ENTRIES = 2 * MAX_KEYS_TO_KEEP;

/** The tick length is part of the entry: a count under another window never reads these. */
const slotEntry = (rule: CapRule, userId: string, tick: number, index: number) =>
	JSON.stringify(['capSlot', userId, tickMinutes(rule), tick, index]);

/** When a slot taken in `tick` stops counting: the end of its tick plus the window (the moment in
 * the tick is not kept, so it counts up to a tick longer, never shorter). */
export function slotExpiry(tick: number, rule: CapRule): number {
	return ((tick + 1) * tickMinutes(rule) + rule.windowMinutes) * MINUTE_MS;
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

const ticksPerWindow = (rule: CapRule) => Math.ceil(rule.windowMinutes / tickMinutes(rule));

/** The window (counted from the clock's start) a tick is in. */
const windowOf = (tick: number, rule: CapRule) => Math.floor(tick / ticksPerWindow(rule));

/** Present while the person may have slots in that window: written with each slot, taken out once
 * the whole window expired. */
const markEntry = (rule: CapRule, userId: string, window: number) =>
	JSON.stringify(['capPerson', userId, tickMinutes(rule), window]);

/** The ticks a person's slots are read in, newest first: the window and the one before it (what
 * expired in it is taken out: a person counted again leaves no expired slot behind). */
function ticksToRead(nowTick: number, rule: CapRule): number[] {
	const span = 2 * (ticksPerWindow(rule) + 1);
	return Array.from({ length: span + 1 }, (_, back) => nowTick - back);
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
		const nowTick = Math.floor(now / (tickMinutes(rule) * MINUTE_MS));
		const entry = (userId: string, tick: number, index: number) =>
			slotEntry(rule, userId, tick, index);
		const people = [...new Set(requests)];
		const ticks = ticksToRead(nowTick, rule);
		// Only the ticks of a window whose mark the person has are read: most people of a large
		// audience cost one probe per window read, not one per tick.
		const windows = [...new Set(ticks.map((tick) => windowOf(tick, rule)))];
		const marks = people.flatMap((userId) =>
			windows.map((window) => markEntry(rule, userId, window)),
		);
		const absentMarks = await writes.record(marks, CAP_ROW_ENTRIES);
		const probed = marks.filter((value) => absentMarks.has(value));
		const markedTicks = people.flatMap((userId) =>
			ticks
				.filter((tick) => !absentMarks.has(markEntry(rule, userId, windowOf(tick, rule))))
				.map((tick) => ({ userId, tick })),
		);
		const firsts = markedTicks.map(({ userId, tick }) => entry(userId, tick, 0));
		const absentFirsts = await writes.record(firsts, CAP_ROW_ENTRIES);
		probed.push(...firsts.filter((value) => absentFirsts.has(value)));
		const usedTicks = markedTicks.filter(
			({ userId, tick }) => !absentFirsts.has(entry(userId, tick, 0)),
		);
		const others = usedTicks.flatMap(({ userId, tick }) =>
			Array.from({ length: rule.maxSends - 1 }, (_, index) => entry(userId, tick, index + 1)),
		);
		const absentOthers = await writes.record(others, CAP_ROW_ENTRIES);
		probed.push(...others.filter((value) => absentOthers.has(value)));
		const present = new Set(
			[...marks, ...firsts, ...others].filter(
				(value) => !absentMarks.has(value) && !absentFirsts.has(value) && !absentOthers.has(value),
			),
		);
		// Each person's slots that still count, oldest first; the expired ones go, and the mark of a
		// window all expired.
		const expired = people.flatMap((userId) =>
			windows
				.filter((window) => slotExpiry((window + 1) * ticksPerWindow(rule) - 1, rule) <= now)
				.map((window) => markEntry(rule, userId, window))
				.filter((mark) => present.has(mark)),
		);
		const counted = new Map<string, number[]>();
		for (const userId of people) {
			const slots: number[] = [];
			for (const tick of [...ticks].reverse()) {
				for (let index = 0; index < rule.maxSends; index++) {
					if (!present.has(entry(userId, tick, index))) continue;
					if (slotExpiry(tick, rule) > now) slots.push(tick);
					else expired.push(entry(userId, tick, index));
				}
			}
			counted.set(userId, slots);
		}

		const taken = new Set<string>();
		const decisions = requests.map((userId): SlotDecision => {
			const slots = counted.get(userId)!;
			if (slots.length >= rule.maxSends) {
				const oldestCounted = slots[slots.length - rule.maxSends];
				return { granted: false, notifyAfter: slotExpiry(oldestCounted, rule) };
			}
			let index = 0;
			while (present.has(entry(userId, nowTick, index)) || taken.has(entry(userId, nowTick, index)))
				index++;
			taken.add(entry(userId, nowTick, index));
			// Its window's mark goes in with the slot.
			taken.add(markEntry(rule, userId, windowOf(nowTick, rule)));
			slots.push(nowTick);
			return { granted: true, tick: nowTick };
		});
		// The slots first (a probe may have put some there already), then the probes and the expired
		// slots out: cut short in between, what stays only counts more.
		await writes.record([...taken], CAP_ROW_ENTRIES);
		await writes.remove([...probed.filter((value) => !taken.has(value)), ...expired]);
		return decisions;
	});
}

/** Gives back slots whose send was surely not made: per tick, the highest indexes go. Two writes
 * in one turn. */
export async function giveSlotsBack(
	context: IExecuteFunctions,
	rule: CapRule,
	slots: TakenSlot[],
): Promise<LockOutcome<void>> {
	const byTick = new Map<string, { userId: string; tick: number; count: number }>();
	for (const { userId, tick } of slots) {
		const key = JSON.stringify([userId, tick]);
		const group = byTick.get(key) ?? { userId, tick, count: 0 };
		group.count++;
		byTick.set(key, group);
	}
	const entriesOf = (userId: string, tick: number) =>
		Array.from({ length: rule.maxSends }, (_, index) => slotEntry(rule, userId, tick, index));
	return await capTurn(context, async (writes) => {
		const probes = [...byTick.values()].flatMap(({ userId, tick }) => entriesOf(userId, tick));
		const absent = await writes.record(probes, CAP_ROW_ENTRIES);
		const toRemove = probes.filter((value) => absent.has(value));
		for (const { userId, tick, count } of byTick.values()) {
			const held = entriesOf(userId, tick).filter((value) => !absent.has(value));
			toRemove.push(...held.slice(Math.max(0, held.length - count)));
		}
		await writes.remove(toRemove);
	});
}
