/**
 * The digest's window record: its text round-trips, and a record the store could not read back, or a
 * text that is not a window's, is unreadable, never taken for another window.
 */
import {
	encodeWindow,
	readWindow,
	recordHolds,
} from '../../nodes/CompanionPush/actions/notification/digest/records';
import type { WindowRecord } from '../../nodes/CompanionPush/actions/notification/digest/records';
import { fitsRecord, LOST } from '../../nodes/CompanionPush/store';

const record: WindowRecord = {
	sendId: '65f1c2a9e4b0c81d2a3f4b5c',
	startSec: 1_795_000_000,
	endSec: 1_795_000_900,
	count: 12,
};

describe("the digest's window record", () => {
	test('a record round-trips through its text, with its mark of a replacement under way', () => {
		expect(readWindow(encodeWindow(record))).toEqual({ state: 'open', record, replacing: false });
		expect(readWindow(encodeWindow(record, true))).toEqual({
			state: 'open',
			record,
			replacing: true,
		});
		const textId = { ...record, sendId: 'notif_Ä-42' };
		expect(readWindow(encodeWindow(textId))).toMatchObject({ record: textId });
	});

	test('the longest id a window holds fits a record of the store', () => {
		expect(recordHolds('a'.repeat(64))).toBe(true);
		expect(fitsRecord(encodeWindow({ ...record, sendId: 'ä'.repeat(32) }, true))).toBe(true);
		expect(recordHolds('a'.repeat(65))).toBe(false);
		expect(recordHolds('')).toBe(false);
	});

	test('no record: none; a record the store could not read back, or another text: unreadable', () => {
		expect(readWindow(undefined)).toEqual({ state: 'none' });
		expect(readWindow(LOST)).toEqual({ state: 'unreadable' });
		for (const text of ['', 'used', '[1,2,3,4,5]', '["id",1,2,-3,0]', '["id",1,2,3,2]', '{'])
			expect(readWindow(text)).toEqual({ state: 'unreadable' });
	});
});
