/**
 * The digest's window record in a store that keeps only whether a value is there (as n8n's
 * processed-data store does): written as bits under a generation, read back by probes, and never
 * taken for another window when its bits do not add up.
 */
import {
	decodeRecord,
	encodeRecord,
	nextGeneration,
	oldRecordEntries,
	readWindows,
	recordEntries,
	recordHolds,
} from '../../nodes/CompanionPush/actions/notification/send/digestRecord';
import type {
	DigestScope,
	WindowRecord,
} from '../../nodes/CompanionPush/actions/notification/send/digestRecord';
import type { RowWrites } from '../../nodes/CompanionPush/store/turns';

/** A row of values, as RowWrites sees n8n's store: record answers what was absent. */
class Row implements RowWrites {
	readonly values = new Set<string>();
	async record(values: string[]): Promise<Set<string>> {
		const absent = new Set(values.filter((value) => !this.values.has(value)));
		for (const value of values) this.values.add(value);
		return absent;
	}
	async remove(values: string[]): Promise<void> {
		for (const value of values) this.values.delete(value);
	}
}

const scope: DigestScope = { userId: 'e533773a0ba45c0000000001', digestKey: 'order-updates' };
const other: DigestScope = { userId: 'e533773a0ba45c0000000002', digestKey: 'order-updates' };
const record: WindowRecord = {
	sendId: '65f1c2a9e4b0c81d2a3f4b5c',
	startSec: 1_795_000_000,
	endSec: 1_795_000_900,
	count: 12,
};

/** Reads the scopes and takes the probes out again, as a run does. */
async function read(row: Row, scopes: DigestScope[]) {
	const { readings, probes } = await readWindows(row, scopes);
	await row.remove(probes);
	return readings;
}

describe("the digest's window record", () => {
	test('a record round-trips through its bytes: hex ids two digits a byte, other ids as UTF-8', () => {
		expect(decodeRecord(encodeRecord(record))).toEqual(record);
		const textId = { ...record, sendId: 'notif_Ä-42' };
		expect(decodeRecord(encodeRecord(textId))).toEqual(textId);
		expect(encodeRecord(record).length).toBeLessThan(encodeRecord(textId).length + 12);
	});

	test('any one bit flipped is caught by the checksum', () => {
		const bytes = encodeRecord(record);
		for (let bit = 0; bit < bytes.length * 8; bit++) {
			const flipped = [...bytes];
			flipped[Math.floor(bit / 8)] ^= 1 << bit % 8;
			const decoded = decodeRecord(flipped);
			if (decoded) throw new Error(`bit ${bit} flipped still read as ${JSON.stringify(decoded)}`);
		}
	});

	test('ids longer than a record holds are refused, not cut', () => {
		expect(recordHolds('a'.repeat(64))).toBe(true);
		expect(recordHolds('a'.repeat(65))).toBe(false);
		expect(recordHolds('')).toBe(false);
	});

	test('written, read back by probes; the probes leave the row as it was; another scope reads nothing', async () => {
		const row = new Row();
		await row.record(recordEntries(scope, 0, record));
		const before = [...row.values].sort();
		const [mine, theirs] = await read(row, [scope, other]);
		expect(mine).toEqual({ state: 'open', record, generation: 0, replacing: false });
		expect(theirs).toEqual({ state: 'none' });
		expect([...row.values].sort()).toEqual(before);
	});

	test('a newer generation written before the older was taken out (n8n died between): the newer counts', async () => {
		const row = new Row();
		await row.record(recordEntries(scope, 63, record));
		const newer = { ...record, sendId: '65f1c2a9e4b0c81d2a3f4b5d', count: 13 };
		const { generation } = nextGeneration(scope, {
			state: 'open',
			record,
			generation: 63,
			replacing: false,
		});
		expect(generation).toBe(0);
		await row.record(recordEntries(scope, generation, newer));
		expect((await read(row, [scope]))[0]).toMatchObject({ state: 'open', record: newer });
		await row.remove(oldRecordEntries(scope, 63));
		expect((await read(row, [scope]))[0]).toMatchObject({ state: 'open', record: newer });
	});

	test('a bit lost (n8n trimmed the row) or a probe left in (n8n died mid-read): unreadable, never another window', async () => {
		const row = new Row();
		const entries = recordEntries(scope, 5, record);
		await row.record(entries.filter((_, index) => index !== 3));
		expect((await read(row, [scope]))[0]).toEqual({ state: 'unreadable' });

		const cutShort = new Row();
		await cutShort.record(recordEntries(scope, 5, record));
		await readWindows(cutShort, [scope]); // the probes stay
		expect((await read(cutShort, [scope]))[0]).toEqual({ state: 'unreadable' });
		// A fresh start clears every value the scope may hold, then writes generation 0.
		const fresh = nextGeneration(scope, { state: 'unreadable' });
		await cutShort.remove(fresh.clearFirst);
		await cutShort.record(recordEntries(scope, fresh.generation, record));
		expect((await read(cutShort, [scope]))[0]).toMatchObject({ state: 'open', record });
	});

	test('markers of two generations not in a row cannot be told apart: unreadable', async () => {
		const row = new Row();
		await row.record(recordEntries(scope, 2, record));
		await row.record(recordEntries(scope, 9, { ...record, count: 3 }));
		expect((await read(row, [scope]))[0]).toEqual({ state: 'unreadable' });
	});
});
