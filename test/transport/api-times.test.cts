/**
 * Times the API writes (helpers/time.ts): a time with `Z` or an offset is one instant whatever n8n's
 * host zone; a date and time without a zone is the wall time of a zone nobody named, so it is not
 * placed, in Berlin as in New York.
 */
import {
	isTimeWithoutZone,
	parseTime,
	readApiTime,
	timePrecisionMs,
} from '../../nodes/CompanionPush/common/time';
import { useHostTimeZone } from '../harness/index.cts';

const HOST_ZONES = ['Europe/Berlin', 'America/New_York', 'UTC'];

describe('times the API writes', () => {
	const hostZone = useHostTimeZone();

	test.each(HOST_ZONES)('host in %s: a time with its zone is the same instant', (zone) => {
		hostZone.set(zone);
		const instant = Date.UTC(2026, 10, 25, 18, 4, 18, 123);
		for (const text of [
			'2026-11-25T18:04:18.123Z',
			'2026-11-25T19:04:18.123+01:00',
			'2026-11-25T13:04:18.123-0500',
			'2026-11-25 18:04:18.123Z',
			'2026-11-25T18:04:18.123456Z',
		])
			expect([text, parseTime(text)]).toEqual([text, instant]);
		expect(parseTime('Wed, 25 Nov 2026 18:04:18 GMT')).toBe(instant - 123);
		expect(isTimeWithoutZone('2026-11-25T18:04:18.123Z')).toBe(false);
	});

	test.each(HOST_ZONES)(
		'host in %s: a date and time without a zone is not placed; its wall time is kept as if UTC',
		(zone) => {
			hostZone.set(zone);
			for (const text of ['2026-11-25T18:04:18.123', '2026-11-25 18:04:18', '2026-11-25']) {
				expect([text, parseTime(text)]).toEqual([text, undefined]);
				expect(isTimeWithoutZone(text)).toBe(true);
			}
			expect(readApiTime('2026-11-25T18:04:18.123')).toEqual({
				kind: 'withoutZone',
				wallMs: Date.UTC(2026, 10, 25, 18, 4, 18, 123),
			});
		},
	);

	test('no time, or a text that is not one: none', () => {
		for (const value of [undefined, null, '', '  ', 'yesterday', 1_795_629_858_123])
			expect(readApiTime(value)).toEqual({ kind: 'none' });
	});
});

describe('how precisely the API writes a time', () => {
	test('from the text: whole seconds, decimals, minutes; nothing for a time that places nothing', () => {
		expect(timePrecisionMs('2026-11-25T18:04:18Z')).toBe(1_000);
		expect(timePrecisionMs('2026-11-25T18:04:18.1+01:00')).toBe(100);
		expect(timePrecisionMs('2026-11-25T18:04:18.123Z')).toBe(1);
		expect(timePrecisionMs('2026-11-25T18:04:18.123456Z')).toBe(1);
		expect(timePrecisionMs('2026-11-25T18:04Z')).toBe(60_000);
		expect(timePrecisionMs('Wed, 25 Nov 2026 18:04:18 GMT')).toBe(1_000);
		expect(timePrecisionMs('2026-11-25T18:04:18.123')).toBeUndefined();
		expect(timePrecisionMs(undefined)).toBeUndefined();
	});
});
