/**
 * Get Report's time-to-open parts without n8n or the sandbox, for what the sandbox cannot show: a
 * dispatch placed but an open written without a zone (and the reverse), an open before the dispatch,
 * an open of a send without `sent_at`, a read without a Date header, opens past the last bucket, and
 * the deadlines' parsing.
 */
import { DeliveryReport } from '../../nodes/CompanionPush/report/deliveryReport';
import {
	MAX_ESCALATION_LEVELS,
	parseEscalationDeadlines,
} from '../../nodes/CompanionPush/report/escalationDeadlines';
import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import { MAX_BUCKETS, timeToOpenSpread } from '../../nodes/CompanionPush/report/timeToOpen';

const DISPATCH = '2026-11-25T10:00:00.000Z';
const AT = (minutes: number) => new Date(Date.parse(DISPATCH) + minutes * MINUTE_MS).toISOString();

/** One send to one user with one phone, opened at `openedAt` (or not), read at `readAtMs`. */
function oneUserReport(sentAt: string | null, openedAt: string | null, readAtMs?: number) {
	const report = new DeliveryReport({ bucketMinutes: 5, escalationMinutes: [15, 30] });
	report.add(
		{
			notification: { id: 'n1', status: 'sent', sent_at: sentAt },
			deliveries: [
				{ user_id: 'u1', status: openedAt === null ? 'sent' : 'opened', opened_at: openedAt },
			],
		},
		readAtMs,
	);
	const [row] = report.userRows();
	return { row, totals: report.totals() };
}

describe('Get Report times', () => {
	test('a time that places nothing, on either end, makes the time to open unknown', () => {
		const placed = oneUserReport(DISPATCH, AT(20));
		expect(placed.row).toMatchObject({
			secondsToOpen: 1200,
			timeToOpenUnknown: false,
			escalationLevels: [1],
		});
		for (const [sentAt, openedAt] of [
			[DISPATCH, '2026-11-25T10:20:00.000'], // the open without a zone
			['2026-11-25T10:00:00', AT(20)], // the dispatch without a zone
			[DISPATCH, AT(-1)], // opened before the dispatch: two clocks that disagree
			[null, AT(20)], // opened, but the send shows no dispatch
		]) {
			const { row, totals } = oneUserReport(sentAt, openedAt);
			expect([sentAt, openedAt, row]).toEqual([
				sentAt,
				openedAt,
				expect.objectContaining({
					secondsToOpen: null,
					timeToOpenUnknown: true,
					escalationLevels: null,
				}),
			]);
			expect(totals.timeToOpen).toMatchObject({ opened: 1, timed: 0, timeUnknown: 1 });
			expect(totals.escalation).toMatchObject({ unknown: 1 });
		}
	});

	test('several phones: one open whose time places nothing makes the first open unknown', () => {
		const report = new DeliveryReport({ bucketMinutes: 5, escalationMinutes: [] });
		report.add({
			notification: { id: 'n1', status: 'sent', sent_at: DISPATCH },
			deliveries: [
				{ user_id: 'u1', status: 'opened', opened_at: AT(20) },
				{ user_id: 'u1', status: 'opened', opened_at: '2026-11-25T10:05:00' },
			],
		});
		expect(report.userRows()[0]).toMatchObject({ secondsToOpen: null, timeToOpenUnknown: true });
	});

	test('never opened: the deadlines passed by the read, on the API clock; unknown without a Date header', () => {
		expect(oneUserReport(DISPATCH, null, Date.parse(AT(30))).row.escalationLevels).toEqual([1, 2]);
		expect(oneUserReport(DISPATCH, null, Date.parse(AT(29.99))).row.escalationLevels).toEqual([1]);
		expect(oneUserReport(DISPATCH, null, undefined).row.escalationLevels).toBeNull();
		// Not dispatched yet: no deadline has come.
		expect(oneUserReport(null, null, Date.parse(AT(60))).row.escalationLevels).toEqual([]);
	});

	test('opens past the last bucket are counted in it, marked "and later"', () => {
		const bucketMs = MINUTE_MS;
		const spread = timeToOpenSpread(
			Float64Array.from([0, bucketMs * (MAX_BUCKETS - 1), bucketMs * MAX_BUCKETS * 3]),
			1,
		);
		expect(spread.opensPerBucket).toHaveLength(MAX_BUCKETS);
		expect(spread.opensPerBucket[0]).toEqual({
			fromMinute: 0,
			toMinute: 1,
			opened: 1,
			openedSoFar: 1,
		});
		expect(spread.opensPerBucket[MAX_BUCKETS - 1]).toEqual({
			fromMinute: MAX_BUCKETS - 1,
			toMinute: null,
			opened: 2,
			openedSoFar: 3,
		});
		expect(spread.medianSeconds).toBe((MAX_BUCKETS - 1) * 60);
	});

	test('deadlines: text or a list, positive and increasing, at most 10', () => {
		expect(parseEscalationDeadlines(' 15, 30;45 ')).toEqual([15, 30, 45]);
		expect(parseEscalationDeadlines([1, '2.5', 3])).toEqual([1, 2.5, 3]);
		expect(parseEscalationDeadlines('')).toEqual([]);
		expect(parseEscalationDeadlines(undefined)).toEqual([]);
		expect(() => parseEscalationDeadlines('5, -1')).toThrow(
			'must be positive numbers of minutes (got "-1")',
		);
		expect(() => parseEscalationDeadlines([5, 5])).toThrow(
			'must grow from one level to the next (got 5 after 5)',
		);
		expect(() => parseEscalationDeadlines({ minutes: 5 })).toThrow(
			'must be minutes separated by commas',
		);
		const most = Array.from({ length: MAX_ESCALATION_LEVELS }, (_, index) => index + 1);
		expect(parseEscalationDeadlines(most)).toHaveLength(MAX_ESCALATION_LEVELS);
		expect(() => parseEscalationDeadlines([...most, 99])).toThrow('may hold at most 10 deadlines');
	});
});
