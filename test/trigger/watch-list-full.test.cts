/**
 * The watch list is bounded (state.ts). When a bound is reached, the send that gives its place is
 * named to the workflow (a `stoppedWatching` item), not only in n8n's log; and a send scheduled far
 * ahead gives its place before a send already out, so it cannot push an alert out of the list
 * while the alert still climbs its ladder.
 */
import { MAX_WATCHED_SENDS } from '../../nodes/CompanionPush/trigger/state';
import { DAY, MINUTE, ofEvent, useTriggerFixtures } from '../harness/index.cts';

const LADDER = { events: ['notOpenedInTime'], openDeadlines: '15' };

describe('Companion Push Trigger: a full watch list', () => {
	const triggers = useTriggerFixtures();

	test('500 other sends after a safety alert: the alert leaves the list, and the workflow gets an item naming it', async () => {
		const fixture = await triggers.start(LADDER);
		fixture.hostClockFollowsSandbox();
		await fixture.poll();
		const alert = await fixture.send([fixture.user('onePhone')], { title: 'Safety alert: gas' });
		await fixture.sandbox.clock.advance(5_000);
		expect((await fixture.poll()).items).toEqual([]);

		await fixture.sendMany(MAX_WATCHED_SENDS, [fixture.user('onePhone', 1)], { title: 'Shift' });
		await fixture.sandbox.clock.advance(MINUTE);
		const warn = jest
			.spyOn(fixture.target.context!.logger, 'warn')
			.mockImplementation(() => undefined);
		const full = await fixture.poll();
		warn.mockRestore();
		expect(full.error).toBeUndefined();
		expect(full.items).toEqual([
			{
				event: 'stoppedWatching',
				eventKey: `${alert}:stoppedWatching`,
				notificationId: alert,
				title: 'Safety alert: gas', // this poll listed it again, within the list's margin
				status: 'sent',
				reason: 'watchListFull',
				message: expect.stringContaining('stopped watching this notification'),
			},
		]);
		// Told once: the alert is forgotten, and nothing more is said of it.
		const later = await fixture.pollEvery(MINUTE, 5);
		expect(later.filter((item) => item.notificationId === alert)).toEqual([]);
	}, 120_000);

	test('500 sends scheduled a year ahead that match the filter: the alert stays watched and its level is told', async () => {
		const fixture = await triggers.start({
			...LADDER,
			filters: { titleContains: 'Safety alert' },
		});
		fixture.hostClockFollowsSandbox();
		await fixture.poll();
		const person = fixture.user('onePhone');
		const alert = await fixture.send([person], { title: 'Safety alert: gas' });
		await fixture.sandbox.clock.advance(5_000);
		expect((await fixture.poll()).items).toEqual([]);

		const aYearAhead = new Date(fixture.sandbox.clock.now() + 365 * DAY).toISOString();
		const scheduled = await fixture.sendMany(MAX_WATCHED_SENDS, [fixture.user('onePhone', 1)], {
			title: 'Safety alert drill',
			scheduled_at: aYearAhead,
		});
		const warn = jest
			.spyOn(fixture.target.context!.logger, 'warn')
			.mockImplementation(() => undefined);
		// Polls every minute from 5 s after the alert: the 15th is the first after its deadline.
		const byDeadline = await fixture.pollEvery(MINUTE, 15);
		const items = [...byDeadline, ...(await fixture.pollEvery(MINUTE, 25))];
		warn.mockRestore();

		// Told at the first poll after its deadline: the scheduled sends, read with the budget the
		// alert leaves, do not keep it waiting either.
		expect(ofEvent(byDeadline, 'notOpenedInTime')).toEqual([
			expect.objectContaining({ notificationId: alert, userId: person, level: 1 }),
		]);
		expect(ofEvent(items, 'notOpenedInTime')).toHaveLength(1);
		// One place too few: a scheduled send gives it, and the workflow is told which.
		const dropped = ofEvent(items, 'stoppedWatching');
		expect(dropped).toEqual([
			expect.objectContaining({ reason: 'watchListFull', status: 'scheduled' }),
		]);
		expect(scheduled).toContain(dropped[0].notificationId);
		expect(items).toHaveLength(2);
	}, 300_000);
});
