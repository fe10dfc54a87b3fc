import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { MINUTE_MS } from '../../../common/time';
import { fieldError } from '../../../nodeErrors';
import { inStoreTurn } from '../../../store';
import type { LockOutcome, StoreTurn } from '../../../store';

/*
 * The slots of "Cap per Person", kept as flags of the store (store/flags.ts: one entry each), in the
 * node's own row, read and written only in this process's turn on it, under the store's lock, so two
 * processes never count from the same reading. The protocol and its costs: docs/local-delivery.md,
 * "Cap per Person".
 *
 * A slot is the flag of its person, tick and index: the tick (of n8n's clock, a minute, or 1/60 of
 * a longer window rounded up to whole minutes; its length is part of the flag, so a count under
 * another window never reads these) it was taken in, and its place among that tick's slots (0, 1,
 * 2...: a slot is taken at the lowest place found free, and given back from the highest). A person's
 * slots are found from the top: a flag for each span of 64 ticks, then of 8, that holds one of their
 * slots, set with it; only the spans found set are looked into, so a person without slots costs
 * three tests, one with a slot about twenty. A test cut short leaves the flags it tested set: they
 * count as slots, so a person may be capped early, never notified over the cap.
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
/** The spans a person's slots are found by, widest first (in ticks, each a multiple of the next). */
const SPANS = [64, 8];

/** The length of a tick of `rule`, in minutes. */
const tickMinutes = (rule: CapRule) => Math.ceil(rule.windowMinutes / TICKS_PER_WINDOW);

/** A person's slot: the tick it was taken in and its place among that tick's slots. */
const slotFlag = (rule: CapRule, userId: string, tick: number, place: number) =>
	JSON.stringify(['capSlot', userId, tickMinutes(rule), tick, place]);
/** Set while a person has a slot in the span of `size` ticks from `start`. */
const spanFlag = (rule: CapRule, userId: string, size: number, start: number) =>
	JSON.stringify(['capSpan', userId, tickMinutes(rule), size, start]);
const spanStart = (tick: number, size: number) => Math.floor(tick / size) * size;
const range = (from: number, to: number, step = 1) =>
	Array.from({ length: Math.max(0, Math.ceil((to - from) / step)) }, (_, i) => from + i * step);

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

/** A tick a person has slots in: the places found taken, and those found free. */
interface UsedTick {
	userId: string;
	tick: number;
	taken: number[];
	free: number[];
}

/** The places tested per round, after place 0: a few first, more only where all were taken. */
const PLACE_ROUNDS = [1, 4, 16, 64];

/**
 * Reads the slots of `people` in the ticks from `fromTick` to `toTick` (whole spans, so that a span
 * that expired can go with everything in it): the ticks they have slots in, and the flags set.
 * `wanted` says how many free places a person needs in `toTick` (the tick slots are taken in).
 */
async function readSlots(
	turn: StoreTurn,
	rule: CapRule,
	people: string[],
	[fromTick, toTick]: [number, number],
	wanted: (userId: string) => number,
): Promise<{ used: UsedTick[]; spans: Array<{ userId: string; size: number; start: number }> }> {
	const widest = SPANS[0];
	let candidates = people.flatMap((userId) =>
		range(spanStart(fromTick, widest), toTick + 1, widest).map((start) => ({
			userId,
			size: widest,
			start,
		})),
	);
	const spans: typeof candidates = [];
	for (const [level, size] of SPANS.entries()) {
		const set = await turn.hasFlags(candidates.map((c) => spanFlag(rule, c.userId, size, c.start)));
		const found = candidates.filter((_, index) => set[index]);
		spans.push(...found);
		const inner = SPANS[level + 1] ?? 1;
		candidates = found.flatMap(({ userId, start }) =>
			range(start, start + size, inner).map((at) => ({ userId, size: inner, start: at })),
		);
	}
	const firsts = await turn.hasFlags(candidates.map((c) => slotFlag(rule, c.userId, c.start, 0)));
	const used = candidates
		.filter((_, index) => firsts[index])
		.map(({ userId, start }): UsedTick => ({ userId, tick: start, taken: [0], free: [] }));
	// The other places, round by round, while a tick has all those tested taken (or needs free ones).
	const needsMore = (tick: UsedTick) =>
		tick.free.length === 0 || (tick.tick === toTick && tick.free.length < wanted(tick.userId));
	let pending = used;
	for (const [round, from] of PLACE_ROUNDS.entries()) {
		const to = Math.min(PLACE_ROUNDS[round + 1] ?? rule.maxSends, rule.maxSends);
		if (pending.length === 0 || from >= to) break;
		const places = range(from, to);
		const set = await turn.hasFlags(
			pending.flatMap(({ userId, tick }) => places.map((at) => slotFlag(rule, userId, tick, at))),
		);
		pending.forEach((tick, index) =>
			places.forEach((at, offset) => {
				(set[index * places.length + offset] ? tick.taken : tick.free).push(at);
			}),
		);
		pending = pending.filter(needsMore);
	}
	return { used, spans };
}

