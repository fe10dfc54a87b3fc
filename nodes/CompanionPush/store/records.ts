import { createHash } from 'crypto';

import { Flags } from './flags';

/*
 * Records in a store that keeps only hashes (README.md beside this file, "Records in a store of
 * hashes"): a record's text is written as bits, one value per 1-bit, under one of three generations
 * with a marker each. Cut short anywhere, a read finds the old record or the new one, whole, or
 * LOST; a checksum over the name, the generation and the text makes bits that do not add up LOST,
 * never another value.
 */

/** A record that cannot be read back: a read or write of it was cut short (n8n stopped), or its
 * entries were lost. */
export const LOST = Symbol('lost record');
export type RecordRead = string | undefined | typeof LOST;

const GENERATIONS = 3;
/** The longest text of a record, in UTF-8 bytes. */
export const MAX_RECORD_BYTES = 160;
const LENGTH_BITS = 16;
const CHECKSUM_BYTES = 4;
const MOST_BITS = LENGTH_BITS + (MAX_RECORD_BYTES + CHECKSUM_BYTES) * 8;

const markerEntry = (name: string, generation: number) =>
	JSON.stringify(['storeRecord', name, generation]);
const bitEntry = (name: string, generation: number, bit: number) =>
	JSON.stringify(['storeBit', name, generation, bit]);

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

function checksum(name: string, generation: number, text: Buffer): Buffer {
	return createHash('sha256')
		.update(JSON.stringify([name, generation]))
		.update(text)
		.digest()
		.subarray(0, CHECKSUM_BYTES);
}

/** The bits of a record's text: its length, the text, the checksum. */
function bitsOf(name: string, generation: number, value: string): number[] {
	const text = Buffer.from(value, 'utf8');
	const bytes = [text.length >> 8, text.length & 255, ...text, ...checksum(name, generation, text)];
	return bytes.flatMap((byte) => range(0, 8).map((bit) => (byte >> (7 - bit)) & 1));
}

function bytesOf(bits: number[]): Buffer {
	return Buffer.from(
		range(0, bits.length / 8).map((index) =>
			bits.slice(index * 8, index * 8 + 8).reduce((byte, bit) => byte * 2 + bit, 0),
		),
	);
}

/** The generation whose record counts, of those whose marker is there. */
function currentGeneration(present: number[]): number | undefined | typeof LOST {
	if (present.length === 0) return undefined;
	if (present.length === 1) return present[0];
	if (present.length === 2) {
		const [a, b] = present;
		return (a + 1) % GENERATIONS === b ? b : a;
	}
	return LOST;
}

/** What a turn knows of a record. */
type Known =
	| { state: 'absent' }
	| { state: 'lost' }
	| {
			state: 'present';
			value: string;
			generation: number;
			/** Its entries, to take out. */
			entries: string[];
			/** An older generation a cut-short write left. */
			older?: number;
	  };

/** Every entry a generation may hold. */
const allOf = (name: string, generation: number) => [
	markerEntry(name, generation),
	...range(0, MOST_BITS).map((bit) => bitEntry(name, generation, bit)),
];

/** Whether a text fits a record. */
export const fitsRecord = (value: string) => Buffer.byteLength(value, 'utf8') <= MAX_RECORD_BYTES;

/** The records (and flags) of one node's row, as one work of a turn reads and writes them. */
export class Records extends Flags {
	private readonly known = new Map<string, Known>();

	/** Records `values`: those that were there. The others, added by this probe, go in `added`. */
	private async probe(values: string[], added: string[]): Promise<Set<string>> {
		const absent = await this.writes.record(values, 'all');
		added.push(...values.filter((value) => absent.has(value)));
		return new Set(values.filter((value) => !absent.has(value)));
	}

	/** The records of `names`: each its text, undefined when there is none, or LOST. */
	async read(names: string[]): Promise<RecordRead[]> {
		const unknown = [...new Set(names.filter((name) => !this.known.has(name)))];
		if (unknown.length > 0) await this.readAnew(unknown);
		return names.map((name) => {
			const known = this.known.get(name)!;
			if (known.state === 'present') return known.value;
			return known.state === 'lost' ? LOST : undefined;
		});
	}

