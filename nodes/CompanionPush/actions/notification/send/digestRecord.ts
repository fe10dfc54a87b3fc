import { createHash } from 'crypto';

import type { RowWrites } from '../../../store/turns';

/*
 * A digest's open window, kept in n8n's processed-data store: the node's own row (the one the
 * Idempotency Keys and Cap per Person use), read and written only in this process's turn under the
 * store's lock (neverTwice/keysTurn.ts, storeLock.ts).
 *
 * The store keeps hashes of values, so nothing can be read back but whether a value is there. A
 * window (its send's id, start, end and count of events) is written as bits: one value per 1-bit,
 * under a generation (0 to 63, in turn) whose marker says the record is whole. A reading records
 * every value it asks about (what comes back new was absent: a probe, taken out again). Writing a
 * new generation puts its bits and its marker in one write, then takes the old one out, so n8n
 * dying between two writes leaves either record whole, and the newer wins. A checksum over the
 * bits tells a record that a cut-short probe or n8n's trimming left unreadable: such a window is
 * never taken for another; the run says so and starts a new one.
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
	/** A record whose bits do not add up (a cut-short write, or entries n8n trimmed). */
	| { state: 'unreadable' }
	| {
			state: 'open';
			record: WindowRecord;
			generation: number;
			/** A run was replacing this window's send when it stopped: its replacement may exist. */
			replacing: boolean;
	  };

const GENERATIONS = 64;
/** The longest send id a record holds (the API's ids are short: 24 hex digits in the sandbox). */
export const MAX_SEND_ID_BYTES = 64;
/** start (5 bytes), end (5), count (4), id kind (1), id length (1). */
const HEADER_BYTES = 16;
const CHECKSUM_BYTES = 4;
const MOST_BITS = (HEADER_BYTES + MAX_SEND_ID_BYTES + CHECKSUM_BYTES) * 8;

/** The digest's writes trim nothing: the store's bound. */
export const DIGEST_ROW_ENTRIES = 'all';

const generationEntry = ({ userId, digestKey }: DigestScope, generation: number) =>
	JSON.stringify(['digestGeneration', userId, digestKey, generation]);
const bitEntry = ({ userId, digestKey }: DigestScope, generation: number, bit: number) =>
	JSON.stringify(['digestBit', userId, digestKey, generation, bit]);
/** Present while a run replaces the window's send: between its cancel and the new record. */
export const replacingEntry = ({ userId, digestKey }: DigestScope, generation: number) =>
	JSON.stringify(['digestReplacing', userId, digestKey, generation]);

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

function writeUint(bytes: number[], value: number, length: number) {
	for (let index = length - 1; index >= 0; index--)
		bytes.push(Math.floor(value / 2 ** (8 * index)) % 256);
}

function readUint(bytes: number[], offset: number, length: number): number {
	let value = 0;
	for (let index = 0; index < length; index++) value = value * 256 + bytes[offset + index];
	return value;
}

const checksum = (bytes: number[]) => [
	...createHash('sha256').update(Buffer.from(bytes)).digest().subarray(0, CHECKSUM_BYTES),
];

/** The id as bytes: hex digits two to a byte (kind 1), anything else as UTF-8 (kind 0). */
function idBytes(sendId: string): { kind: number; bytes: number[] } {
	if (/^(?:[0-9a-f]{2})+$/.test(sendId)) return { kind: 1, bytes: [...Buffer.from(sendId, 'hex')] };
	return { kind: 0, bytes: [...Buffer.from(sendId, 'utf8')] };
}

/** Whether a send id fits a record. */
export const recordHolds = (sendId: string) =>
	sendId.length > 0 && idBytes(sendId).bytes.length <= MAX_SEND_ID_BYTES;

export function encodeRecord(record: WindowRecord): number[] {
	const { kind, bytes: id } = idBytes(record.sendId);
	const bytes: number[] = [];
	writeUint(bytes, record.startSec, 5);
	writeUint(bytes, record.endSec, 5);
	writeUint(bytes, record.count, 4);
	bytes.push(kind, id.length, ...id);
	return [...bytes, ...checksum(bytes)];
}

/** The record the bytes hold, or undefined when their checksum does not add up. */
export function decodeRecord(bytes: number[]): WindowRecord | undefined {
	if (bytes.length < HEADER_BYTES + CHECKSUM_BYTES) return undefined;
	const idLength = bytes[HEADER_BYTES - 1];
	const end = HEADER_BYTES + idLength;
	if (idLength === 0 || bytes.length !== end + CHECKSUM_BYTES) return undefined;
	const body = bytes.slice(0, end);
	if (checksum(body).some((byte, index) => byte !== bytes[end + index])) return undefined;
	const id = Buffer.from(body.slice(HEADER_BYTES));
	const kind = bytes[HEADER_BYTES - 2];
	if (kind !== 0 && kind !== 1) return undefined;
	return {
		startSec: readUint(bytes, 0, 5),
		endSec: readUint(bytes, 5, 5),
		count: readUint(bytes, 10, 4),
		sendId: kind === 1 ? id.toString('hex') : id.toString('utf8'),
	};
}

const toBits = (bytes: number[]) =>
	bytes.flatMap((byte) => range(0, 8).map((bit) => (byte >> (7 - bit)) & 1));

