import type { RowWrites } from './turns';

/*
 * Flags: names kept as one entry each, set or not, for many small facts (README.md beside this file,
 * "Flags"). A test cut short leaves the flags it tested set: a client reads a set flag as its safe
 * side (a slot counted, never one missed). Written as records are (keep 'all'): never trimmed.
 */

const flagEntry = (name: string) => JSON.stringify(['storeFlag', name]);

/** The flags of a row, as one work of a turn tests and writes them (Records builds on them). */
export class Flags {
	constructor(protected readonly writes: RowWrites) {}

	/** Whether each flag is set. */
	async hasFlags(names: string[]): Promise<boolean[]> {
		const entries = [...new Set(names.map(flagEntry))];
		if (entries.length === 0) return [];
		const probes = await this.writes.record(entries, 'all');
		await this.writes.remove([...probes]);
		return names.map((name) => !probes.has(flagEntry(name)));
	}

	async setFlags(names: string[]): Promise<void> {
		await this.writes.record([...new Set(names.map(flagEntry))], 'all');
	}

	async clearFlags(names: string[]): Promise<void> {
		await this.writes.remove([...new Set(names.map(flagEntry))]);
	}
}
