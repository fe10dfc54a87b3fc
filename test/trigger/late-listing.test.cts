/**
 * A send the list shows late: created a second before another send but listed a minute after it
 * (a big send registered slowly, a lagging list). The trigger reads the list down to a margin
 * below the newest send it has seen, so the late one is still found, and emitted once; the sends
 * met before are passed over, never watched twice. The lag is the sandbox's: a `listLag` fault on
 * the send leaves it out of the list for `listDelayMs` of the API's clock (its detail shows it).
 */
import { LIST_LAG_MARGIN_MS } from '../../nodes/CompanionPush/trigger/state';
import { call, MINUTE, SEND, useTriggerFixtures } from '../harness/index.cts';
import type { TriggerFixture } from '../harness/index.cts';

describe('Companion Push Trigger: a send the list shows late', () => {
	const triggers = useTriggerFixtures();

	/** A send the list shows only `listDelayMs` after it was registered. */
	async function sendListedLate(
		fixture: TriggerFixture,
		listDelayMs: number,
		targets: string[],
		title: string,
	): Promise<string> {
		fixture.sandbox.addFault({ endpoint: SEND, kind: 'listLag', listDelayMs });
		return await fixture.send(targets, { title });
	}

	test('created a second before a send already reported, listed a minute later: reported once', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled', 'deliveryFailed'] });
		await fixture.poll();
		const late = await sendListedLate(
			fixture,
			MINUTE,
			[fixture.user('onePhone'), fixture.user('uninstalled')],
			'Big send',
		);
		await fixture.sandbox.clock.advance(1_000);
		const shown = await fixture.send([fixture.user('onePhone')], { title: 'Small send' });
		await fixture.sandbox.clock.advance(5_000);

		const first = await fixture.poll();
		expect(first.items.map((item) => [item.event, item.notificationId])).toEqual([
			['notificationSettled', shown],
		]);

		await fixture.sandbox.clock.advance(MINUTE); // the big send is listed now
		const next = await fixture.poll();
		expect(next.error).toBeUndefined();
		expect(next.items.map((item) => [item.event, item.notificationId])).toEqual([
			['notificationSettled', late],
			['deliveryFailed', late],
		]);
		expect(next.items[0]).toMatchObject({
			title: 'Big send',
			status: 'partially_failed',
			previousStatus: null,
		});

		// Later polls still list both (they are within the margin) and emit nothing again.
		expect(await fixture.pollEvery(MINUTE, 10)).toEqual([]);
		const watch = fixture.staticData().watch as {
			sends: object;
			listed: { recent: Array<{ id: string }> };
		};
		expect(Object.keys(watch.sends).sort()).toEqual([late, shown].sort());
		expect(watch.listed.recent.map((send) => send.id).sort()).toEqual([late, shown].sort());
	});

	test('a send listed late after sends that are no longer watched (canceled, filtered out) is found; those are not watched again', async () => {
		const fixture = await triggers.start({
			events: ['notificationSettled'],
			filters: { titleContains: 'alert' },
		});
		await fixture.poll();
		// Listed three minutes late: after the cancel below has been reported.
		const late = await sendListedLate(
			fixture,
			3 * MINUTE,
			[fixture.user('onePhone')],
			'Safety alert, part 2',
		);
		await fixture.sandbox.clock.advance(1_000);
		const lunch = await fixture.send([fixture.user('onePhone')], { title: 'Lunch menu' });
		const scheduledAt = new Date(fixture.sandbox.clock.now() + 60 * MINUTE).toISOString();
		const canceled = await fixture.send([fixture.user('onePhone')], {
			title: 'Fire alert drill',
			scheduled_at: scheduledAt,
		});
		await fixture.sandbox.clock.advance(5_000);
		expect((await fixture.poll()).items).toEqual([]);
		expect(
			(
				await call(fixture.sandbox, 'POST', `/push-notification/${canceled}/cancel`, {
					token: await fixture.apiToken(),
				})
			).status,
		).toBe(200);
		const cancelItems = await fixture.pollEvery(MINUTE, 1);
		expect(cancelItems.map((item) => [item.notificationId, item.status])).toEqual([
			[canceled, 'canceled'],
		]);

		const logStart = fixture.sandbox.requestLog().length;
		const items = await fixture.pollEvery(MINUTE, 3); // the late send is listed during these
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
		const fixture = await triggers.start({ events: ['notificationSettled', 'deliveryFailed'] });
		await fixture.poll();
		const tooLate = await sendListedLate(
			fixture,
			LIST_LAG_MARGIN_MS + 2 * MINUTE,
			[fixture.user('onePhone')],
			'Very late',
		);
		await fixture.sandbox.clock.advance(LIST_LAG_MARGIN_MS + MINUTE);
		const newer = await fixture.send([fixture.user('onePhone')], { title: 'Newer' });
		await fixture.sandbox.clock.advance(5_000);
		expect((await fixture.poll()).items.map((item) => item.notificationId)).toEqual([newer]);
		expect(await fixture.pollEvery(MINUTE, 3)).toEqual([]); // the late send is listed during these
		expect(fixture.sandbox.notifications('primary').map((send) => send.id)).toContain(tooLate);
	});
});
