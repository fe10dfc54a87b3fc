import type { IDataObject } from 'n8n-workflow';

/**
 * What the trigger remembers between polls, in the node's static data. Plain JSON, bounded:
 * - `newest`: where the list of sends was read up to (the newest sends' ids and created_at), so
 *   the next poll pages only through sends created since;
 * - `sends`: the sends being watched, each with the keys of the events already emitted for it.
 *   A send is forgotten once its watch window has passed; from then on it is never read again
 *   (it is older than `newest`), so its keys can go with it.
 * Hard bounds: MAX_WATCHED_SENDS sends and MAX_REMEMBERED_KEYS keys in all (beyond them the oldest
 * sends are forgotten first, even before their window ends), NEWEST_IDS ids in `newest`.
 */

export const STATE_VERSION = 1;
/** Ids kept of the newest sends seen, so the list stops at them even if created_at is missing. */
export const NEWEST_IDS = 20;
export const MAX_WATCHED_SENDS = 500;
export const MAX_REMEMBERED_KEYS = 10_000;

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
	/** Events already emitted for this send: `status:<state>`, `<userId>:<deliveryIndex>:<state>`. */
	keys: string[];
}

export interface TriggerState {
	version: typeof STATE_VERSION;
	/** Server time of the first poll: sends created before it are not watched. */
	startedAt: number;
	newest: { ids: string[]; createdAt?: number };
	sends: Record<string, WatchedSend>;
}

const STATE_KEY = 'watch';

function isWatchedSend(value: unknown): value is WatchedSend {
	const send = value as WatchedSend;
	return (
		typeof send === 'object' &&
		send !== null &&
		typeof send.from === 'number' &&
		typeof send.dueAt === 'number' &&
		typeof send.backoffMinutes === 'number' &&
		Array.isArray(send.keys)
	);
}

/** A deep, plain copy of the stored state, or undefined before the first poll (or when the stored
 * data is not a state this version understands: the trigger then starts afresh). */
export function readState(staticData: IDataObject): TriggerState | undefined {
	const stored = staticData[STATE_KEY];
	if (typeof stored !== 'object' || stored === null) return undefined;
	const copy = JSON.parse(JSON.stringify(stored)) as TriggerState;
	if (
		copy.version !== STATE_VERSION ||
		typeof copy.startedAt !== 'number' ||
		!Array.isArray(copy.newest?.ids) ||
		typeof copy.sends !== 'object' ||
		copy.sends === null ||
		!Object.values(copy.sends).every(isWatchedSend)
	) {
		return undefined;
	}
	return copy;
}

/** Replaces the stored state in one assignment: called only once a poll has fully succeeded. */
export function writeState(staticData: IDataObject, state: TriggerState): void {
	staticData[STATE_KEY] = state as unknown as IDataObject;
}

export function parseTime(value: unknown): number | undefined {
	if (typeof value !== 'string' || value === '') return undefined;
	const ms = Date.parse(value);
	return Number.isNaN(ms) ? undefined : ms;
}

/** The state after the first poll: the newest sends listed mark the starting point. */
export function initialState(newestListed: Array<{ id: string; created_at?: string | null }>, now: number): TriggerState {
	return {
		version: STATE_VERSION,
		startedAt: now,
		newest: {
			ids: newestListed.slice(0, NEWEST_IDS).map((send) => send.id),
			createdAt: parseTime(newestListed[0]?.created_at),
		},
		sends: {},
	};
}

/** True for a listed send the trigger has already seen: one of the newest ids, a watched send, or
 * a send created before the newest one seen. The list is newest first, so paging stops there. */
export function alreadySeen(state: TriggerState, send: { id: string; created_at?: string | null }): boolean {
	if (state.newest.ids.includes(send.id) || send.id in state.sends) return true;
	const createdAt = parseTime(send.created_at);
	return createdAt !== undefined && state.newest.createdAt !== undefined && createdAt < state.newest.createdAt;
}

/** Moves the starting point of the next listing to the sends just listed (newest first). */
export function advanceNewest(state: TriggerState, listedNewestFirst: Array<{ id: string; created_at?: string | null }>): void {
	if (listedNewestFirst.length === 0) return;
	state.newest.ids = [...listedNewestFirst.map((send) => send.id), ...state.newest.ids].slice(0, NEWEST_IDS);
	const createdAt = parseTime(listedNewestFirst[0].created_at);
	if (createdAt !== undefined && (state.newest.createdAt === undefined || createdAt > state.newest.createdAt)) {
		state.newest.createdAt = createdAt;
	}
}

/** Starts watching a send found in the list. */
export function watchSend(state: TriggerState, id: string, listed: { status?: string; created_at?: string | null }, now: number): void {
	state.sends[id] = {
		from: parseTime(listed.created_at) ?? now,
		status: listed.status,
		dueAt: now,
		backoffMinutes: 0,
		keys: [],
	};
}

/**
 * Forgets sends whose watch window has passed (`now` beyond `from` + window), then keeps the state
 * within its hard bounds by forgetting the oldest sends first. Returns the ids forgotten by the
 * bounds, before their window ended: their later events are lost, so the poll says so in n8n's log.
 */
export function ageOut(state: TriggerState, now: number, watchWindowMs: number): string[] {
	for (const [id, send] of Object.entries(state.sends)) {
		if (now - send.from > watchWindowMs) delete state.sends[id];
	}
	const forgottenEarly: string[] = [];
	const newestFirst = Object.entries(state.sends).sort(([, a], [, b]) => b.from - a.from);
	let keys = 0;
	for (const [index, [id, send]] of newestFirst.entries()) {
		keys += send.keys.length;
		if (index >= MAX_WATCHED_SENDS || keys > MAX_REMEMBERED_KEYS) {
			delete state.sends[id];
			forgottenEarly.push(id);
		}
	}
	return forgottenEarly;
}
