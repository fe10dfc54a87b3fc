import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { MINUTE_MS } from '../../../common/time';
import { fieldError } from '../../../nodeErrors';
import { fitsRecord, inStoreTurn, LOST } from '../../../store';
import type { LockOutcome, RecordRead, StoreTurn } from '../../../store';

/*
 * The slots of "Cap per Person", kept as records of the store (store/): one per person, in the
 * node's own row, read and written only in this process's turn on it, under the store's lock, so two
 * processes never count from the same reading. The protocol and its costs: docs/local-delivery.md,
 * "Cap per Person".
 *
 * A person's record holds the ticks (of n8n's clock) of their slots that still count. A tick is a
 * minute, or 1/60 of a longer window (rounded up to whole minutes); the tick length is part of the
 * record's name, so a count under another window never reads these. A record the store cannot read
 * back counts as full (the person is capped until a window has passed): a person may be capped
 * early, never notified over the cap.
 */

export interface CapRule {
	/** At most this many sends per person... */
	maxSends: number;
	/** ...within this many minutes, rolling. */
	windowMinutes: number;
}

export const MAX_CAP_SENDS = 100;
/** A day: longer windows would keep a slot's time less precisely still (a tick is 1/60 of the
 * window, below). */
export const MAX_CAP_WINDOW_MINUTES = 1_440;
export const DEFAULT_CAP_WINDOW_MINUTES = 60;

/** The options "Cap per Person" and "Cap Window (Minutes)" of an item that has a cap. */
export function readCapRule(
	context: IExecuteFunctions,
	options: IDataObject,
	itemIndex: number,
): CapRule {
	const maxSends = Number(options.capPerPerson);
	if (
		typeof options.capPerPerson === 'boolean' ||
		options.capPerPerson === '' ||
		!Number.isInteger(maxSends) ||
		maxSends < 1 ||
		maxSends > MAX_CAP_SENDS
	) {
		throw fieldError(
			context,
			'Cap per Person',
			`must be a whole number of sends from 1 to ${MAX_CAP_SENDS} (got ${String(options.capPerPerson).slice(0, 40)})`,
			itemIndex,
			'item',
		);
	}
	const window = options.capWindowMinutes ?? DEFAULT_CAP_WINDOW_MINUTES;
	const windowMinutes = Number(window);
	if (
		typeof window === 'boolean' ||
		window === '' ||
		!Number.isFinite(windowMinutes) ||
		windowMinutes <= 0 ||
		windowMinutes > MAX_CAP_WINDOW_MINUTES
	) {
		throw fieldError(
			context,
			'Cap Window (Minutes)',
			`must be a positive number of minutes, at most ${MAX_CAP_WINDOW_MINUTES} (got ${String(window).slice(0, 40)})`,
			itemIndex,
			'item',
		);
	}
	// Slots are kept to the minute at least: a part of a minute counts as a whole one.
	return { maxSends, windowMinutes: Math.ceil(windowMinutes) };
}

/** A recipient of one send asking for a slot: `heldTick` when an earlier try of this run holds one
 * for this very send (capPerPerson.ts). */
export interface SlotRequest {
	userId: string;
	heldTick?: number;
}

/** What the cap decided for one recipient of one send: `held` when it is an earlier try's slot. */
export type SlotDecision =
	| { granted: true; tick: number; held?: true }
	| { granted: false; notifyAfter: number };

/** A slot to give back: its person and the tick it was taken in (`held`: by an earlier try). */
export interface TakenSlot {
	userId: string;
	tick: number;
	held?: true;
}

/** Ticks per window, at most: a slot's time is kept to a tick. */
const TICKS_PER_WINDOW = 60;

/** The length of a tick of `rule`, in minutes. */
const tickMinutes = (rule: CapRule) => Math.ceil(rule.windowMinutes / TICKS_PER_WINDOW);

/** The record of a person's slots under `rule`. */
const personName = (rule: CapRule, userId: string) =>
	JSON.stringify(['capPerson', userId, tickMinutes(rule)]);

/** The text of a person's slots: each tick they have slots in (the first, then the others after
 * it, in base 36), with the count of its slots when more than one ("*3"). */
export function encodeSlots(ticks: number[]): string {
	const counts = new Map<number, number>();
	for (const tick of ticks) counts.set(tick, (counts.get(tick) ?? 0) + 1);
	let groups = [...counts].sort(([a], [b]) => a - b);
	const text = () =>
		groups
			.map(([tick, count], index) => {
				const at = (index === 0 ? tick : tick - groups[0][0]).toString(36);
				return count > 1 ? `${at}*${count.toString(36)}` : at;
			})
			.join('.');
	// Too many to hold: the oldest tick's slots count from the next one (later: never over the cap).
	while (!fitsRecord(text())) {
		const [[, count], [next, nextCount]] = groups;
		groups = [[next, count + nextCount], ...groups.slice(2)];
	}
	return text();
}

/** The ticks of a person's slots; undefined when the text is not a record of slots. */
export function decodeSlots(text: string): number[] | undefined {
	const ticks: number[] = [];
	for (const [index, part] of text.split('.').entries()) {
		const match = /^([0-9a-z]{1,10})(?:\*([0-9a-z]{1,2}))?$/.exec(part);
		if (!match) return undefined;
		const at = parseInt(match[1], 36);
		const tick = index === 0 ? at : ticks[0] + at;
		ticks.push(...Array.from({ length: match[2] ? parseInt(match[2], 36) : 1 }, () => tick));
	}
	return ticks;
}

