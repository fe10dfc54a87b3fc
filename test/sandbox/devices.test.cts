import { USER_KINDS } from '../../sandbox/index.cts';
import { call, MANUAL_CLOCK, tokenFor, useSandbox, useTestSandboxes } from '../harness/index.cts';

describe('sandbox devices (spec "What the service does" 6-8, GET /user-device/users)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 500 });
	const sandboxes = useTestSandboxes();

	test('GET /user-device/users lists exactly the users with an active app, with their count', async () => {
		const answer = await call(sandbox, 'GET', '/user-device/users', {
			token: await tokenFor(sandbox),
		});
		expect(answer.status).toBe(200);
		const { primary } = sandbox.orgs;
		const expected = primary.userIds.filter((id) =>
			primary.devicesOf(id).some((device) => device.session === 'active'),
		);
		expect(answer.body).toEqual({ ok: true, data: { user_ids: expected, count: expected.length } });
		expect(expected.length).toBeGreaterThan(0);
		expect(expected.length).toBeLessThan(primary.userIds.length);
	});

	test('logged-out, no-permission and phoneless users are not active; uninstalled ones still look active', async () => {
		const answer = await call(sandbox, 'GET', '/user-device/users', {
			token: await tokenFor(sandbox),
		});
		const active = new Set<string>(answer.body.data.user_ids);
		const { primary } = sandbox.orgs;
		for (const kind of ['noPhone', 'loggedOut', 'noPermission'] as const) {
			for (const id of primary.usersOfKind(kind)) expect(active.has(id)).toBe(false);
		}
		for (const kind of [
			'onePhone',
			'twoPhones',
			'uninstalled',
			'flaky',
			'oneLoggedOutOfTwo',
		] as const) {
			for (const id of primary.usersOfKind(kind)) expect(active.has(id)).toBe(true);
		}
	});

	test('every kind of user exists, even in a tiny org, and the helpers agree with each other', async () => {
		const tiny = await sandboxes.start({
			...MANUAL_CLOCK,
			seedUsers: USER_KINDS.length,
			secondaryUsers: 1,
		});
		const tinyOrg = tiny.orgs.primary;
		USER_KINDS.forEach((kind, index) => {
			expect(tinyOrg.kindOf(tinyOrg.userIds[index])).toBe(kind);
			expect(tinyOrg.usersOfKind(kind)).toEqual([tinyOrg.userIds[index]]);
			expect(tinyOrg.userKinds[kind]).toEqual([tinyOrg.userIds[index]]);
		});
		const { primary, secondary } = sandbox.orgs;
		expect(primary.kindOf(secondary.userIds[0])).toBeUndefined();
		expect(primary.devicesOf(primary.usersOfKind('twoPhones', 1)[0])).toHaveLength(2);
		expect(primary.devicesOf(primary.usersOfKind('threePhones', 1)[0])).toHaveLength(3);
		expect(primary.devicesOf(primary.usersOfKind('noPhone', 1)[0])).toEqual([]);
		expect(primary.devicesOf(primary.usersOfKind('uninstalled', 1)[0])).toEqual([
			{ index: 0, session: 'active', behaviour: 'uninstalled' },
		]);
		const total = USER_KINDS.reduce((sum, kind) => sum + primary.userKinds[kind].length, 0);
		expect(total).toBe(primary.userIds.length);
	});

	test('the mix is deterministic: same seed, same kinds', async () => {
		const again = await sandboxes.start({ ...MANUAL_CLOCK, seedUsers: 500 });
		for (const kind of USER_KINDS)
			expect(again.orgs.primary.usersOfKind(kind)).toEqual(sandbox.orgs.primary.usersOfKind(kind));
	});
});
