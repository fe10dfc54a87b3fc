import { call, detail, MANUAL_CLOCK, send, tokenFor, useSandbox } from '../harness/index.cts';

/**
 * Differences the spec leaves an API free to make between a send as requested and as shown
 * (notifications/storedForms.ts): how a cut text is counted, the case of user IDs, and whom
 * targeted_users counts. By default what was sent is shown.
 */
describe('sandbox stored forms: storedTextCutsBy, userIdsShownLowerCase, targetedUsersCount', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20, deliveryMs: 0 });
	let token: string;
	let member: string;
	let outsider: string;
	const listed = async () =>
		(await call(sandbox, 'GET', '/push-notification/list', { token })).body.data.notifications[0];
	beforeAll(() => {
		member = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
		outsider = sandbox.orgs.secondary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		await sandbox.reset();
		token = await tokenFor(sandbox);
	});

	test('storedTextCutsBy: code points by default; UTF-16 units cut inside an emoji and keep its first half', async () => {
		sandbox.configure({ storedTitleMaxLength: 5 });
		const byCodePoints = await send(sandbox, token, [member], { title: '😀😀😀' });
		expect((await detail(sandbox, token, byCodePoints.id)).notification.title).toBe('😀😀😀');
		sandbox.configure({ storedTextCutsBy: 'utf16Units' });
		const byUnits = await send(sandbox, token, [member], { title: '😀😀😀' });
		expect((await detail(sandbox, token, byUnits.id)).notification.title).toBe('😀😀\ud83d');
		expect((await listed()).title).toBe('😀😀\ud83d');
	});

	test('userIdsShownLowerCase: off, an ID in another case is outside the organization; on, it is the user, shown in lower case', async () => {
		const upperCase = member.toUpperCase();
		const exact = await send(sandbox, token, [upperCase]);
		expect((await detail(sandbox, token, exact.id)).deliveries).toEqual([]);
		expect((await listed()).target_user_ids).toEqual([upperCase]);

		sandbox.configure({ userIdsShownLowerCase: true });
		const folded = await send(sandbox, token, [upperCase]);
		const { notification, deliveries } = await detail(sandbox, token, folded.id);
		expect(notification.stats.targeted_users).toBe(1);
		expect(deliveries.map((delivery: { user_id: string }) => delivery.user_id)).toEqual([member]);
		expect((await listed()).target_user_ids).toEqual([member]);
	});

	test('targetedUsersCount: members of the organization by default, or every distinct ID sent', async () => {
		const members = await send(sandbox, token, [member, outsider, outsider]);
		expect((await detail(sandbox, token, members.id)).notification.stats.targeted_users).toBe(1);
		sandbox.configure({ targetedUsersCount: 'allRecipients' });
		const all = await send(sandbox, token, [member, outsider, outsider]);
		expect((await detail(sandbox, token, all.id)).notification.stats.targeted_users).toBe(2);
	});

	test('over the admin HTTP API; bad values refused naming the setting', async () => {
		const changed = await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { storedTextCutsBy: 'utf16Units', userIdsShownLowerCase: true },
		});
		expect(changed.body.settings).toMatchObject({
			storedTextCutsBy: 'utf16Units',
			userIdsShownLowerCase: true,
			targetedUsersCount: 'organizationMembers',
		});
		const refused = await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { targetedUsersCount: 'everyone' },
		});
		expect(refused.status).toBe(400);
		expect(refused.body.error.message).toMatch(/targetedUsersCount/);
		expect(() => sandbox.configure({ storedTextCutsBy: 'bytes' as never })).toThrow(
			/storedTextCutsBy/,
		);
	});
});
