import type { NotificationStats, UserKind } from '../../sandbox/index.cts';
import {
	call,
	detail,
	MANUAL_CLOCK,
	send,
	settleDeliveries,
	tokenFor,
	useSandbox,
	useTestSandboxes,
} from '../harness/index.cts';

/** The ISO time `ms` after an ISO time (the clock keeps running across tests). */
const after = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

/** Spec Counters, as derived from the delivery entries (see README). */
function expectStatsMatchDeliveries(
	stats: NotificationStats,
	deliveries: Array<{ user_id: string; status: string }>,
) {
	const count = (...statuses: string[]) =>
		deliveries.filter((delivery) => statuses.includes(delivery.status)).length;
	expect(stats.devices).toBe(count('sent', 'opened', 'failed'));
	expect(stats.sent).toBe(count('sent', 'opened'));
	expect(stats.opened).toBe(count('opened'));
	expect(stats.failed).toBe(count('failed'));
	expect(stats.no_device).toBe(count('no_device'));
	expect(stats.targeted_users).toBe(new Set(deliveries.map((delivery) => delivery.user_id)).size);
}

describe('sandbox asynchronous delivery (spec "What the service does" 5-8, Send states, Delivery record, Counters)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 600, resetBeforeEach: true });
	let token: string;
	const userOf = (kind: UserKind) => sandbox.orgs.primary.usersOfKind(kind, 1)[0];
	beforeEach(async () => {
		token = await tokenFor(sandbox);
	});

	test('202 with status sending; every accepted request creates a new send (no idempotency)', async () => {
		const first = await call(sandbox, 'POST', '/push-notification/send', {
			token,
			body: { title: 'Hi', body: 'There', target_user_ids: [userOf('onePhone')] },
		});
		expect(first.status).toBe(202);
		expect(first.body).toEqual({ ok: true, data: { id: expect.any(String), status: 'sending' } });
		const second = await send(sandbox, token, [userOf('onePhone')]);
		expect(second.id).not.toBe(first.body.data.id);
		expect(sandbox.deliveriesByUser().get(userOf('onePhone'))).toBe(2);
	});

	test('acceptance is not delivery: sending with no entries until deliveryMs, then one entry per phone', async () => {
		const { id } = await send(sandbox, token, [userOf('twoPhones')]);
		const early = await detail(sandbox, token, id);
		expect(early.notification.status).toBe('sending');
		expect(early.notification.sent_at).toBe(early.notification.created_at);
		expect(early.deliveries).toEqual([]);
		expect(early.notification.stats).toEqual({
			targeted_users: 1,
			devices: 0,
			sent: 0,
			failed: 0,
			opened: 0,
			no_device: 0,
		});
		await sandbox.clock.advance(1499);
		expect((await detail(sandbox, token, id)).notification.status).toBe('sending');
		await sandbox.clock.advance(1);
		const done = await detail(sandbox, token, id);
		expect(done.notification.status).toBe('sent');
		const reached = after(early.notification.created_at, 1500);
		expect(done.deliveries).toEqual([
			{ user_id: userOf('twoPhones'), status: 'sent', sent_at: reached, opened_at: null },
			{ user_id: userOf('twoPhones'), status: 'sent', sent_at: reached, opened_at: null },
		]);
		expect(done.notification.stats).toEqual({
			targeted_users: 1,
			devices: 2,
			sent: 2,
			failed: 0,
			opened: 0,
			no_device: 0,
		});
	});

	test('a user with three phones gets three entries; one of two phones logged out gets one', async () => {
		const { id } = await send(sandbox, token, [userOf('threePhones'), userOf('oneLoggedOutOfTwo')]);
		await settleDeliveries(sandbox);
		const { deliveries } = await detail(sandbox, token, id);
		expect(
			deliveries.filter((delivery) => delivery.user_id === userOf('threePhones')),
		).toHaveLength(3);
		expect(
			deliveries.filter((delivery) => delivery.user_id === userOf('oneLoggedOutOfTwo')),
		).toEqual([expect.objectContaining({ status: 'sent' })]);
	});

	test('users without an active app get a single no_device entry, with sent_at, and the send is still sent', async () => {
		const users = [
			userOf('noPhone'),
			userOf('loggedOut'),
			userOf('noPermission'),
			userOf('onePhone'),
		];
		const { id } = await send(sandbox, token, users);
		await settleDeliveries(sandbox);
		const { notification, deliveries } = await detail(sandbox, token, id);
		for (const user of users.slice(0, 3)) {
			expect(deliveries.filter((delivery) => delivery.user_id === user)).toEqual([
				{ user_id: user, status: 'no_device', sent_at: expect.any(String), opened_at: null },
			]);
		}
		expect(notification.status).toBe('sent');
		expect(notification.stats).toEqual({
			targeted_users: 4,
			devices: 1,
			sent: 1,
			failed: 0,
			opened: 0,
			no_device: 3,
		});
	});

	test('an uninstalled app fails permanently and is not retried: the send is failed for good', async () => {
		const { id } = await send(sandbox, token, [userOf('uninstalled'), userOf('noPhone')]);
		await sandbox.clock.advance(1500);
		const first = await detail(sandbox, token, id);
		expect(first.notification.status).toBe('failed');
		await sandbox.clock.advance(60_000);
		const later = await detail(sandbox, token, id);
		expect(later.notification.status).toBe('failed');
		expect(later.deliveries[0]).toEqual({ ...first.deliveries[0], status: 'failed' });
		expect(later.notification.stats).toMatchObject({
			devices: 1,
			sent: 0,
			failed: 1,
			no_device: 1,
		});
	});

	test('a transient failure is retried and then succeeds: partially_failed, then sent (retriesVisible default)', async () => {
		const { id } = await send(sandbox, token, [userOf('flaky'), userOf('onePhone')]);
		await sandbox.clock.advance(1500);
		const interim = await detail(sandbox, token, id);
		expect(interim.notification.status).toBe('partially_failed');
		expect(interim.deliveries.map((delivery) => delivery.status)).toEqual(['failed', 'sent']);
		await sandbox.clock.advance(1500);
		const done = await detail(sandbox, token, id);
		expect(done.notification.status).toBe('sent');
		const retriedAt = after(done.notification.sent_at, 3000);
		expect(done.deliveries[0]).toEqual({
			user_id: userOf('flaky'),
			status: 'sent',
			sent_at: retriedAt,
			opened_at: null,
		});
		expect(done.notification.stats).toMatchObject({ devices: 2, sent: 2, failed: 0 });
	});

	test('a flaky phone alone: failed, then sent after the retry', async () => {
		const { id } = await send(sandbox, token, [userOf('flaky')]);
		await sandbox.clock.advance(1500);
		expect((await detail(sandbox, token, id)).notification.status).toBe('failed');
		await sandbox.clock.advance(1500);
		expect((await detail(sandbox, token, id)).notification.status).toBe('sent');
	});

	test('a transient failure that persists is retried, then given up: partially_failed for good', async () => {
		const { id } = await send(sandbox, token, [userOf('unreachable'), userOf('onePhone')]);
		const statuses: string[] = [];
		for (let round = 1; round <= 4; round++) {
			await sandbox.clock.advance(1500);
			const { notification, deliveries } = await detail(sandbox, token, id);
			const attemptMs = Date.parse(deliveries[0].sent_at) - Date.parse(notification.sent_at);
			statuses.push(`${notification.status}:${deliveries[0].status}@${attemptMs}`);
		}
		expect(statuses).toEqual([
			'partially_failed:failed@1500',
			'partially_failed:failed@3000',
			'partially_failed:failed@4500',
			'partially_failed:failed@4500',
		]);
	});

	test('retriesVisible=false (not shown switch): the send stays sending until the retries are over', async () => {
		sandbox.configure({ retriesVisible: false });
		const { id } = await send(sandbox, token, [userOf('flaky'), userOf('onePhone')]);
		await sandbox.clock.advance(1500);
		expect((await detail(sandbox, token, id)).notification.status).toBe('sending');
		await sandbox.clock.advance(1500);
		expect((await detail(sandbox, token, id)).notification.status).toBe('sent');
	});

	test('a mixed audience: partially_failed, counters consistent with the deliveries', async () => {
		const users = (
			['onePhone', 'twoPhones', 'noPhone', 'uninstalled', 'partlyUninstalled', 'flaky'] as const
		).map(userOf);
		const { id } = await send(sandbox, token, users);
		await settleDeliveries(sandbox);
		const { notification, deliveries } = await detail(sandbox, token, id);
		expect(notification.status).toBe('partially_failed');
		expect(notification.stats).toEqual({
			targeted_users: 6,
			devices: 7,
			sent: 5,
			failed: 2,
			opened: 0,
			no_device: 1,
		});
		expectStatsMatchDeliveries(notification.stats, deliveries);
	});

	test('counters stay consistent with the deliveries at every moment, for a large audience', async () => {
		const users = sandbox.orgs.primary.userIds.slice(0, 500);
		const { id } = await send(sandbox, token, users);
		for (let step = 0; step < 5; step++) {
			const { notification, deliveries } = await detail(sandbox, token, id);
			if (deliveries.length > 0) {
				expectStatsMatchDeliveries(notification.stats, deliveries);
				expect(new Set(deliveries.map((delivery) => delivery.user_id))).toEqual(new Set(users));
			}
			expect(notification.stats.targeted_users).toBe(500);
			await sandbox.clock.advance(1000);
		}
	});

	test('the detail record has exactly the spec fields; announcement_id only with recordIncludesAnnouncementId', async () => {
		const { id } = await send(sandbox, token, [userOf('onePhone')], {
			image_url: 'https://cdn.example.com/a.jpg',
			deeplink: 'companionapp://coach',
			announcement_id: 'an-7',
		});
		const answer = await call(sandbox, 'GET', `/push-notification/${id}`, { token });
		expect(answer.body.ok).toBe(true);
		expect(Object.keys(answer.body.data).sort()).toEqual(['deliveries', 'notification']);
		const { notification } = answer.body.data;
		expect(Object.keys(notification).sort()).toEqual(
			[
				'body',
				'created_at',
				'deeplink',
				'id',
				'image_url',
				'scheduled_at',
				'sent_at',
				'stats',
				'status',
				'title',
			].sort(),
		);
		expect(notification).toMatchObject({
			id,
			image_url: 'https://cdn.example.com/a.jpg',
			deeplink: 'companionapp://coach',
			scheduled_at: null,
		});
		sandbox.configure({ recordIncludesAnnouncementId: true });
		expect((await detail(sandbox, token, id)).notification.announcement_id).toBe('an-7');
		const plain = await send(sandbox, token, [userOf('onePhone')]);
		expect((await detail(sandbox, token, plain.id)).notification.announcement_id).toBeNull();
		expect(sandbox.notifications()[0].announcement_id).toBe('an-7');
	});

	test('deliveriesByUser counts, per user, the sends (not canceled) that target them', async () => {
		const [a, b] = sandbox.orgs.primary.usersOfKind('onePhone', 2);
		await send(sandbox, token, [a, b]);
		await send(sandbox, token, [a]);
		const later = await send(sandbox, token, [b], {
			scheduled_at: new Date(sandbox.clock.now() + 86_400_000).toISOString(),
		});
		await call(sandbox, 'POST', `/push-notification/${later.id}/cancel`, { token });
		expect(sandbox.deliveriesByUser(sandbox.orgs.primary.id)).toEqual(
			new Map([
				[a, 2],
				[b, 1],
			]),
		);
		expect(sandbox.deliveriesByUser('secondary')).toEqual(new Map());
	});
});

describe('sandbox delivery timing switches', () => {
	const sandboxes = useTestSandboxes();
	test('deliveryMs 0: delivered at once, yet the 202 still says sending', async () => {
		const sandbox = await sandboxes.start({ ...MANUAL_CLOCK, seedUsers: 20, deliveryMs: 0 });
		const token = await tokenFor(sandbox);
		const { id, status } = await send(sandbox, token, sandbox.orgs.primary.usersOfKind('flaky', 1));
		expect(status).toBe('sending');
		expect((await detail(sandbox, token, id)).notification.status).toBe('sent');
	});

	test('deliveries settle deliveryMs after the send without any clock call', async () => {
		const sandbox = await sandboxes.start({ seedUsers: 20, deliveryMs: 40 });
		const token = await tokenFor(sandbox);
		const { id, status } = await send(
			sandbox,
			token,
			sandbox.orgs.primary.usersOfKind('onePhone', 1),
		);
		expect(status).toBe('sending');
		await new Promise((resolve) => setTimeout(resolve, 60));
		expect((await detail(sandbox, token, id)).notification.status).toBe('sent');
	});
});
