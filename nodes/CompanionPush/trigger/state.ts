import { parseTime } from '../common/time';
import type { StoredLadder } from './ladder';

/**
 * What the trigger remembers between polls, in the node's static data. Plain JSON, bounded:
 * - `listed`: how far down the list of sends the next poll reads (`floor`, a created_at on the
 *   API's clock) and the sends already listed above it (`recent`). The floor stays
 *   LIST_LAG_MARGIN_MS below the newest created_at seen, so a send the list shows late (created
 *   before a send already seen, listed after it) is still found, and `recent` tells it apart from
 *   the sends already met;
 * - `sends`: the sends being watched, each with the keys of the events already emitted for it, and
 *   the alert ladder's people apart (one entry per person, whatever the levels: ladder.ts).
 *   A send is forgotten once its watch window has passed; from then on it is never read again
 *   (it is below the floor), so its keys can go with it.
 * Hard bounds: MAX_WATCHED_SENDS sends, MAX_REMEMBERED_KEYS keys and ladder people, and
 * MAX_WATCHED_CHARS characters of ids, keys and people in all (beyond them sends are forgotten
 * before their window ends: those still scheduled first, furthest ahead first, then the oldest;
 * see ageOut), MAX_RECENT_IDS sends in `recent` (beyond it the floor rises, shortening the margin).
 */

export const STATE_VERSION = 3;
/** How far below the newest created_at seen the list is read again, for sends it shows late. */
export const LIST_LAG_MARGIN_MS = 5 * 60_000;
/** Sends kept in `recent`; also the most the first poll lists. */
export const MAX_RECENT_IDS = 500;
/** Sends without a created_at kept in `recent` (the list then stops at the first one already seen). */
export const UNTIMED_IDS = 20;
export const MAX_WATCHED_SENDS = 500;
/** Event keys and ladder people remembered in all. No Device and Not Reached remember one key per
 * person, the ladder one entry per person told any level (whatever the levels), so an alert needs
 * about one per person told anything. The characters bound below comes first for user ids longer
 * than about 17 characters. */
export const MAX_REMEMBERED_KEYS = 100_000;
/** Characters the watched sends may take in all (their ids, event keys and ladder people, as JSON):
 * about 2 MB of static data. The keys hold user ids, whose length the API decides: counted alone,
 * 100,000 keys of 2 KB ids would be 200 MB, saved with the workflow at every poll. */
export const MAX_WATCHED_CHARS = 2_000_000;

export interface WatchedSend {
	/** Start of the watch window, server time (ms): the latest of created_at, scheduled_at, sent_at. */
	from: number;
	/** Last status seen, from the list or a detail read. */
	status?: string;
	/** When the detail was last read (server time), unset before the first read. */
	readAt?: number;
	/** When the detail is due again (server time). */
	dueAt: number;
	/** Current re-read interval in minutes for a settled send (0 while it still moves). */
	backoffMinutes: number;
	/** Events already emitted for this send (see TriggerEvent.key), but the ladder's. */
	keys: string[];
	/** The people told a level of Not Opened in Time or Opened After Escalation (ladder.ts). */
	ladder?: StoredLadder;
}

/** A send met in the list: its id and created_at (server time), when the list gave one. */
export interface ListedSend {
	id: string;
	createdAt?: number;
}

export interface TriggerState {
	version: typeof STATE_VERSION;
	/** Server time of the first poll: sends created before it are not watched. */
	startedAt: number;
	listed: {
		/** Sends created before this (server time) are not read from the list again. */
		floor: number;
		/** The newest created_at seen (server time). */
		newestCreatedAt?: number;
		/** The sends listed at or above `floor`, and the latest ones without created_at, newest first. */
		recent: ListedSend[];
	};
	sends: Record<string, WatchedSend>;
}

type Listed = { id: string; created_at?: string | null };

/** The state after the first poll: the sends listed down to its time are the starting point (they
 * are not watched), and the list is read from that time on. */
export function initialState(listedSinceStart: Listed[], now: number): TriggerState {
	const state: TriggerState = {
		version: STATE_VERSION,
		startedAt: now,
		listed: { floor: now, recent: [] },
		sends: {},
	};
	rememberListed(state, listedSinceStart);
	return state;
}

/** True for a send met before: one in `recent` or a watched one. */
export function isKnown(state: TriggerState, id: string): boolean {
	return id in state.sends || state.listed.recent.some((send) => send.id === id);
}

/**
 * Where reading the list (newest first) ends: at a send created below the floor (`floor` alone
 * before the first poll has a state), or, for a send without created_at, at the first one met
 * before. Known sends above the floor are passed over, not stopped at: a late one may lie below.
 */
export function listingEndsAt(
	state: TriggerState | undefined,
	send: Listed,
	floor = state?.listed.floor,
): boolean {
	const createdAt = parseTime(send.created_at);
	if (createdAt === undefined) return state !== undefined && isKnown(state, send.id);
	return floor !== undefined && createdAt < floor;
}

/** Adds sends met for the first time (newest first) to `recent`, moves the floor up to the margin
 * below the newest created_at, and keeps `recent` within its bounds. */
