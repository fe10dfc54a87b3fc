import type { RowWrites } from './turns';

/*
 * Flags: names kept as one entry each, set or not. A record (records.ts) costs tens of entries and
 * a read probes every bit of it; a flag costs one entry, and a test of it one probe. n8n's store
 * takes each value out by a scan of the whole row, so a client counting many small facts (Cap per
 * Person's slots) keeps them as flags and the row stays short.
 *
 * - Test: record the flags' entries (those that come back new were not set: probes), then take the
 *   probes out in one write. Cut short in between (n8n stopping), the flags tested stay set: a
 *   client reads a set flag as the safe side (a slot counted, never one missed).
 * - Set: record the entries, in one write. Clear: take them out, in one write.
 * Flags are written as records are (keep 'all'): a row holding them is never trimmed, up to its bound.
 */

const flagEntry = (name: string) => JSON.stringify(['storeFlag', name]);

export class Flags {
	constructor(private readonly writes: RowWrites) {}

	/** Whether each flag is set. */
	async has(names: string[]): Promise<boolean[]> {
		const entries = [...new Set(names.map(flagEntry))];
		if (entries.length === 0) return [];
		const probes = await this.writes.record(entries, 'all');
		await this.writes.remove([...probes]);
		return names.map((name) => !probes.has(flagEntry(name)));
	}

	async set(names: string[]): Promise<void> {
		await this.writes.record([...new Set(names.map(flagEntry))], 'all');
	}

	async clear(names: string[]): Promise<void> {
		await this.writes.remove([...new Set(names.map(flagEntry))]);
	}
}
