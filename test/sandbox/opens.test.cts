import type { Sandbox } from '../../sandbox/index.cts';
import {
	call,
	detail,
	MANUAL_CLOCK,
	send,
	settleDeliveries,
	tokenFor,
	useSandbox,
} from '../harness/index.cts';

describe('sandbox opens (spec Delivery states: sent -> opened on tap, Counters.opened)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 400, resetBeforeEach: true });
	let token: string;
	const userOf = (kind: Parameters<Sandbox['orgs']['primary']['usersOfKind']>[0]) =>
		sandbox.orgs.primary.usersOfKind(kind, 1)[0];
	beforeEach(async () => {
		token = await tokenFor(sandbox);
	});

	test('tap moves a delivery from sent to opened with opened_at; stats.opened grows as people tap', async () => {
		const [first, second] = sandbox.orgs.primary.usersOfKind('onePhone', 2);
		const { id } = await send(sandbox, token, [first, second]);
		await settleDeliveries(sandbox);
		sandbox.tap(id, first);
		let view = await detail(sandbox, token, id);
		expect(view.deliveries[0]).toMatchObject({
			user_id: first,
			status: 'opened',
			opened_at: new Date(sandbox.clock.now()).toISOString(),
		});
		expect(view.notification.stats).toMatchObject({ sent: 2, opened: 1 });
		expect(view.notification.status).toBe('sent');
		await sandbox.clock.advance(1_800_000);
		sandbox.tap(id, second);
		view = await detail(sandbox, token, id);
		expect(view.notification.stats.opened).toBe(2);
		expect(view.deliveries[0].opened_at).not.toBe(view.deliveries[1].opened_at);
	});

	test('deviceIndex picks the phone; without it the first phone still sent is tapped', async () => {
		const user = userOf('threePhones');
		const { id } = await send(sandbox, token, [user]);
		await settleDeliveries(sandbox);
		sandbox.tap(id, user, 2);
		sandbox.tap(id, user);
		const { deliveries } = await detail(sandbox, token, id);
		expect(deliveries.map((delivery) => delivery.status)).toEqual(['opened', 'sent', 'opened']);
	});

	test('taps are refused on a failed, no_device, not yet delivered, already opened or unknown delivery', async () => {
		const { id } = await send(sandbox, token, [
			userOf('onePhone'),
			userOf('uninstalled'),
			userOf('noPhone'),
			userOf('flaky'),
		]);
		expect(() => sandbox.tap(id, userOf('onePhone'))).toThrow(/not delivered yet/);
		await sandbox.clock.advance(1500);
		expect(() => sandbox.tap(id, userOf('flaky'))).toThrow(/failed/); // waiting for its retry
		expect(() => sandbox.tap(id, userOf('uninstalled'))).toThrow(/failed/);
		expect(() => sandbox.tap(id, userOf('noPhone'))).toThrow(/no_device/);
		expect(() => sandbox.tap(id, userOf('twoPhones'))).toThrow(/got no delivery/);
		expect(() => sandbox.tap('nope', userOf('onePhone'))).toThrow(/no push notification/);
		expect(() => sandbox.tap(id, userOf('onePhone'), 3)).toThrow(/deviceIndex 3/);
		sandbox.tap(id, userOf('onePhone'));
		expect(() => sandbox.tap(id, userOf('onePhone'), 0)).toThrow(/opened, not sent/);
		await sandbox.clock.advance(1500);
		sandbox.tap(id, userOf('flaky')); // delivered by the retry
		expect((await detail(sandbox, token, id)).notification.stats.opened).toBe(2);
	});

	test('POST /__sandbox/tap records an open over HTTP; refusals answer 404/409', async () => {
		const user = userOf('onePhone');
		const { id } = await send(sandbox, token, [user]);
		const early = await call(sandbox, 'POST', '/__sandbox/tap', {
			body: { notificationId: id, userId: user },
		});
		expect(early.status).toBe(409);
		await settleDeliveries(sandbox);
		expect(
			(
				await call(sandbox, 'POST', '/__sandbox/tap', {
					body: { notificationId: id, userId: user },
				})
			).status,
		).toBe(200);
		expect((await detail(sandbox, token, id)).deliveries[0].status).toBe('opened');
		expect(
			(
				await call(sandbox, 'POST', '/__sandbox/tap', {
					body: { notificationId: 'nope', userId: user },
				})
			).status,
		).toBe(404);
	});

	test('autoTapShare opens a deterministic share of delivered phones autoTapAfterMs after delivery', async () => {
		sandbox.configure({ autoTapShare: 0.5, autoTapAfterMs: 600_000 });
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 100);
		const { id } = await send(sandbox, token, users);
		await settleDeliveries(sandbox);
		expect((await detail(sandbox, token, id)).notification.stats.opened).toBe(0);
		await sandbox.clock.advance(600_000);
		const { notification, deliveries } = await detail(sandbox, token, id);
		expect(notification.stats.opened).toBeGreaterThan(30);
		expect(notification.stats.opened).toBeLessThan(70);
		const opened = deliveries.find((delivery) => delivery.status === 'opened');
		expect(Date.parse(opened.opened_at) - Date.parse(opened.sent_at)).toBe(600_000);
	});
});