/**
 * Takes a slot for each request (a person of one send), in order, while the person has fewer than
 * `maxSends` slots in the window; the others are refused with the time the person's oldest counted
 * slot expires. A request whose earlier try's slot still counts keeps that slot (the same send,
 * tried again: never counted twice, never capped by its own slot). Expired slots go. A few writes of
 * the row in one turn, whatever the number of people.
 */
export async function takeSlots(
	context: IExecuteFunctions,
	rule: CapRule,
	slotRequests: SlotRequest[],
): Promise<LockOutcome<SlotDecision[]>> {
	return await capTurn(context, async (turn) => {
		const now = Date.now();
		const nowTick = Math.floor(now / (tickMinutes(rule) * MINUTE_MS));
		const people = [...new Set(slotRequests.map(({ userId }) => userId))];
		const asked = new Map<string, number>();
		for (const { userId } of slotRequests) asked.set(userId, (asked.get(userId) ?? 0) + 1);
		// The window and the one before it: what expired there goes.
		const ticksPerWindow = Math.ceil(rule.windowMinutes / tickMinutes(rule));
		const from = nowTick - 2 * (ticksPerWindow + 1);
		const { used, spans } = await readSlots(turn, rule, people, [from, nowTick], (userId) =>
			Math.min(asked.get(userId)!, rule.maxSends),
		);
		const expired: string[] = [];
		const counted = new Map(people.map((userId) => [userId, [] as number[]]));
		const freeNow = new Map<string, number[]>();
		for (const { userId, tick, taken, free } of used) {
			if (tick === nowTick) freeNow.set(userId, free);
			if (slotExpiry(tick, rule) > now) counted.get(userId)!.push(...taken.map(() => tick));
			else expired.push(...taken.map((at) => slotFlag(rule, userId, tick, at)));
		}
		for (const { userId, size, start } of spans)
			if (slotExpiry(start + size - 1, rule) <= now)
				expired.push(spanFlag(rule, userId, size, start));
		for (const ticks of counted.values()) ticks.sort((a, b) => a - b);

		const taken: string[] = [];
		// The slots earlier tries hold: each stands for one send, so it is matched once.
		const holdable = new Map([...counted].map(([userId, ticks]) => [userId, [...ticks]]));
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
			// The lowest place found free in this tick (place 0 when the tick had none).
			const free = freeNow.get(userId) ?? range(0, rule.maxSends);
			freeNow.set(userId, free);
			taken.push(
				slotFlag(rule, userId, nowTick, free.shift()!),
				...SPANS.map((size) => spanFlag(rule, userId, size, spanStart(nowTick, size))),
			);
			slots.push(nowTick);
			return { granted: true, tick: nowTick };
		});
		// The slots first, then the expired ones out: cut short in between, what stays only counts more.
		await turn.setFlags(taken);
		await turn.clearFlags(expired);
		return decisions;
	});
}

/** Gives back slots whose send was surely not made: of their tick's slots, the highest places. */
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
	return await capTurn(context, async (turn) => {
		const ticks = [...byTick.values()];
		const placesOf = ({ userId, tick }: { userId: string; tick: number }) =>
			range(0, rule.maxSends).map((at) => slotFlag(rule, userId, tick, at));
		const set = await turn.hasFlags(ticks.flatMap(placesOf));
		const back = ticks.flatMap((tick, index) => {
			const taken = placesOf(tick).filter((_, at) => set[index * rule.maxSends + at]);
			return taken.slice(Math.max(0, taken.length - tick.count));
		});
		await turn.clearFlags(back);
	});
}
