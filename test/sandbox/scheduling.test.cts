import {
	call,
	detail,
	MANUAL_CLOCK,
	send,
	settleDeliveries,
	tokenFor,
	useSandbox,
} from '../harness/index.cts';

describe('sandbox scheduling and cancel (spec Send transitions, POST /push-notification/{id}/cancel)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 30, resetBeforeEach: true });
	let token: string;
	let user: string;
	const inMs = (ms: number) => new Date(sandbox.clock.now() + ms).toISOString();
	const cancel = (id: string) =>
		call(sandbox, 'POST', `/push-notification/${id}/cancel`, { token });
	beforeAll(async () => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		token = await tokenFor(sandbox);
	});

	test('scheduled_at in the future: 202 scheduled, no sent_at and no deliveries while waiting', async () => {
		const scheduledAt = inMs(3_600_000);
		const accepted = await send(sandbox, token, [user], { scheduled_at: scheduledAt });
		expect(accepted.status).toBe('scheduled');
		await sandbox.clock.advance(3_599_999);
		const { notification, deliveries } = await detail(sandbox, token, accepted.id);
		expect(notification).toMatchObject({
			status: 'scheduled',
			scheduled_at: scheduledAt,
			sent_at: null,
		});
		expect(deliveries).toEqual([]);
	});

	test('dispatched when the clock reaches scheduled_at, then delivered in the background', async () => {
		const scheduledAt = inMs(60_000);
		const { id } = await send(sandbox, token, [user], { scheduled_at: scheduledAt });
		await sandbox.clock.set(scheduledAt);
		const dispatched = await detail(sandbox, token, id);
		expect(dispatched.notification).toMatchObject({ status: 'sending', sent_at: scheduledAt });
		await settleDeliveries(sandbox);
		const done = await detail(sandbox, token, id);
		expect(done.notification.status).toBe('sent');
		expect(done.deliveries).toHaveLength(1);
	});

	test('scheduleLatenessMs delays the dispatch; the send can still be canceled in that window', async () => {
		sandbox.configure({ scheduleLatenessMs: 90_000 });
		const scheduledAt = inMs(60_000);
		const late = await send(sandbox, token, [user], { scheduled_at: scheduledAt });
		const canceledLate = await send(sandbox, token, [user], { scheduled_at: scheduledAt });
		await sandbox.clock.advance(60_000 + 89_999);
		expect((await detail(sandbox, token, late.id)).notification.status).toBe('scheduled');
		expect((await cancel(canceledLate.id)).status).toBe(200);
		await sandbox.clock.advance(1);
		const { notification } = await detail(sandbox, token, late.id);
		expect(notification.status).toBe('sending');
		expect(Date.parse(notification.sent_at) - Date.parse(scheduledAt)).toBe(90_000);
	});

	test('scheduled_at in the past (or now): sent immediately, and the record shows scheduled_at null', async () => {
		for (const scheduledAt of [inMs(-60_000), inMs(0)]) {
			const accepted = await send(sandbox, token, [user], { scheduled_at: scheduledAt });
			expect(accepted.status).toBe('sending');
			const { notification } = await detail(sandbox, token, accepted.id);
			expect(notification.scheduled_at).toBeNull();
			expect(notification.sent_at).toBe(notification.created_at);
		}
	});

	test('pastScheduledAtShownAs asSent: a past scheduled_at is sent immediately, and list and detail show the time sent', async () => {
		sandbox.configure({ pastScheduledAtShownAs: 'asSent' });
		const scheduledAt = inMs(-60_000);
		const accepted = await send(sandbox, token, [user], { scheduled_at: scheduledAt });
		expect(accepted.status).toBe('sending');
		const { notification } = await detail(sandbox, token, accepted.id);
		expect(notification).toMatchObject({
			scheduled_at: scheduledAt,
			sent_at: notification.created_at,
		});
		const listed = await call(sandbox, 'GET', '/push-notification/list', { token });
		expect(listed.body.data.notifications[0]).toMatchObject({
			id: accepted.id,
			scheduled_at: scheduledAt,
		});
	});

	test('scheduled_at with an offset is read in its zone and shown in UTC', async () => {
		const target = new Date(sandbox.clock.now() + 86_400_000);
		const withOffset = new Date(target.getTime() + 2 * 3_600_000)
			.toISOString()
			.replace('Z', '+02:00');
		const { id } = await send(sandbox, token, [user], { scheduled_at: withOffset });
		expect((await detail(sandbox, token, id)).notification.scheduled_at).toBe(target.toISOString());
	});

	test('cancel while scheduled: 200 {ok, message: "Push notification canceled"}; canceled, never delivered', async () => {
		const { id } = await send(sandbox, token, [user], { scheduled_at: inMs(60_000) });
		const answer = await cancel(id);
		expect(answer.status).toBe(200);
		expect(answer.body).toEqual({ ok: true, message: 'Push notification canceled' });
		await sandbox.clock.advance(600_000);
		const { notification, deliveries } = await detail(sandbox, token, id);
		expect(notification).toMatchObject({ status: 'canceled', sent_at: null });
		expect(deliveries).toEqual([]);
		expect(sandbox.deliveriesByUser().get(user)).toBeUndefined();
	});

	test('cancel of a send that is sending, sent, failed or already canceled: 409 and unchanged', async () => {
		const sending = await send(sandbox, token, [user]);
		const conflict = await cancel(sending.id);
		expect(conflict.status).toBe(409);
		expect(conflict.body.error.code).toBe('not_scheduled');
		expect((await detail(sandbox, token, sending.id)).notification.status).toBe('sending');
		const failed = await send(sandbox, token, sandbox.orgs.primary.usersOfKind('uninstalled', 1));
		await settleDeliveries(sandbox);
		expect((await cancel(sending.id)).status).toBe(409);
		expect((await detail(sandbox, token, sending.id)).notification.status).toBe('sent');
		expect((await cancel(failed.id)).status).toBe(409);
		const scheduled = await send(sandbox, token, [user], { scheduled_at: inMs(60_000) });
		expect((await cancel(scheduled.id)).status).toBe(200);
		expect((await cancel(scheduled.id)).status).toBe(409);
		await sandbox.clock.advance(60_000);
		const dispatched = await send(sandbox, token, [user], { scheduled_at: inMs(1000) });
		await sandbox.clock.advance(1000);
		expect((await cancel(dispatched.id)).status).toBe(409);
	});

	test('a delivered send cannot be deleted: there is no delete endpoint (404), the send stays', async () => {
		const { id } = await send(sandbox, token, [user]);
		await settleDeliveries(sandbox);
		const answer = await call(sandbox, 'DELETE', `/push-notification/${id}`, { token });
		expect(answer.status).toBe(404);
		expect((await detail(sandbox, token, id)).notification.status).toBe('sent');
	});

	test('the clock: advance and set move time; going backwards is refused', async () => {
		const before = sandbox.clock.now();
		await sandbox.clock.advance(1234);
		expect(sandbox.clock.now()).toBe(before + 1234);
		await sandbox.clock.set('2030-01-01T00:00:00.000Z');
		expect(new Date(sandbox.clock.now()).toISOString()).toBe('2030-01-01T00:00:00.000Z');
		await expect(sandbox.clock.set('2029-01-01T00:00:00Z')).rejects.toThrow(/backwards/);
		await expect(sandbox.clock.advance(-1)).rejects.toThrow(/non-negative/);
	});
});
