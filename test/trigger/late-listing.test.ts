/**
 * A send the list shows late: created a second before another send but listed a minute after it
 * (a big send registered slowly, a lagging list). The trigger reads the list down to a margin
 * below the newest send it has seen, so the late one is still found, and emitted once; the sends
 * met before are passed over, never watched twice.
 *
 * The lag comes from a test-local proxy (listLag.ts) until the sandbox has a switch for it.
 */
import { LIST_LAG_MARGIN_MS } from '../../nodes/CompanionPush/trigger/state';
import { startLaggingList } from './listLag';
import type { LaggingList } from './listLag';
import { call, MINUTE, useTriggerFixtures } from '../harness';
import type { TriggerFixture } from '../harness';

describe('Companion Push Trigger: a send the list shows late', () => {
	const triggers = useTriggerFixtures();
	let fixture: TriggerFixture;
	let list: LaggingList;
	afterEach(async () => await list?.stop());

	async function start(): Promise<void> {
		fixture = await triggers.start({ events: ['notificationSettled', 'deliveryFailed'] });
		list = await startLaggingList(fixture.sandbox);
		fixture.useBaseUrl(list.baseUrl);
		await fixture.poll();
	}

	test('created a second before a send already reported, listed a minute later: reported once', async () => {
		await start();
		const late = await fixture.send([fixture.user('onePhone'), fixture.user('uninstalled')], { title: 'Big send' });
		list.holdBack(late);
		await fixture.sandbox.clock.advance(1_000);
		const shown = await fixture.send([fixture.user('onePhone')], { title: 'Small send' });
		await fixture.sandbox.clock.advance(5_000);

		const first = await fixture.poll();
		expect(first.items.map((item) => [item.event, item.notificationId])).toEqual([['notificationSettled', shown]]);

		await fixture.sandbox.clock.advance(MINUTE);
		list.release(late);
		const next = await fixture.poll();
		expect(next.error).toBeUndefined();
		expect(next.items.map((item) => [item.event, item.notificationId])).toEqual([
			['notificationSettled', late],
			['deliveryFailed', late],
		]);
		expect(next.items[0]).toMatchObject({ title: 'Big send', status: 'partially_failed', previousStatus: null });

		// Later polls still list both (they are within the margin) and emit nothing again.
		expect(await fixture.pollEvery(MINUTE, 10)).toEqual([]);
		const watch = fixture.staticData().watch as { sends: object; listed: { recent: Array<{ id: string }> } };
		expect(Object.keys(watch.sends).sort()).toEqual([late, shown].sort());
		expect(watch.listed.recent.map((send) => send.id).sort()).toEqual([late, shown].sort());
	});

	test('a send listed late after sends that are no longer watched (canceled, filtered out) is found; those are not watched again', async () => {
		fixture = await triggers.start({ events: ['notificationSettled'], filters: { titleContains: 'alert' } });
		list = await startLaggingList(fixture.sandbox);
		fixture.useBaseUrl(list.baseUrl);
		await fixture.poll();
		const late = await fixture.send([fixture.user('onePhone')], { title: 'Safety alert, part 2' });
		list.holdBack(late);
		await fixture.sandbox.clock.advance(1_000);
		const lunch = await fixture.send([fixture.user('onePhone')], { title: 'Lunch menu' });
		const scheduledAt = new Date(fixture.sandbox.clock.now() + 60 * MINUTE).toISOString();
		const canceled = await fixture.send([fixture.user('onePhone')], { title: 'Fire alert drill', scheduled_at: scheduledAt });
		await fixture.sandbox.clock.advance(5_000);
		expect((await fixture.poll()).items).toEqual([]);
		expect((await call(fixture.sandbox, 'POST', `/push-notification/${canceled}/cancel`, { token: await fixture.apiToken() })).status).toBe(200);
		const cancelItems = await fixture.pollEvery(MINUTE, 1);
		expect(cancelItems.map((item) => [item.notificationId, item.status])).toEqual([[canceled, 'canceled']]);

		list.release(late);
		const logStart = fixture.sandbox.requestLog().length;
		const items = await fixture.pollEvery(MINUTE, 3);
		expect(items.map((item) => [item.notificationId, item.status])).toEqual([[late, 'sent']]);
		// Neither the canceled send nor the filtered one is read again, though both are still listed.
		const read = fixture.sandbox
			.requestLog()
			.slice(logStart)
			.filter((entry) => entry.endpoint === 'GET /push-notification/:id')
			.map((entry) => entry.path.split('/').pop());
		expect(read).not.toContain(canceled);
		expect(read).not.toContain(lunch);
	});

	test('listed later than the margin after a newer send: below the floor, not reported (the documented limit)', async () => {
		await start();
		const tooLate = await fixture.send([fixture.user('onePhone')], { title: 'Very late' });
		list.holdBack(tooLate);
		await fixture.sandbox.clock.advance(LIST_LAG_MARGIN_MS + MINUTE);
		const newer = await fixture.send([fixture.user('onePhone')], { title: 'Newer' });
		await fixture.sandbox.clock.advance(5_000);
		expect((await fixture.poll()).items.map((item) => item.notificationId)).toEqual([newer]);
		list.release(tooLate);
		expect(await fixture.pollEvery(MINUTE, 3)).toEqual([]);
	});
});
