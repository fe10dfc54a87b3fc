/**
 * A detail that lists fewer delivery entries than its counters count (the spec does not say that
 * it lists them all): the trigger tells what the entries show, concludes nothing from what they
 * leave out, and tells the workflow once, with a `detailIncomplete` item naming the send and what
 * is missing. A later read that lists every entry tells what was withheld.
 */
import { detectEvents } from '../../nodes/CompanionPush/trigger/events';
import { MINUTE, ofEvent, useTriggerFixtures } from '../harness/index.cts';

describe('Companion Push Trigger: a detail short of its counters', () => {
	const triggers = useTriggerFixtures();

	test('15 people without the app, 10 listed: No Device for the 10, an item naming the send and the 5 missing', async () => {
		const fixture = await triggers.start({ events: ['noDevice'] }, { detailMaxDeliveries: 10 });
		await fixture.poll();
		const people = fixture.sandbox.orgs.primary.usersOfKind('noPhone', 15);
		expect(people).toHaveLength(15);
		const id = await fixture.send(people, { title: 'Fire drill' });
		await fixture.sandbox.clock.advance(5_000);

		const items = [...(await fixture.poll()).items, ...(await fixture.pollEvery(MINUTE, 10))];
		expect(ofEvent(items, 'noDevice').map((item) => item.userId)).toEqual(people.slice(0, 10));
		expect(ofEvent(items, 'detailIncomplete')).toEqual([
			expect.objectContaining({
				event: 'detailIncomplete',
				eventKey: `${id}:detailIncomplete`,
				notificationId: id,
				title: 'Fire drill',
				entriesShown: 10,
				missing: { no_device: 5 },
				withheld: [],
				message: expect.stringContaining('missing: 5 no_device'),
			}),
		]);
		expect(items).toHaveLength(11);
	});

	test('a phone entry missing: nobody is told Not Opened in Time until a read lists every entry', async () => {
		const fixture = await triggers.start(
			{ events: ['notOpenedInTime'], openDeadlines: '15' },
			{ detailMaxDeliveries: 5 },
		);
		await fixture.poll();
		// Three people with two phones each: six entries, the detail lists five.
		const [first, second, third] = fixture.sandbox.orgs.primary.usersOfKind('twoPhones', 3);
		const id = await fixture.send([first, second, third], { title: 'Gas leak' });
		await fixture.sandbox.clock.advance(5_000);
		// The third person opens on the phone the detail leaves out.
		fixture.sandbox.tap(id, third, 1);

		const whileShort = [...(await fixture.poll()).items, ...(await fixture.pollEvery(MINUTE, 20))];
		expect(whileShort).toEqual([
			expect.objectContaining({
				event: 'detailIncomplete',
				notificationId: id,
				entriesShown: 5,
				missing: { devices: 1, sent: 1, opened: 1 },
				withheld: ['notOpenedInTime'],
			}),
		]);

		// The API lists every entry again: the level withheld is told, to those who did not open.
		fixture.sandbox.configure({ detailMaxDeliveries: null });
		const complete = await fixture.pollEvery(MINUTE, 70);
		expect(complete.map((item) => [item.event, item.userId])).toEqual([
			['notOpenedInTime', first],
			['notOpenedInTime', second],
		]);
	});
});

describe('a detail short of its counters, read alone', () => {
	const sentAt = '2026-03-02T09:00:00.000Z';
	const failed = (userId: string) => ({ user_id: userId, status: 'failed', sent_at: sentAt });
	const counters = { targeted_users: 2, devices: 1, sent: 0, failed: 1, opened: 0, no_device: 1 };
	const read = (stats: typeof counters) =>
		detectEvents({
			detail: {
				notification: {
					id: 'n1',
					title: 'Alarm',
					status: 'partially_failed',
					sent_at: sentAt,
					stats,
				},
				deliveries: [failed('u1'), { user_id: 'u2', status: 'no_device', sent_at: sentAt }],
			},
			emittedKeys: new Set(),
			selected: new Set(['notReached', 'noDevice'] as const),
			now: Date.parse(sentAt) + MINUTE,
		});

	test('every phone listed: Not Reached for the failed phone and for no app, nothing more', () => {
		expect(read(counters).map((event) => [event.name, event.json.userId])).toEqual([
			['notReached', 'u1'],
			['noDevice', 'u2'],
			['notReached', 'u2'],
		]);
	});

	test('a phone the detail leaves out (it may have been reached): no Not Reached for failed phones; no app still proves itself', () => {
		const events = read({ ...counters, devices: 2, sent: 1 });
		expect(events.map((event) => [event.name, event.json.userId ?? null])).toEqual([
			['detailIncomplete', null],
			['noDevice', 'u2'],
			['notReached', 'u2'],
		]);
		expect(events[0].json).toMatchObject({
			missing: { devices: 1, sent: 1 },
			withheld: ['notReached'],
		});
	});
});