function toBytes(bits: number[]): number[] {
	return range(0, bits.length / 8).map((index) =>
		bits.slice(index * 8, index * 8 + 8).reduce((byte, bit) => byte * 2 + bit, 0),
	);
}

/** The generation whose record counts: the only marker, or of two in a row the newer (the older's
 * removal was cut short); any other set of markers cannot be told apart. */
function currentGeneration(present: number[]): number | 'none' | 'unreadable' {
	if (present.length === 0) return 'none';
	if (present.length === 1) return present[0];
	if (present.length === 2) {
		const [a, b] = present;
		if ((a + 1) % GENERATIONS === b) return b;
		if ((b + 1) % GENERATIONS === a) return a;
	}
	return 'unreadable';
}

/** The windows of `scopes`, read in three writes whatever their number, and the probes to take
 * out again (`probes`: values that were absent, now present until removed). */
export async function readWindows(
	writes: RowWrites,
	scopes: DigestScope[],
): Promise<{ readings: WindowReading[]; probes: string[] }> {
	const probes: string[] = [];
	const probe = async (values: string[]) => {
		const absent = await writes.record(values, DIGEST_ROW_ENTRIES);
		probes.push(...values.filter((value) => absent.has(value)));
		return (value: string) => !absent.has(value);
	};
	const markers = scopes.map((scope) =>
		range(0, GENERATIONS).map((g) => generationEntry(scope, g)),
	);
	const markerPresent = await probe(markers.flat());
	const generations = markers.map((ofScope) =>
		currentGeneration(range(0, GENERATIONS).filter((g) => markerPresent(ofScope[g]))),
	);
	const headerBits = (scope: DigestScope, g: number) =>
		range(0, HEADER_BYTES * 8).map((bit) => bitEntry(scope, g, bit));
	const withRecord = scopes.flatMap((scope, index) => {
		const generation = generations[index];
		return typeof generation === 'number' ? [{ scope, index, generation }] : [];
	});
	const headerPresent = await probe(
		withRecord.flatMap(({ scope, generation }) => [
			...headerBits(scope, generation),
			replacingEntry(scope, generation),
		]),
	);
	const restBits = withRecord.map(({ scope, generation }) => {
		const header = headerBits(scope, generation).map((value) => (headerPresent(value) ? 1 : 0));
		const idLength = toBytes(header)[HEADER_BYTES - 1];
		const restLength = Math.min(idLength, MAX_SEND_ID_BYTES) + CHECKSUM_BYTES;
		return {
			header,
			rest: range(HEADER_BYTES * 8, (HEADER_BYTES + restLength) * 8).map((bit) =>
				bitEntry(scope, generation, bit),
			),
		};
	});
	const restPresent = await probe(restBits.flatMap(({ rest }) => rest));
	const readings: WindowReading[] = generations.map((generation) =>
		generation === 'none' ? { state: 'none' } : { state: 'unreadable' },
	);
	withRecord.forEach(({ scope, index, generation }, at) => {
		const { header, rest } = restBits[at];
		const bits = [...header, ...rest.map((value) => (restPresent(value) ? 1 : 0))];
		const record = decodeRecord(toBytes(bits));
		readings[index] = record
			? {
					state: 'open',
					record,
					generation,
					replacing: headerPresent(replacingEntry(scope, generation)),
				}
			: { state: 'unreadable' };
	});
	return { readings, probes };
}

/** Every value a scope's records may hold: what makes a fresh start of an unreadable one. */
export function allEntriesOf(scope: DigestScope): string[] {
	return range(0, GENERATIONS).flatMap((g) => [
		generationEntry(scope, g),
		replacingEntry(scope, g),
		...range(0, MOST_BITS).map((bit) => bitEntry(scope, g, bit)),
	]);
}

/** The generation a new record of a scope goes in, and what to clear first (bits a cut-short write
 * may have left there). */
export function nextGeneration(
	scope: DigestScope,
	reading: WindowReading,
): { generation: number; clearFirst: string[] } {
	if (reading.state === 'unreadable') return { generation: 0, clearFirst: allEntriesOf(scope) };
	const generation = reading.state === 'open' ? (reading.generation + 1) % GENERATIONS : 0;
	return {
		generation,
		clearFirst: [
			replacingEntry(scope, generation),
			...range(0, MOST_BITS).map((bit) => bitEntry(scope, generation, bit)),
		],
	};
}

/** The values of a record in a generation: its 1-bits and its marker, written in one write. */
export function recordEntries(
	scope: DigestScope,
	generation: number,
	record: WindowRecord,
): string[] {
	const bits = toBits(encodeRecord(record));
	return [
		...bits.flatMap((bit, index) => (bit ? [bitEntry(scope, generation, index)] : [])),
		generationEntry(scope, generation),
	];
}

/** The values of a generation's record to take out once a newer one is written (or the window
 * closed): its marker first in the same write, so a cut-short removal leaves no half record. */
export function oldRecordEntries(scope: DigestScope, generation: number): string[] {
	return [
		generationEntry(scope, generation),
		replacingEntry(scope, generation),
		...range(0, MOST_BITS).map((bit) => bitEntry(scope, generation, bit)),
	];
}