export function rememberListed(state: TriggerState, fresh: Listed[]): void {
	const listed = state.listed;
	const met = fresh.map((send): ListedSend => {
		const createdAt = parseTime(send.created_at);
		return createdAt === undefined ? { id: send.id } : { id: send.id, createdAt };
	});
	for (const { createdAt } of met) {
		if (
			createdAt !== undefined &&
			(listed.newestCreatedAt === undefined || createdAt > listed.newestCreatedAt)
		)
			listed.newestCreatedAt = createdAt;
	}
	if (listed.newestCreatedAt !== undefined)
		listed.floor = Math.max(listed.floor, listed.newestCreatedAt - LIST_LAG_MARGIN_MS);
	const all = [...met, ...listed.recent];
	const timed = all.filter(
		(send) => send.createdAt !== undefined && send.createdAt >= listed.floor,
	);
	if (timed.length > MAX_RECENT_IDS) {
		// Too many sends within the margin: the floor rises past the oldest ones (they are then not
		// listed again either), so `recent` stays bounded and nothing is watched twice.
		const cutoff = timed.map((send) => send.createdAt as number).sort((a, b) => b - a)[
			MAX_RECENT_IDS - 1
		];
		listed.floor = cutoff + 1;
	}
	const untimed = all.filter((send) => send.createdAt === undefined).slice(0, UNTIMED_IDS);
	listed.recent = [
		...timed.filter((send) => (send.createdAt as number) >= listed.floor),
		...untimed,
	];
}

/** After a reading that could not reach the floor, reported at the poll before and out of reach
 * again: the floor moves up to the newest created_at seen, so the next reading needs only reach the
 * sends it read (the ones below, never read, are given up: the report named them). */
export function floorPastUnread(state: TriggerState): void {
	const listed = state.listed;
	listed.floor = Math.max(listed.floor, listed.newestCreatedAt ?? listed.floor);
	listed.recent = listed.recent.filter(
		(send) => send.createdAt === undefined || send.createdAt >= listed.floor,
	);
}

/** Starts watching a send found in the list: its window starts at its creation, or at its
 * scheduled time when the list shows one ahead (the detail read moves it on: plan.ts). */
export function watchSend(
	state: TriggerState,
	id: string,
	listed: { status?: string; created_at?: string | null; scheduled_at?: string | null },
	now: number,
): void {
	state.sends[id] = {
		from: Math.max(parseTime(listed.created_at) ?? now, parseTime(listed.scheduled_at) ?? 0),
		status: listed.status,
		dueAt: now,
		backoffMinutes: 0,
		keys: [],
	};
}

/** About what a watched send takes in the static data's JSON: its id, its keys and ladder people
 * (each quoted, with a comma), its ladder's groups and its other fields. */
function charsOf(id: string, send: WatchedSend): number {
	let chars = id.length + 120 + (send.status?.length ?? 0);
	for (const key of send.keys) chars += key.length + 3;
	for (const [group, people] of Object.entries(send.ladder ?? {})) {
		chars += group.length + 6;
		for (const userId of people) chars += userId.length + 3;
	}
	return chars;
}

/** Event keys and ladder people a watched send remembers. */
function entriesOf(send: WatchedSend): number {
	let entries = send.keys.length;
	for (const people of Object.values(send.ladder ?? {})) entries += people.length;
	return entries;
}

/** The order in which sends keep their place within the bounds: the sends that went out, newest
 * first, then the ones still scheduled, soonest first. So a send scheduled far ahead (its window
 * starts then) never pushes out a send already out, which may still be climbing its ladder. */
function keepOrder([idA, a]: [string, WatchedSend], [idB, b]: [string, WatchedSend]): number {
	const scheduledA = a.status === 'scheduled' ? 1 : 0;
	const scheduledB = b.status === 'scheduled' ? 1 : 0;
	if (scheduledA !== scheduledB) return scheduledA - scheduledB;
	const byTime = scheduledA ? a.from - b.from : b.from - a.from;
	return byTime || (idA < idB ? -1 : idA > idB ? 1 : 0);
}

/**
 * Forgets sends whose watch window has passed (`now` beyond `from` + window), then keeps the state
 * within its hard bounds, forgetting sends from the end of keepOrder. Returns the ids forgotten by
 * the bounds, before their window ended: their later events are lost, so the poll tells the
 * workflow (a stoppedWatching item) and n8n's log.
 */
export function ageOut(state: TriggerState, now: number, watchWindowMs: number): string[] {
	for (const [id, send] of Object.entries(state.sends)) {
		if (now - send.from > watchWindowMs) delete state.sends[id];
	}
	const forgottenEarly: string[] = [];
	const kept = Object.entries(state.sends).sort(keepOrder);
	let keys = 0;
	let chars = 0;
	for (const [index, [id, send]] of kept.entries()) {
		keys += entriesOf(send);
		chars += charsOf(id, send);
		if (index >= MAX_WATCHED_SENDS || keys > MAX_REMEMBERED_KEYS || chars > MAX_WATCHED_CHARS) {
			delete state.sends[id];
			forgottenEarly.push(id);
		}
	}
	return forgottenEarly;
}