	private async readAnew(names: string[]): Promise<void> {
		const added: string[] = [];
		const markers = names.map((name) => range(0, GENERATIONS).map((g) => markerEntry(name, g)));
		const markerThere = await this.probe(markers.flat(), added);
		const found = names.map((name, index) => {
			const present = range(0, GENERATIONS).filter((g) => markerThere.has(markers[index][g]));
			const generation = currentGeneration(present);
			const older = present.find((g) => g !== generation);
			return { name, generation, older };
		});
		const withRecord = found.flatMap(({ name, generation, older }) =>
			typeof generation === 'number' ? [{ name, generation, older }] : [],
		);
		const lengthBits = (name: string, g: number) =>
			range(0, LENGTH_BITS).map((bit) => bitEntry(name, g, bit));
		const lengthThere = await this.probe(
			withRecord.flatMap(({ name, generation }) => lengthBits(name, generation)),
			added,
		);
		const rest = withRecord.map(({ name, generation }) => {
			const length = lengthBits(name, generation).reduce(
				(sum, value) => sum * 2 + (lengthThere.has(value) ? 1 : 0),
				0,
			);
			const restBits = LENGTH_BITS + (Math.min(length, MAX_RECORD_BYTES) + CHECKSUM_BYTES) * 8;
			return {
				length,
				bits: range(0, restBits).map((bit) => bitEntry(name, generation, bit)),
			};
		});
		const restThere = await this.probe(
			rest.flatMap(({ bits }) => bits.slice(LENGTH_BITS)),
			added,
		);
		await this.writes.remove(added);
		for (const { name, generation } of found) {
			if (generation === undefined) this.known.set(name, { state: 'absent' });
			if (generation === LOST) this.known.set(name, { state: 'lost' });
		}
		withRecord.forEach(({ name, generation, older }, index) => {
			const { length, bits } = rest[index];
			const isThere = (value: string) => lengthThere.has(value) || restThere.has(value);
			const bytes = bytesOf(bits.map((value) => (isThere(value) ? 1 : 0)));
			const text = bytes.subarray(2, 2 + length);
			const sum = bytes.subarray(2 + length);
			if (length > MAX_RECORD_BYTES || !checksum(name, generation, text).equals(sum)) {
				this.known.set(name, { state: 'lost' });
				return;
			}
			this.known.set(name, {
				state: 'present',
				value: text.toString('utf8'),
				generation,
				entries: [markerEntry(name, generation), ...bits.filter(isThere)],
				...(older !== undefined ? { older } : {}),
			});
		});
	}

	/** Writes records (name and text); each text fits a record (`fitsRecord`). */
	async write(records: Array<[name: string, value: string]>): Promise<void> {
		if (records.some(([, value]) => !fitsRecord(value)))
			throw new Error(`a record of the store holds at most ${MAX_RECORD_BYTES} bytes`);
		// One text per name: the last one given.
		records = [...new Map(records)];
		await this.read(records.map(([name]) => name));
		const clearFirst: string[] = [];
		const written: string[] = [];
		const takeOut: string[] = [];
		const next = new Map<string, Known>();
		for (const [name, value] of records) {
			const known = this.known.get(name)!;
			let generation = 0;
			if (known.state === 'lost')
				clearFirst.push(...range(0, GENERATIONS).flatMap((g) => allOf(name, g)));
			if (known.state === 'present') {
				if (known.older !== undefined) clearFirst.push(...allOf(name, known.older));
				generation = (known.generation + 1) % GENERATIONS;
				takeOut.push(...known.entries);
			}
			const bits = bitsOf(name, generation, value);
			// The marker last: it says the bits before it are whole.
			const entries = [
				...bits.flatMap((bit, index) => (bit ? [bitEntry(name, generation, index)] : [])),
				markerEntry(name, generation),
			];
			written.push(...entries);
			next.set(name, { state: 'present', value, generation, entries });
		}
		// Any state this leaves between two writes reads as the old record or the new one.
		await this.writes.remove(clearFirst);
		await this.writes.record(written, 'all');
		await this.writes.remove(takeOut);
		for (const [name, known] of next) this.known.set(name, known);
	}

	/** Whether each value is in the row as itself (a mark the package wrote before it kept records):
	 * probed, and the probes taken out in the next write. A probe cut short leaves the value: it then
	 * reads as marked (the safe side for a mark that says "used"). */
	async readOldMarks(values: string[]): Promise<boolean[]> {
		if (values.length === 0) return [];
		const added: string[] = [];
		const there = await this.probe(values, added);
		await this.writes.remove(added);
		return values.map((value) => there.has(value));
	}

	/** Deletes records. */
	async delete(names: string[]): Promise<void> {
		await this.read(names);
		const takeOut = [...new Set(names)].flatMap((name) => {
			const known = this.known.get(name)!;
			if (known.state === 'lost') return range(0, GENERATIONS).flatMap((g) => allOf(name, g));
			if (known.state === 'absent') return [];
			return [...known.entries, ...(known.older !== undefined ? allOf(name, known.older) : [])];
		});
		await this.writes.remove(takeOut);
		for (const name of names) this.known.set(name, { state: 'absent' });
	}
}
