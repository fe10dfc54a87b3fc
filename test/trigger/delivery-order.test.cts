/**
 * The delivery entries of a detail carry no phone identity, and the spec does not say in which
 * order they come. An API that lists them by last update moves an entry when it is opened: each
 * event is still told once, since the trigger counts a person's entries in each state instead of
 * naming an entry by its place.
 */
import { deliveryFindings } from '../../nodes/CompanionPush/trigger/detail/deliveryEvents';
import { MINUTE, ofEvent, useTriggerFixtures } from '../harness/index.cts';

describe('Companion Push Trigger: delivery entries in any order', () => {
	const triggers = useTriggerFixtures();

	test('entries listed by last update: a failed phone moves when the other phone opens, and is told once', async () => {
		const fixture = await triggers.start(
			{ events: ['deliveryFailed', 'deliveryOpened'] },
			{ deliveryOrder: 'lastUpdate' },
		);
		await fixture.poll();
		// Two phones: the first gets it, the second has lost the app.
		const person = fixture.user('partlyUninstalled');
		const id = await fixture.send([person], { title: 'Evacuation drill' });
		await fixture.sandbox.clock.advance(5_000);

		const first = await fixture.poll();
		expect(first.items.map((item) => [item.event, item.userId])).toEqual([
			['deliveryFailed', person],
		]);

		// The open makes the first phone's entry the last updated: the failed one comes first now.
		fixture.sandbox.tap(id, person, 0);
		await fixture.sandbox.clock.advance(MINUTE);
		const entries = fixture.sandbox
			.notifications('primary')
			.find((send) => send.id === id)!
			.deliveries.map((entry) => entry.status);
		expect(entries).toEqual(['opened', 'failed']); // as planned; the API shows them the other way round

		const later = [...(await fixture.poll()).items, ...(await fixture.pollEvery(MINUTE, 10))];
		expect(later.map((item) => [item.event, item.userId])).toEqual([['deliveryOpened', person]]);
		expect(ofEvent([...first.items, ...later], 'deliveryFailed')).toHaveLength(1);
	});

	test('a second phone opening later is told once more, whatever place either entry takes', async () => {
		const fixture = await triggers.start(
			{ events: ['deliveryOpened'] },
			{ deliveryOrder: 'lastUpdate' },
		);
		await fixture.poll();
		const person = fixture.user('twoPhones');
		const id = await fixture.send([person]);
		await fixture.sandbox.clock.advance(5_000);
		expect((await fixture.poll()).items).toEqual([]);

		fixture.sandbox.tap(id, person, 1);
		const firstOpen = await fixture.pollEvery(MINUTE, 3);
		fixture.sandbox.tap(id, person, 0);
		const secondOpen = await fixture.pollEvery(MINUTE, 10);
		expect(
			[...firstOpen, ...secondOpen].map((item) => [item.userId, item.deliveryIndex, item.eventKey]),
		).toEqual([
			[person, 0, `${id}:${person}:0:opened`],
			[person, 1, `${id}:${person}:1:opened`],
		]);
	});
});

describe('delivery events counted per person', () => {
	const at = '2026-03-02T09:00:01.500Z';
	const entry = (status: string) => ({ user_id: 'u1', status, sent_at: at, opened_at: null });

	test('a failure the retries mend is not told again when a phone fails later; a count past it is', () => {
		const told = new Set(['u1:0:failed']);
		// The failed phone was reached by a retry, then the other phone failed: still one failure.
		expect(deliveryFindings([entry('sent'), entry('failed')], told, true)).toEqual([]);
		// Both failed: the count passes the one told.
		expect(
			deliveryFindings([entry('failed'), entry('failed')], told, true).map(
				(finding) => finding.key,
			),
		).toEqual(['u1:1:failed']);
		// Before the send settles, no failure is told.
		expect(deliveryFindings([entry('failed')], new Set(), false)).toEqual([]);
	});
});
