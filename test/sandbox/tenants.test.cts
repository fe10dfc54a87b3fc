import {
	call,
	detail,
	MANUAL_CLOCK,
	send,
	sendBody,
	settleDeliveries,
	tokenFor,
	useSandbox,
} from '../harness/index.cts';

describe('sandbox tenants (spec "What the service does" 10, Authentication 1 and 6, GET/cancel errors)', () => {
	const sandbox = useSandbox({
		...MANUAL_CLOCK,
		seedUsers: 30,
		secondaryUsers: 30,
		resetBeforeEach: true,
	});
	let primaryToken: string;
	let secondaryToken: string;
	beforeEach(async () => {
		primaryToken = await tokenFor(sandbox);
		secondaryToken = await tokenFor(sandbox, sandbox.orgs.secondary);
	});

	test('each organization has its own credentials, users and user list', async () => {
		const { primary, secondary } = sandbox.orgs;
		expect(primary.id).not.toBe(secondary.id);
		expect(primary.clientId).not.toBe(secondary.clientId);
		expect(primary.userIds.filter((id) => secondary.userIds.includes(id))).toEqual([]);
		const primaryPage = await call(sandbox, 'GET', '/user/list?limit=1000', {
			token: primaryToken,
		});
		const secondaryPage = await call(sandbox, 'GET', '/user/list?limit=1000', {
			token: secondaryToken,
		});
		expect(primaryPage.body.map((user: any) => user.id)).toEqual(primary.userIds);
		expect(secondaryPage.body.map((user: any) => user.id)).toEqual(secondary.userIds);
	});

	test('user ids of another organization are silently not notified and not counted in targeted_users', async () => {
		const own = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
		const foreign = sandbox.orgs.secondary.usersOfKind('onePhone', 2);
		const { id } = await send(sandbox, primaryToken, [own, ...foreign, 'no-such-user']);
		await settleDeliveries(sandbox);
		const { notification, deliveries } = await detail(sandbox, primaryToken, id);
		expect(deliveries.map((delivery) => delivery.user_id)).toEqual([own]);
		expect(notification.stats.targeted_users).toBe(1);
		expect(notification.status).toBe('sent');
		expect(sandbox.deliveriesByUser().get(foreign[0])).toBeUndefined();
	});

	test('a send to ids of another organization only is accepted, reaches nobody, and is sent', async () => {
		const { id } = await send(
			sandbox,
			primaryToken,
			sandbox.orgs.secondary.usersOfKind('twoPhones', 3),
		);
		await settleDeliveries(sandbox);
		const { notification, deliveries } = await detail(sandbox, primaryToken, id);
		expect(deliveries).toEqual([]);
		expect(notification.stats).toEqual({
			targeted_users: 0,
			devices: 0,
			sent: 0,
			failed: 0,
			opened: 0,
			no_device: 0,
		});
		expect(notification.status).toBe('sent');
	});

	test('GET /push-notification/{id} of another organization answers 403; an unknown id 404', async () => {
		const { id } = await send(
			sandbox,
			secondaryToken,
			sandbox.orgs.secondary.usersOfKind('onePhone', 1),
		);
		expect(
			(await call(sandbox, 'GET', `/push-notification/${id}`, { token: primaryToken })).status,
		).toBe(403);
		expect(
			(await call(sandbox, 'GET', `/push-notification/${id}`, { token: secondaryToken })).status,
		).toBe(200);
		const unknown = await call(
			sandbox,
			'GET',
			'/push-notification/00000000-0000-0000-0000-000000000000',
			{ token: primaryToken },
		);
		expect(unknown.status).toBe(404);
		expect(unknown.body.error.code).toBe('not_found');
	});

	test("cancel of another organization's send answers 403 and leaves it scheduled; an unknown id 404", async () => {
		const later = new Date(sandbox.clock.now() + 3_600_000).toISOString();
		const { id } = await send(
			sandbox,
			secondaryToken,
			sandbox.orgs.secondary.usersOfKind('onePhone', 1),
			{ scheduled_at: later },
		);
		expect(
			(await call(sandbox, 'POST', `/push-notification/${id}/cancel`, { token: primaryToken }))
				.status,
		).toBe(403);
		expect((await detail(sandbox, secondaryToken, id)).notification.status).toBe('scheduled');
		expect(
			(await call(sandbox, 'POST', '/push-notification/nope/cancel', { token: primaryToken }))
				.status,
		).toBe(404);
	});

	test("the list holds only the caller organization's sends", async () => {
		const mine = await send(sandbox, primaryToken, sandbox.orgs.primary.usersOfKind('onePhone', 1));
		const theirs = await send(
			sandbox,
			secondaryToken,
			sandbox.orgs.secondary.usersOfKind('onePhone', 1),
		);
		const primaryList = await call(sandbox, 'GET', '/push-notification/list', {
			token: primaryToken,
		});
		const secondaryList = await call(sandbox, 'GET', '/push-notification/list', {
			token: secondaryToken,
		});
		expect(primaryList.body.data.notifications.map((item: any) => item.id)).toEqual([mine.id]);
		expect(secondaryList.body.data.notifications.map((item: any) => item.id)).toEqual([theirs.id]);
		expect(sandbox.notifications(sandbox.orgs.primary.id).map((record) => record.id)).toEqual([
			mine.id,
		]);
	});

	test('a credential tied to a non-admin user gets 403 on send (and cancel); it may read', async () => {
		const token = await tokenFor(sandbox, sandbox.nonAdminCredential);
		const refused = await call(sandbox, 'POST', '/push-notification/send', {
			token,
			body: sendBody(sandbox.orgs.primary.userIds.slice(0, 1)),
		});
		expect(refused.status).toBe(403);
		expect(refused.body.error.message).toMatch(/administrator/);
		expect(sandbox.notifications()).toEqual([]);
		const later = new Date(sandbox.clock.now() + 3_600_000).toISOString();
		const { id } = await send(sandbox, primaryToken, sandbox.orgs.primary.userIds.slice(0, 1), {
			scheduled_at: later,
		});
		expect((await call(sandbox, 'POST', `/push-notification/${id}/cancel`, { token })).status).toBe(
			403,
		);
		expect((await call(sandbox, 'GET', `/push-notification/${id}`, { token })).status).toBe(200);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
	});
});
