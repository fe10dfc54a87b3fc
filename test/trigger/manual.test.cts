/**
 * "Fetch Test Event": the trigger run in manual mode through n8n's own engine (WorkflowExecute runs
 * a polling node's poll function with a PollContext in mode 'manual'). It answers one recent real
 * event, or a sample built from the latest send, and leaves the trigger's state alone.
 */
import type { IDataObject } from 'n8n-workflow';

import { fetchTestEvent, MINUTE, useTriggerFixtures } from '../harness/index.cts';

const NODE_NAME = 'Companion Push Trigger';

describe('Companion Push Trigger: Fetch Test Event (manual mode)', () => {
	const triggers = useTriggerFixtures();

	test('returns one recent real event and leaves the state of the active trigger alone', async () => {
		const fixture = await triggers.start();
		await fixture.poll();
		const onePhone = fixture.user('onePhone');
		const id = await fixture.send([onePhone], { title: 'Opened one' });
		await fixture.sandbox.clock.advance(5_000);
		await fixture.poll();
		fixture.sandbox.tap(id, onePhone);
		await fixture.sandbox.clock.advance(MINUTE);

		// The same static data the active workflow holds, in n8n's shape.
		const staticData = { [`node:${NODE_NAME}`]: fixture.staticData() };
		const before = JSON.parse(JSON.stringify(staticData));
		const result = await fetchTestEvent(fixture, { events: ['deliveryOpened'] }, staticData);
		expect(result.error).toBeUndefined();
		expect(result.items).toEqual([
			expect.objectContaining({
				event: 'deliveryOpened',
				notificationId: id,
				userId: onePhone,
				deliveryIndex: 0,
				openedAt: expect.any(String),
			}),
		]);
		expect(result.items[0].sample).toBeUndefined();
		expect(JSON.parse(JSON.stringify(staticData))).toEqual(before);

		// The active trigger still emits that open itself, once.
		const active = await fixture.pollEvery(MINUTE, 5);
		expect(
			active.filter((item) => item.event === 'deliveryOpened').map((item) => item.notificationId),
		).toEqual([id]);
	});

	test('with no event yet, a sample built from the latest send (marked sample), in the chosen output shape', async () => {
		const fixture = await triggers.start();
		await fixture.send([fixture.user('onePhone')], { title: 'Older' });
		const latest = await fixture.send([fixture.user('onePhone')], { title: 'Still sending' });
		const staticData: IDataObject = {};

		const perEvent = await fetchTestEvent(fixture, { events: ['notificationSettled'] }, staticData);
		expect(perEvent.items).toEqual([
			expect.objectContaining({
				event: 'notificationSettled',
				sample: true,
				notificationId: latest,
				title: 'Still sending',
				status: 'sending',
			}),
		]);
		const perNotification = await fetchTestEvent(
			fixture,
			{ events: ['notificationSettled'], output: 'perNotification' },
			staticData,
		);
		expect(perNotification.items).toEqual([
			expect.objectContaining({
				notificationId: latest,
				events: [expect.objectContaining({ event: 'notificationSettled', sample: true })],
			}),
		]);
		expect(staticData).toEqual({});
	});

	test('the person events: a real one when there is one (No Device), else a sample with the deadline (Not Opened in Time)', async () => {
		const fixture = await triggers.start();
		const noPhone = fixture.user('noPhone');
		const id = await fixture.send([fixture.user('onePhone'), noPhone], { title: 'Safety alert' });
		await fixture.sandbox.clock.advance(5_000);

		const noDevice = await fetchTestEvent(fixture, { events: ['noDevice'] });
		expect(noDevice.items).toEqual([
			{
				event: 'noDevice',
				eventKey: `${id}:${noPhone}:noDevice`,
				notificationId: id,
				title: 'Safety alert',
				body: expect.any(String),
				userId: noPhone,
				sentAt: expect.any(String),
			},
		]);

		// Within the 30 minutes nobody is late yet: a sample, marked so.
		const notOpened = await fetchTestEvent(fixture, {
			events: ['notOpenedInTime'],
			openDeadline: 30,
		});
		const sentAt = Date.parse(noDevice.items[0].sentAt as string);
		expect(notOpened.items).toEqual([
			expect.objectContaining({
				event: 'notOpenedInTime',
				sample: true,
				notificationId: id,
				deadline: new Date(sentAt + 30 * MINUTE).toISOString(),
			}),
		]);
		await fixture.sandbox.clock.advance(30 * MINUTE);
		expect(
			(await fetchTestEvent(fixture, { events: ['notOpenedInTime'], openDeadline: 30 })).items,
		).toEqual([expect.not.objectContaining({ sample: true })]);
	});

	test('with filters: the event of a matching send, never one built from another send; none matching is a clear error', async () => {
		const fixture = await triggers.start();
		const noPhone = fixture.user('noPhone');
		const alert = await fixture.send([fixture.user('onePhone'), noPhone], {
			title: 'Safety alert: leave building B',
		});
		await fixture.sandbox.clock.advance(5_000);
		// Newer sends that do not match, one of them with a No Device event of its own.
		await fixture.send([fixture.user('loggedOut')], { title: 'Delivery report: sent' });
		await fixture.send([fixture.user('onePhone')], { title: 'Lunch menu' });
		await fixture.sandbox.clock.advance(5_000);

		const filters = { titleContains: 'safety ALERT' };
		const real = await fetchTestEvent(fixture, { events: ['noDevice'], filters });
		expect(real.error).toBeUndefined();
		expect(real.items).toEqual([
			expect.objectContaining({ event: 'noDevice', notificationId: alert, userId: noPhone }),
		]);
		// No event of that kind yet (nobody is late): a sample, built from the matching send.
		const sample = await fetchTestEvent(fixture, { events: ['notOpenedInTime'], filters });
		expect(sample.items).toEqual([
			expect.objectContaining({
				event: 'notOpenedInTime',
				sample: true,
				notificationId: alert,
				title: 'Safety alert: leave building B',
			}),
		]);

		const logStart = fixture.sandbox.requestLog().length;
		const none = await fetchTestEvent(fixture, {
			events: ['noDevice'],
			filters: { titleContains: 'Fire drill', announcementId: 'a-42' },
		});
		expect(none.items).toEqual([]);
		expect(none.error?.message).toBe(
			'None of the latest 3 notifications matches the filters (Title Contains "Fire drill", Announcement ID "a-42"), so there is no event to show',
		);
		expect(none.error?.description).toMatch(/Send a notification that matches the filters/);
		// The list answered that no title matches: no detail was read.
		expect(Object.keys(fixture.callsSince(logStart))).toEqual(['GET /push-notification/list']);
	});

	test('with no send at all, a clear error instead of an empty run', async () => {
		const fixture = await triggers.start();
		const result = await fetchTestEvent(fixture, {});
		expect(result.items).toEqual([]);
		expect(result.error?.message).toMatch(/No notification has been sent yet/);
		expect(result.error?.description).toMatch(/Send a notification/);
	});
});
