/**
 * The delivery time of one zone (helpers/deliveryTime.ts), on the edges the engine tests do not
 * reach: a local time inside a spring-forward gap, quiet hours within one day, their exact ends.
 */
import {
	checkTimeZone,
	deliveryTimeIn,
	parseQuietHours,
	parseTimeOfDay,
	sameZoneKey,
} from '../../nodes/CompanionPush/input/deliveryTime';
import type { DeliveryRule } from '../../nodes/CompanionPush/input/deliveryTime';

function at(
	zone: string,
	rule: { localTime?: string; quietHours?: string; day?: string },
	now: string,
) {
	const parsed: DeliveryRule = { day: rule.day };
	if (rule.localTime)
		parsed.localTime = parseTimeOfDay(rule.localTime) as DeliveryRule['localTime'];
	if (rule.quietHours)
		parsed.quietHours = parseQuietHours(rule.quietHours) as DeliveryRule['quietHours'];
	return deliveryTimeIn(zone, parsed, Date.parse(now));
}

describe('deliveryTimeIn', () => {
	test('02:30 on the spring-forward day in Madrid (a wall time that does not exist): 03:30 summer time, the same instant as 02:30 winter time would be', () => {
		expect(at('Europe/Madrid', { localTime: '02:30' }, '2026-03-29T00:00:00Z')).toMatchObject({
			scheduledAt: '2026-03-29T03:30:00+02:00',
			scheduledAtUtc: '2026-03-29T01:30:00.000Z',
		});
	});

	test('quiet hours within one day (13:00-15:00): inside, moved to 15:00 the same day; at 15:00, now', () => {
		expect(at('Asia/Manila', { quietHours: '13:00-15:00' }, '2026-05-04T05:30:00Z')).toMatchObject({
			scheduledAt: '2026-05-04T15:00:00+08:00',
			movedByQuietHours: true,
		});
		const atTheEnd = at('Asia/Manila', { quietHours: '13:00-15:00' }, '2026-05-04T07:00:00Z');
		expect(atTheEnd).toEqual({ timeZone: 'Asia/Manila', localTime: '2026-05-04 15:00' });
	});

	test('quiet hours over midnight: 22:00 is inside (to 07:00 the next day), 21:59 is not', () => {
		expect(at('UTC', { quietHours: '22:00-07:00' }, '2026-05-04T22:00:00Z')).toMatchObject({
			scheduledAt: '2026-05-05T07:00:00Z',
		});
		expect(at('UTC', { quietHours: '22:00-07:00' }, '2026-05-04T21:59:00Z')).not.toHaveProperty(
			'scheduledAt',
		);
	});

	test('a local time exactly now goes to the next day; one a minute ahead stays today', () => {
		expect(at('UTC', { localTime: '09:00' }, '2026-05-04T09:00:00Z')).toMatchObject({
			scheduledAt: '2026-05-05T09:00:00Z',
			movedToNextDay: true,
		});
		expect(at('UTC', { localTime: '09:01' }, '2026-05-04T09:00:00Z')).toMatchObject({
			scheduledAt: '2026-05-04T09:01:00Z',
		});
	});
});

describe('zone names', () => {
	test('a zone is kept as the person wrote it (trimmed), and two names of one zone have one key', () => {
		expect(checkTimeZone(' Asia/Kolkata ')).toEqual({ zone: 'Asia/Kolkata' });
		expect(checkTimeZone('Asia/Kathmandu')).toEqual({ zone: 'Asia/Kathmandu' });
		expect(sameZoneKey('Asia/Kolkata')).toBe(sameZoneKey('Asia/Calcutta'));
		expect(sameZoneKey('Asia/Kathmandu')).toBe(sameZoneKey('Asia/Katmandu'));
		expect(sameZoneKey('europe/madrid')).toBe(sameZoneKey('Europe/Madrid'));
		expect(sameZoneKey('Asia/Kolkata')).not.toBe(sameZoneKey('Asia/Kathmandu'));
	});
});