/** When a slot taken in `tick` stops counting: the end of its tick plus the window (the moment in
 * the tick is not kept, so it counts up to a tick longer, never shorter). */
export function slotExpiry(tick: number, rule: CapRule): number {
	return ((tick + 1) * tickMinutes(rule) + rule.windowMinutes) * MINUTE_MS;
}

/** The cap's works of one row: each has a turn of its own in this process, as two in one turn
 * would decide from the same reading. */
function capTurn<T>(
	context: IExecuteFunctions,
	work: (turn: StoreTurn) => Promise<T>,
): Promise<LockOutcome<T>> {
	return inStoreTurn(context, work, 'cap');
}

/** The slots of a person that still count at `now`, oldest first: a record that cannot be read back
 * counts as `maxSends` slots of this tick. */
function slotsOf(read: RecordRead, rule: CapRule, now: number, nowTick: number): number[] {
	const ticks = read === undefined ? [] : read === LOST ? undefined : decodeSlots(read);
	if (!ticks) return Array.from({ length: rule.maxSends }, () => nowTick);
	return ticks.filter((tick) => slotExpiry(tick, rule) > now).sort((a, b) => a - b);
}

/** Writes the people's slots: a person without any has no record. */
async function writeSlots(turn: StoreTurn, rule: CapRule, slots: Map<string, number[]>) {
	const people = [...slots];
	await turn.write(
		people
			.filter(([, ticks]) => ticks.length > 0)
			.map(([userId, ticks]): [string, string] => [personName(rule, userId), encodeSlots(ticks)]),
	);
	await turn.delete(
		people.filter(([, ticks]) => ticks.length === 0).map(([userId]) => personName(rule, userId)),
	);
}

/**
 * Takes a slot for each request (a person of one send), in order, while the person has fewer than
 * `maxSends` slots in the window; the others are refused with the time the person's oldest counted
 * slot expires. A request whose earlier try's slot still counts keeps that slot (the same send,
 * tried again: never counted twice, never capped by its own slot). One reading and one writing of
 * the people's records, whatever their number.
 */
export async function takeSlots(
	context: IExecuteFunctions,
	rule: CapRule,
	slotRequests: SlotRequest[],
): Promise<LockOutcome<SlotDecision[]>> {
	const requests = slotRequests.map(({ userId }) => userId);
	return await capTurn(context, async (turn) => {
		const now = Date.now();
		const nowTick = Math.floor(now / (tickMinutes(rule) * MINUTE_MS));
		const people = [...new Set(requests)];
		const reads = await turn.read(people.map((userId) => personName(rule, userId)));
		const counted = new Map(
			people.map((userId, index) => [userId, slotsOf(reads[index], rule, now, nowTick)]),
		);
		// A person whose record holds exactly the slots still counted, and who gets none, keeps it.
		const unchanged = new Set(
			people.filter(
				(userId, index) =>
					typeof reads[index] === 'string' &&
					reads[index] === encodeSlots(counted.get(userId)!) &&
					counted.get(userId)!.length > 0,
			),
		);
		// The slots earlier tries hold: each stands for one send, so it is matched once.
		const holdable = new Map([...counted].map(([userId, slots]) => [userId, [...slots]]));
		const decisions = slotRequests.map(({ userId, heldTick }): SlotDecision => {
			const slots = counted.get(userId)!;
			const held = holdable.get(userId)!;
			if (heldTick !== undefined && held.includes(heldTick)) {
				held.splice(held.indexOf(heldTick), 1);
				return { granted: true, tick: heldTick, held: true };
			}
			if (slots.length >= rule.maxSends) {
				const oldestCounted = slots[slots.length - rule.maxSends];
				return { granted: false, notifyAfter: slotExpiry(oldestCounted, rule) };
			}
			slots.push(nowTick);
			unchanged.delete(userId);
			return { granted: true, tick: nowTick };
		});
		// The others are written: their expired slots go, and a record that could not be read back is
		// written anew, full.
		await writeSlots(
			turn,
			rule,
			new Map([...counted].filter(([userId]) => !unchanged.has(userId))),
		);
		return decisions;
	});
}

/** Gives back slots whose send was surely not made. */
export async function giveSlotsBack(
	context: IExecuteFunctions,
	rule: CapRule,
	slots: TakenSlot[],
): Promise<LockOutcome<void>> {
	return await capTurn(context, async (turn) => {
		const now = Date.now();
		const nowTick = Math.floor(now / (tickMinutes(rule) * MINUTE_MS));
		const people = [...new Set(slots.map(({ userId }) => userId))];
		const reads = await turn.read(people.map((userId) => personName(rule, userId)));
		// A record that cannot be read back stays as it is: it counts as full.
		const counted = new Map(
			people.flatMap(
				(userId, index): Array<[string, number[]]> =>
					reads[index] === LOST ? [] : [[userId, slotsOf(reads[index], rule, now, nowTick)]],
			),
		);
		for (const { userId, tick } of slots) {
			const ticks = counted.get(userId);
			const index = ticks?.lastIndexOf(tick) ?? -1;
			if (index !== -1) ticks!.splice(index, 1);
		}
		await writeSlots(turn, rule, counted);
	});
}
