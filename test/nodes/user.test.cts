/**
 * User > Get Many (the user list, paged by 1000 until an empty page) and User > Get With Active
 * App (one item per user, or one item with the IDs). A user list that never ends fails the node
 * (and an All Users send) with a clear error instead of reading forever.
 */
import {
	ACTIVE_USERS,
	count,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	pairedOf,
	REFRESH,
	runOn,
	SEND,
	sendParameters,
	USER_LIST,
	useSandbox,
} from '../harness/index.cts';

describe('User (2500 users)', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 2500, resetBeforeEach: true });

	const pages = () =>
		logOf(sandbox, USER_LIST).map((entry) => [Number(entry.query.skip), Number(entry.query.limit)]);

	test('Get Many, Return All: 3 pages of up to 1000 and 1 empty one; every user once, in the API order', async () => {
		const { items: output, error } = await runOn(sandbox, {
			parameters: { resource: 'user', operation: 'getMany', returnAll: true },
		});

		expect(error).toBeUndefined();
		expect(pages()).toEqual([
			[0, 1000],
			[1000, 1000],
			[2000, 1000],
			[2500, 1000],
		]);
		expect(jsonOf(output).map((json) => json.id)).toEqual(sandbox.orgs.primary.userIds);
		expect(Object.keys(output[0].json).sort()).toEqual([
			'email',
			'id',
			'lastname',
			'name',
			'username',
		]);
		expect(pairedOf(output).every((paired) => paired.length === 1 && paired[0] === 0)).toBe(true);
		expect(count(sandbox, REFRESH)).toBe(1);
	});

	test.each([
		[5, [[0, 5]]],
		[
			1500,
			[
				[0, 1000],
				[1000, 500],
			],
		],
		[
			2500,
			[
				[0, 1000],
				[1000, 1000],
				[2000, 500],
			],
		],
		[
			3000,
			[
				[0, 1000],
				[1000, 1000],
				[2000, 1000],
				[2500, 500],
			],
		],
	])('Get Many, Limit %d: asks no more than needed', async (limit, expectedPages) => {
		const { items: output } = await runOn(sandbox, {
			parameters: { resource: 'user', operation: 'getMany', limit },
		});
		expect(output).toHaveLength(Math.min(limit, 2500));
		expect(jsonOf(output).map((json) => json.id)).toEqual(
			sandbox.orgs.primary.userIds.slice(0, limit),
		);
		expect(pages()).toEqual(expectedPages);
	});

	const inactiveKinds = new Set(['noPhone', 'loggedOut', 'noPermission']);
	const activeUsers = () =>
		sandbox.orgs.primary.userIds.filter(
			(id) => !inactiveKinds.has(sandbox.orgs.primary.kindOf(id)!),
		);

	test('Get With Active App: one item per user who can receive notifications now, one call', async () => {
		const { items: output, error } = await runOn(sandbox, {
			parameters: { resource: 'user', operation: 'getActive' },
		});

		expect(error).toBeUndefined();
		expect(
			jsonOf(output)
				.map((json) => json.id)
				.sort(),
		).toEqual(activeUsers().sort());
		expect(output.length).toBeLessThan(2500);
		expect(Object.keys(output[0].json)).toEqual(['id']);
		expect(count(sandbox, ACTIVE_USERS)).toBe(1);
		expect(count(sandbox, USER_LIST)).toBe(0);
	});

	test('Get With Active App, IDs Only: one item with the list and its count', async () => {
		const { items: output } = await runOn(sandbox, {
			parameters: { resource: 'user', operation: 'getActive', options: { idsOnly: true } },
		});

		expect(output).toHaveLength(1);
		expect((output[0].json.userIds as string[]).sort()).toEqual(activeUsers().sort());
		expect(output[0].json.count).toBe(activeUsers().length);
		expect(pairedOf(output)).toEqual([[0]]);
		expect(count(sandbox, ACTIVE_USERS)).toBe(1);
	});

	test('Get With Active App, IDs Only, for 2 input items: one item each, paired', async () => {
		const { items: output } = await runOn(sandbox, {
			items: [{}, {}],
			parameters: { resource: 'user', operation: 'getActive', options: { idsOnly: true } },
		});
		expect(pairedOf(output)).toEqual([[0], [1]]);
		expect(count(sandbox, REFRESH)).toBe(1);
	});
});

describe('User list that ignores skip (it never comes back empty)', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 2500, resetBeforeEach: true });
	beforeEach(() => sandbox.configure({ userListIgnoresSkip: true }));

	test('Get Many, Return All: the node fails after 2 pages with a clear error, and outputs nothing', async () => {
		const { items, error } = await runOn(sandbox, {
			parameters: { resource: 'user', operation: 'getMany', returnAll: true },
		});
		expect(error?.message).toBe(
			'Reading the user list failed: the API answered page 2 (skip 1000) with users already read: it seems to ignore "skip", so the users after the first 1000 cannot be read',
		);
		expect(items).toEqual([]);
		expect(count(sandbox, USER_LIST)).toBe(2);
	});

	test('Send to All Users: the audience cannot be read whole, so nothing is sent', async () => {
		const { error } = await runOn(sandbox, {
			parameters: sendParameters({ audience: 'allUsers' }),
		});
		expect(error?.message).toMatch(
			/^Reading the user list failed: the API answered page 2 \(skip 1000\) with users already read/,
		);
		expect(count(sandbox, USER_LIST)).toBe(2);
		expect(count(sandbox, SEND)).toBe(0);
	});
});
