import { deepCopy } from 'n8n-workflow';
import type { IDataObject } from 'n8n-workflow';

import { isStoredLadder, ladderFromKeys, storeLadder } from './ladder';
import { STATE_VERSION } from './state';
import type { ListedSend, TriggerState, WatchedSend } from './state';

/* The trigger's state as the node's static data stores it (state.ts says what it holds): read back
 * and checked, states of earlier versions brought up to this one, and written once a poll has fully
 * succeeded. */

const STATE_KEY = 'watch';

function isWatchedSend(value: unknown): value is WatchedSend {
	const send = value as WatchedSend;
	return (
		typeof send === 'object' &&
		send !== null &&
		typeof send.from === 'number' &&
		typeof send.dueAt === 'number' &&
		typeof send.backoffMinutes === 'number' &&
		Array.isArray(send.keys) &&
		(send.ladder === undefined || isStoredLadder(send.ladder))
	);
}

function isListedSend(value: unknown): value is ListedSend {
	const send = value as ListedSend;
	return (
		typeof send === 'object' &&
		send !== null &&
		typeof send.id === 'string' &&
		['number', 'undefined'].includes(typeof send.createdAt)
	);
}

/** The first stored version kept the newest ids and created_at only: its reading stopped there. */
interface StateVersion1 {
	version: 1;
	startedAt: number;
	newest: { ids: string[]; createdAt?: number };
	sends: Record<string, WatchedSend>;
}

/** A version 1 state as version 2, so an update of the package keeps the sends being watched: the
 * floor is the newest created_at it had seen (as far down as it had read), its ids are `recent`. */
function fromVersion1(stored: StateVersion1): unknown {
	if (!Array.isArray(stored.newest?.ids)) return undefined;
	return {
		version: 2,
		startedAt: stored.startedAt,
		listed: {
			floor: stored.newest.createdAt ?? stored.startedAt,
			newestCreatedAt: stored.newest.createdAt,
			recent: stored.newest.ids.map((id) => ({ id })),
		},
		sends: stored.sends,
	};
}

/** A version 2 state as version 3: its ladder keys, one per person and level, become one entry per
 * person (a level told stays told, so an update tells nobody again). */
function fromVersion2(stored: TriggerState): TriggerState {
	for (const send of Object.values(stored.sends ?? {})) {
		if (!Array.isArray(send?.keys)) continue;
		const { told, otherKeys } = ladderFromKeys(send.keys);
		send.keys = otherKeys;
		const ladder = storeLadder(told);
		if (ladder) send.ladder = ladder;
	}
	return { ...stored, version: STATE_VERSION };
}

/** A deep, plain copy of the stored state, or undefined before the first poll (or when the stored
 * data is not a state this version understands: the trigger then starts afresh). */
export function readState(staticData: IDataObject): TriggerState | undefined {
	const stored = staticData[STATE_KEY];
	if (typeof stored !== 'object' || stored === null) return undefined;
	let copy = deepCopy(stored) as TriggerState;
	if ((copy as unknown as StateVersion1).version === 1)
		copy = fromVersion1(copy as unknown as StateVersion1) as TriggerState;
	if ((copy as { version?: number } | undefined)?.version === 2) copy = fromVersion2(copy);
	if (
		copy?.version !== STATE_VERSION ||
		typeof copy.startedAt !== 'number' ||
		typeof copy.listed?.floor !== 'number' ||
		!Array.isArray(copy.listed.recent) ||
		!copy.listed.recent.every(isListedSend) ||
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
