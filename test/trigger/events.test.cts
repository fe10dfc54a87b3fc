/**
 * The trigger against the sandbox, polled as an active n8n workflow polls it: what it emits, and
 * that each event comes exactly once however many polls follow.
 */
import { call, HOUR, MINUTE, ofEvent, useTriggerFixtures } from '../harness/index.cts';

describe('Companion Push Trigger: events', () => {
	const triggers = useTriggerFixtures();

	test('the first poll records a starting point and emits nothing; sends made before it are never emitted', async () => {
		const fixture = await triggers.start();
		const before = await fixture.send([fixture.user('onePhone'), fixture.user('uninstalled')]);
		await fixture.sandbox.clock.advance(5_000); // settled: partially_failed with a failure

		const first = await fixture.poll();
		expect(first.error).toBeUndefined();
		expect(first.emitted).toBe(false);
		const state = fixture.staticData().watch as any;
		// The list is read from the first poll's time on: the earlier send lies below it.
		expect(state.listed).toEqual({ floor: fixture.sandbox.clock.now(), recent: [] });
		expect(state.sends).toEqual({});

		fixture.sandbox.tap(before, fixture.user('onePhone'));
		const later = await fixture.pollEvery(MINUTE, 5);
		expect(later).toEqual([]);
		// Nothing from before the start is ever read in detail.
		expect(fixture.sandbox.counts()['GET /push-notification/:id'] ?? 0).toBe(0);
	});

	test('a send that settles is emitted once across many polls, with its record and counters', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled'] });
		await fixture.poll();
		const id = await fixture.send([fixture.user('onePhone'), fixture.user('twoPhones')]);

		const whileSending = await fixture.poll();
		expect(whileSending.items).toEqual([]);

		const items = await fixture.pollEvery(MINUTE, 12);
		expect(items).toHaveLength(1);
		expect(items[0]).toMatchObject({
			event: 'notificationSettled',
			eventKey: `${id}:status:sent`,
			notificationId: id,
			title: 'Shift change',
			status: 'sent',
			previousStatus: 'sending',
			stats: { targeted_users: 2, devices: 3, sent: 3, failed: 0 },
			notification: { id, status: 'sent' },
		});
	});

	test('a later state change (automatic retry: partially_failed, then sent) is emitted once more, with the old state', async () => {
		const fixture = await triggers.start(
			{ events: ['notificationSettled'] },
			{ retriesVisible: true },
		);
		await fixture.poll();
		const id = await fixture.send([fixture.user('onePhone'), fixture.user('flaky')]);
		expect((await fixture.poll()).items).toEqual([]); // seen while sending

		await fixture.sandbox.clock.advance(2_000); // round 1: the flaky phone failed, retry pending
		const partial = await fixture.poll();
		expect(partial.items).toEqual([
			expect.objectContaining({
				notificationId: id,
				status: 'partially_failed',
				previousStatus: 'sending',
			}),
		]);

		const later = await fixture.pollEvery(MINUTE, 10);
		expect(later).toEqual([
			expect.objectContaining({
				notificationId: id,
				eventKey: `${id}:status:sent`,
				status: 'sent',
				previousStatus: 'partially_failed',
			}),
		]);
	});

	test('a scheduled send that is canceled is emitted once as canceled, then no longer read', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled'] });
		await fixture.poll();
		const scheduledAt = new Date(fixture.sandbox.clock.now() + 2 * HOUR).toISOString();
		const id = await fixture.send([fixture.user('onePhone')], { scheduled_at: scheduledAt });
		expect(await fixture.pollEvery(MINUTE, 3)).toEqual([]);

		const cancel = await call(fixture.sandbox, 'POST', `/push-notification/${id}/cancel`, {
			token: await fixture.apiToken(),
		});
		expect(cancel.status).toBe(200);
		const items = await fixture.pollEvery(MINUTE, 3);
		expect(items).toEqual([
			expect.objectContaining({
				notificationId: id,
				status: 'canceled',
				previousStatus: 'scheduled',
			}),
		]);
		const logStart = fixture.sandbox.requestLog().length;
		await fixture.pollEvery(MINUTE, 3);
		expect(fixture.callsSince(logStart)['GET /push-notification/:id'] ?? 0).toBe(0);
	});

	test('opens and failures are emitted once each, counted per user', async () => {
		const fixture = await triggers.start({ events: ['deliveryFailed', 'deliveryOpened'] });
		await fixture.poll();
		const onePhone = fixture.user('onePhone');
		const twoPhones = fixture.user('twoPhones');
		const uninstalled = fixture.user('uninstalled');
		const id = await fixture.send([onePhone, twoPhones, uninstalled], { title: 'Safety briefing' });
		await fixture.sandbox.clock.advance(5_000);

		const failures = await fixture.pollEvery(MINUTE, 3);
		expect(failures).toEqual([
			{
				event: 'deliveryFailed',
				eventKey: `${id}:${uninstalled}:0:failed`,
				notificationId: id,
				title: 'Safety briefing',
				userId: uninstalled,
				deliveryIndex: 0,
				status: 'failed',
				sentAt: expect.any(String),
			},
		]);

		fixture.sandbox.tap(id, onePhone);
		fixture.sandbox.tap(id, twoPhones, 1);
		// Opens are read on the back-off (1, 2, 4 ... minutes): within 8 minutes they are in.
		const opens = await fixture.pollEvery(MINUTE, 8);
		// deliveryIndex: the person's first open, second open ... (the entries name no phone).
		expect(opens.map((item) => [item.event, item.userId, item.deliveryIndex])).toEqual([
			['deliveryOpened', onePhone, 0],
			['deliveryOpened', twoPhones, 0],
		]);
		expect(opens[0].openedAt).toEqual(expect.any(String));

		fixture.sandbox.tap(id, twoPhones, 0);
		const more = await fixture.pollEvery(5 * MINUTE, 20);
		expect(more.map((item) => [item.event, item.userId, item.deliveryIndex])).toEqual([
			['deliveryOpened', twoPhones, 1],
		]);
		expect(ofEvent([...failures, ...opens, ...more], 'deliveryFailed')).toHaveLength(1);
	});

	test('output "perNotification": one item per send, its new events inside', async () => {
		const fixture = await triggers.start({ output: 'perNotification' });
		await fixture.poll();
		const uninstalled = fixture.user('uninstalled');
		const first = await fixture.send([fixture.user('onePhone'), uninstalled], { title: 'First' });
		const second = await fixture.send([fixture.user('onePhone')], { title: 'Second' });
		await fixture.sandbox.clock.advance(5_000);

		const outcome = await fixture.poll();
		expect(outcome.items).toHaveLength(2);
		const byId = new Map(outcome.items.map((item) => [item.notificationId, item]));
		expect(byId.get(first)).toMatchObject({
			title: 'First',
			status: 'partially_failed',
			notification: { id: first, status: 'partially_failed' },
			events: [
				expect.objectContaining({ event: 'notificationSettled', status: 'partially_failed' }),
				expect.objectContaining({ event: 'deliveryFailed', userId: uninstalled }),
			],
		});
		expect((byId.get(first)!.events as any[])[0].notification).toBeUndefined();
		expect(byId.get(second)).toMatchObject({
			title: 'Second',
			status: 'sent',
			events: [expect.objectContaining({ event: 'notificationSettled' })],
		});
		expect(await fixture.pollEvery(MINUTE, 5)).toEqual([]);
	});

	test('filters: title contains (any case), and announcement id (announcement_id or its deeplink)', async () => {
		let fixture = await triggers.start({
			events: ['notificationSettled'],
			filters: { titleContains: 'safety' },
		});
		await fixture.poll();
		const user = [fixture.user('onePhone')];
		const matching = await fixture.send(user, { title: 'Monthly SAFETY check' });
		await fixture.send(user, { title: 'Lunch menu' });
		const items = await fixture.pollEvery(MINUTE, 3);
		expect(items.map((item) => item.notificationId)).toEqual([matching]);

		for (const recordIncludesAnnouncementId of [true, false]) {
			fixture = await triggers.start(
				{ events: ['notificationSettled'], filters: { announcementId: 'ann-7' } },
				{ recordIncludesAnnouncementId },
			);
			await fixture.poll();
			const byId = await fixture.send(user, { title: 'By id', announcement_id: 'ann-7' });
			const byDeeplink = await fixture.send(user, {
				title: 'By deeplink',
				deeplink: 'companionapp://announcement/ann-7',
			});
			await fixture.send(user, {
				title: 'Other',
				announcement_id: 'ann-8',
				deeplink: 'companionapp://announcement/ann-8',
			});
			await fixture.send(user, { title: 'None' });
			const found = (await fixture.pollEvery(MINUTE, 3)).map((item) => item.notificationId);
			// Without announcement_id in the API's records, only the deeplink can tell.
			expect(found.sort()).toEqual(
				(recordIncludesAnnouncementId ? [byId, byDeeplink] : [byDeeplink]).sort(),
			);
		}
	});
});
