/**
 * The trigger with an API that writes its times without a zone (here as UTC wall times, no `Z`).
 * Read in n8n's host zone, every send made in Berlin looked older than the trigger's starting
 * point, so it watched nothing; in New York each looked hours newer, and a deadline counted from
 * `sent_at` moved by hours. Now such a time places nothing: the list is read by ids down to the
 * first send met before, every event read from statuses and deliveries is reported, and Not Opened
 * in Time, which needs `sent_at` on the API's clock, is not told; n8n's log says so.
 */
import type { IDataObject } from 'n8n-workflow';

import { MINUTE, useHostTimeZone, useTriggerFixtures } from '../harness/index.cts';

const HOST_ZONES = ['Europe/Berlin', 'America/New_York'];
const EVENTS = {
	events: ['notificationSettled', 'deliveryOpened', 'notOpenedInTime'],
	openDeadline: 20,
};
const brief = (items: IDataObject[]) =>
	items.map((item) => [item.event, item.notificationId, item.userId ?? null]);

describe('Companion Push Trigger: times written without a zone', () => {
	const triggers = useTriggerFixtures();
	const hostZone = useHostTimeZone();

	test.each(HOST_ZONES)(
		'host in %s: each send is reported once from ids and statuses; Not Opened in Time is not told, and the log says why',
		async (zone) => {
			hostZone.set(zone);
			const fixture = await triggers.start(EVENTS, { timesWithoutZone: 'UTC' });
			fixture.hostClockFollowsSandbox();
			expect((await fixture.poll()).items).toEqual([]); // the starting point
			const warn = jest
				.spyOn(fixture.target.context!.logger, 'warn')
				.mockImplementation(() => undefined);
			try {
				const opens = fixture.user('onePhone', 0);
				const neverOpens = fixture.user('onePhone', 1);
				const first = await fixture.send([opens, neverOpens], { title: 'Safety alert' });
				await fixture.sandbox.clock.advance(5_000);
				fixture.sandbox.tap(first, opens);

				const reported = await fixture.poll();
				expect(reported.error).toBeUndefined();
				expect(brief(reported.items)).toEqual([
					['notificationSettled', first, null],
					['deliveryOpened', first, opens],
				]);
				// The open's time as the API wrote it: n8n does not guess its zone.
				expect(reported.items[1].openedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
				expect(warn.mock.calls.map(([message]) => message)).toEqual([
					expect.stringContaining(
						`the API writes sent_at without a time zone, so Not Opened in Time cannot be told for 1 notification(s): ${first}.`,
					),
				]);

				// Past the deadline: the person who never opened is not reported, as nothing places it.
				const later = await fixture.pollEvery(10 * MINUTE, 3);
				const second = await fixture.send([opens], { title: 'All clear' });
				await fixture.sandbox.clock.advance(5_000);
				later.push(...(await fixture.pollEvery(MINUTE, 3)));
				expect(brief(later)).toEqual([['notificationSettled', second, null]]);
			} finally {
				warn.mockRestore();
			}
		},
	);
});
