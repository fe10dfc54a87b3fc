/**
 * Cost stays bounded as history grows: with 10,000 sends from before activation and 5 that keep
 * moving, every poll costs at most 7 API calls (1 list page + 5 detail reads, + a token renewal
 * at most), and none of the old sends is ever read. The read budget caps a poll, fairly.
 */
import { HOUR, MINUTE, total, useTriggerFixtures } from '../harness/index.cts';

const OLD_SENDS = 10_000;

describe('Companion Push Trigger: cost', () => {
	const triggers = useTriggerFixtures();

	test('10,000 old sends + 5 moving ones: at most 7 API calls per poll, no old send read', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled', 'deliveryOpened'] });
		// The token is renewed ahead of expiry (1 call), not after a 401 (2 more calls).
		fixture.hostClockFollowsSandbox();
		const user = [fixture.user('onePhone')];
		// Registered in the sandbox's process, as another client's sends: 10,000 requests over HTTP
		// on a loaded machine had a connection reset now and then, and they are not what is measured.
		const oldIds = new Set(
			Array.from({ length: OLD_SENDS }, () =>
				fixture.sandbox.sendAsAnotherClient('primary', {
					title: 'Old',
					body: 'An old send',
					target_user_ids: user,
				}),
			),
		);
		await fixture.sandbox.clock.advance(MINUTE);
		expect(fixture.sandbox.notifications('primary')).toHaveLength(OLD_SENDS);

		let logStart = fixture.sandbox.requestLog().length;
		expect((await fixture.poll()).emitted).toBe(false);
		const activation = fixture.callsSince(logStart);
		expect(activation['GET /push-notification/list']).toBe(1);
		expect(activation['GET /push-notification/:id'] ?? 0).toBe(0);

		// Five sends scheduled an hour ahead: still moving, so read on every poll.
		const scheduledAt = new Date(fixture.sandbox.clock.now() + HOUR).toISOString();
		const moving = await Promise.all(
			[1, 2, 3, 4, 5].map((n) =>
				fixture.send(user, { title: `Moving ${n}`, scheduled_at: scheduledAt }),
			),
		);

		const perPoll: Array<Record<string, number>> = [];
		const emitted: string[] = [];
		for (let poll = 0; poll < 70; poll++) {
			await fixture.sandbox.clock.advance(MINUTE);
			logStart = fixture.sandbox.requestLog().length;
			const outcome = await fixture.poll();
			expect(outcome.error).toBeUndefined();
			emitted.push(...outcome.items.map((item) => item.notificationId as string));
			perPoll.push(fixture.callsSince(logStart));
		}

		const totals = perPoll.map(total);
		expect(Math.max(...totals)).toBeLessThanOrEqual(7);
		// The poll that renewed the token is the one at 7: refresh + list + 5 reads.
		expect(
			perPoll.filter((calls) => calls['POST /auth/oauth/v2/refresh'] === 1).map(total),
		).toEqual([7]);
		// While scheduled (the first ~59 polls): exactly 1 list page and 5 detail reads.
		for (const calls of perPoll.slice(0, 55)) {
			expect(calls['GET /push-notification/list']).toBe(1);
			expect(calls['GET /push-notification/:id']).toBe(5);
		}
		// Once sent, they are read on the back-off: some polls read none of them.
		expect(
			perPoll.slice(-5).some((calls) => (calls['GET /push-notification/:id'] ?? 0) === 0),
		).toBe(true);
		expect(emitted.sort()).toEqual([...moving].sort());

		const readIds = fixture.sandbox
			.requestLog()
			.filter((entry) => entry.endpoint === 'GET /push-notification/:id')
			.map((entry) => entry.path.split('/').pop()!);
		expect(readIds.filter((id) => oldIds.has(id))).toEqual([]);
		console.log(
			`API calls per poll (10,000 old + 5 moving): max ${Math.max(...totals)}, ${JSON.stringify(perPoll[0])}`,
		);
	}, 300_000); // 10,000 sends to seed, 50 at a time, beside the end-to-end files

	test('more than a page of new sends since the last poll: pages down to the margin below the newest one, no further', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled'] });
		const user = [fixture.user('onePhone')];
		await fixture.sendMany(250, user, { title: 'Before' });
		await fixture.sandbox.clock.advance(10 * MINUTE);
		await fixture.poll();
		const fresh = await fixture.sendMany(150, user, { title: 'After' });
		await fixture.sandbox.clock.advance(5_000);

		const emitted: string[] = [];
		const listCalls: number[] = [];
		for (let poll = 0; poll < 4; poll++) {
			const logStart = fixture.sandbox.requestLog().length;
			const outcome = await fixture.poll();
			emitted.push(...outcome.items.map((item) => item.notificationId as string));
			listCalls.push(fixture.callsSince(logStart)['GET /push-notification/list']);
			await fixture.sandbox.clock.advance(MINUTE);
		}
		// 150 new sends within the margin: two pages of 100 on every poll (the second ends at the
		// first send older than the margin), never the third page of older sends; the 50-read budget
		// spreads the reads over three polls.
		expect(listCalls).toEqual([2, 2, 2, 2]);
		const listedSkips = fixture.sandbox
			.requestLog()
			.filter((entry) => entry.endpoint === 'GET /push-notification/list')
			.map((entry) => Number(entry.query.skip ?? 0));
		expect(Math.max(...listedSkips)).toBe(100);
		expect(emitted.sort()).toEqual([...fresh].sort());
	});

	test('maxReadsPerPoll caps the detail reads, and every send gets its turn', async () => {
		const fixture = await triggers.start({
			events: ['notificationSettled'],
			options: { maxReadsPerPoll: 3 },
		});
		await fixture.poll();
		const ids = await Promise.all(
			Array.from({ length: 10 }, (_, n) =>
				fixture.send([fixture.user('onePhone')], { title: `N${n}` }),
			),
		);
		await fixture.sandbox.clock.advance(5_000);

		const emitted: string[] = [];
		for (let poll = 0; poll < 4; poll++) {
			const logStart = fixture.sandbox.requestLog().length;
			const outcome = await fixture.poll();
			expect(fixture.callsSince(logStart)['GET /push-notification/:id']).toBeLessThanOrEqual(3);
			emitted.push(...outcome.items.map((item) => item.notificationId as string));
			await fixture.sandbox.clock.advance(MINUTE);
		}
		expect(emitted.sort()).toEqual([...ids].sort());
	});
});
