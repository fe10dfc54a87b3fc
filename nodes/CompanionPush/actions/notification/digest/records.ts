import { LOST } from '../../../store';
import type { RecordRead } from '../../../store';

/*
 * A digest's open window, kept as a record of the store (store/): in the node's own row, read and
 * written only in this process's turn on it, under the store's lock.
 */

/** The open window of one person and digest key. */
export interface WindowRecord {
	/** The scheduled send that carries the window's events now. */
	sendId: string;
	/** When the window started and ends (its send's `scheduled_at`), in whole seconds of the epoch. */
	startSec: number;
	endSec: number;
	/** Events the send carries. */
	count: number;
}

/** A person and a digest key: events of one scope within a window become one push. */
export interface DigestScope {
	userId: string;
	digestKey: string;
}

/** What a reading found for a scope. */
export type WindowReading =
	| { state: 'none' }
	/** A record the store could not read back (a write cut short, n8n stopped mid-read). */
	| { state: 'unreadable' }
	| {
			state: 'open';
			record: WindowRecord;
			/** A run canceled this window's send and did not write what came of its replacement: that
			 * replacement may exist. */
			replacing: boolean;
	  };

/** The longest send id a record holds (the API's ids are short: 24 hex digits in the sandbox). */
export const MAX_SEND_ID_BYTES = 64;

/** Whether a send id fits a record. */
export const recordHolds = (sendId: string) =>
	sendId.length > 0 && Buffer.byteLength(sendId, 'utf8') <= MAX_SEND_ID_BYTES;

/** The record's name of a scope's window. */
export const windowName = ({ userId, digestKey }: DigestScope) =>
	JSON.stringify(['digestWindow', userId, digestKey]);

/** The record's name of an event whose Idempotency Key a run put in a digest. */
export const eventName = (key: string, { userId, digestKey }: DigestScope) =>
	JSON.stringify(['digestEvent', key, userId, digestKey]);

/** The text of a window's record; `replacing` once a run canceled its send, until it writes what came
 * of the replacement (which may leave from then on). */
export function encodeWindow(record: WindowRecord, replacing = false): string {
	const { sendId, startSec, endSec, count } = record;
	return JSON.stringify([sendId, startSec, endSec, count, replacing ? 1 : 0]);
}

const isCount = (value: unknown): value is number =>
	typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** What a window's record says: a text that is not a window's is unreadable. */
export function readWindow(read: RecordRead): WindowReading {
	if (read === undefined) return { state: 'none' };
	if (read === LOST) return { state: 'unreadable' };
	let parsed: unknown;
	try {
		parsed = JSON.parse(read);
	} catch {
		return { state: 'unreadable' };
	}
	if (!Array.isArray(parsed) || parsed.length !== 5) return { state: 'unreadable' };
	const [sendId, startSec, endSec, count, replacing] = parsed as unknown[];
	if (typeof sendId !== 'string' || !recordHolds(sendId)) return { state: 'unreadable' };
	if (![startSec, endSec, count].every(isCount) || (replacing !== 0 && replacing !== 1))
		return { state: 'unreadable' };
	return {
		state: 'open',
		record: {
			sendId,
			startSec: startSec as number,
			endSec: endSec as number,
			count: count as number,
		},
		replacing: replacing === 1,
	};
}
