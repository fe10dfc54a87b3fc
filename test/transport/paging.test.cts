/**
 * Paging: GET /user/list by skip/limit pages of 1000 until an empty page (spec); the list of
 * sends, whose paging the spec does not show, read until it proves it has no more, even from a
 * server that ignores `skip`. Neither reading is endless, whatever the API answers: a user page
 * bringing no new user ends it, and no list is read beyond the pages what was asked can take.
 */
import { listNotifications, listUsers, USER_PAGE_SIZE } from '../../nodes/CompanionPush/transport';
import { MAX_SENDS_READ, MAX_USERS_READ } from '../../nodes/CompanionPush/transport/endpoints';
import {
	count,
	CredentialStore,
	errorInNode,
	fakeStore,
	logOf,
	storeFor,
	TRANSPORT_SANDBOX,
	useFakeApis,
	USER_LIST,
	useSandbox,
	useTestSandboxes,
	valueInNode,
} from '../harness/index.cts';
import type { FakeApi } from '../harness/index.cts';

describe('listUsers over 2500 users', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, seedUsers: 2500, resetBeforeEach: true });
	const sandboxes = useTestSandboxes();
	let store: CredentialStore;
	beforeAll(async () => {
		store = storeFor(sandbox);
	});

	test('reads pages of 1000 and stops on the empty page: 4 calls, every user once', async () => {
		expect(USER_PAGE_SIZE).toBe(1000);
		const users = await valueInNode(store, (context) => listUsers(context));
		expect(users).toHaveLength(2500);
		expect(new Set(users.map((user) => user.id)).size).toBe(2500);
		expect(users.map((user) => user.id)).toEqual(sandbox.orgs.primary.userIds);
		expect(
			logOf(sandbox, USER_LIST).map((entry) => [entry.query.skip, entry.query.limit, entry.status]),
		).toEqual([
			['0', '1000', 200],
			['1000', '1000', 200],
			['2000', '1000', 200],
			['2500', '1000', 200],
		]);
	});

	test('a maximum reads only what it needs (1500: a page of 1000, then one of 500)', async () => {
		const users = await valueInNode(store, (context) => listUsers(context, 1500));
		expect(users.map((user) => user.id)).toEqual(sandbox.orgs.primary.userIds.slice(0, 1500));
		expect(logOf(sandbox, USER_LIST).map((entry) => [entry.query.skip, entry.query.limit])).toEqual(
			[
				['0', '1000'],
				['1000', '500'],
			],
		);
	});

	test('exactly 2000 users: the third page comes back empty and ends the reading', async () => {
		const exactly2000 = await sandboxes.start({ ...TRANSPORT_SANDBOX, seedUsers: 2000 });
		const users = await valueInNode(storeFor(exactly2000), (context) => listUsers(context));
		expect(users).toHaveLength(2000);
		expect(count(exactly2000, USER_LIST)).toBe(3);
	});
});

describe('listNotifications on a server that ignores skip', () => {
	const fakeApis = useFakeApis();

	test('stops when a page holds only sends already seen: 2 calls, each send once', async () => {
		const sends = [3, 2, 1].map((n) => ({
			id: `n${n}`,
			title: `Send ${n}`,
			body: 'B',
			status: 'sent',
			created_at: new Date().toISOString(),
		}));
		const api = await fakeApis.start(() => ({ body: { ok: true, data: sends } }));
		const store = fakeStore(api);
		const listed = await valueInNode(store, (context) => listNotifications(context));
		expect(listed.map((send) => send.id)).toEqual(['n3', 'n2', 'n1']);
		const reads = api.requests.filter((request) => request.path === '/push-notification/list');
		expect(reads.map((request) => request.query.skip)).toEqual(['0', '3']);
	});

	test('a server ignoring skip with a full page of 100: still 2 calls, 100 sends', async () => {
		const sends = Array.from({ length: 100 }, (_, n) => ({ id: `s${100 - n}`, status: 'sent' }));
		const api = await fakeApis.start(() => ({ body: sends }));
		const store = fakeStore(api);
		const listed = await valueInNode(store, (context) => listNotifications(context));
		expect(listed).toHaveLength(100);
		expect(
			api.requests.filter((request) => request.path === '/push-notification/list'),
		).toHaveLength(2);
	});

	test('a server ignoring skip and limit, reporting a total: stops on the total', async () => {
		const sends = Array.from({ length: 5 }, (_, n) => ({ id: `t${n}` }));
		const api = await fakeApis.start(() => ({
			body: { ok: true, data: { items: sends, total: 5 } },
		}));
		const store = fakeStore(api);
		const listed = await valueInNode(store, (context) => listNotifications(context));
		expect(listed.map((send) => send.id)).toEqual(['t0', 't1', 't2', 't3', 't4']);
		expect(
			api.requests.filter((request) => request.path === '/push-notification/list'),
		).toHaveLength(1);
	});
});

describe('a user list that does not end', () => {
	const fakeApis = useFakeApis();
	/** Users u<from>..u<from+count-1>, as the API lists them. */
	const usersFrom = (from: number, count: number) =>
		Array.from({ length: count }, (_, n) => ({ id: `u${from + n}`, name: 'N' }));
	/** The fake API answers with `page(request number, skip, limit)`, and an empty page after `guard`
	 * requests, so that a reading without a bound still ends and the test can count what it did. */
	async function userListApi(
		page: (index: number, skip: number, limit: number) => unknown[],
		guard = 1_200,
	) {
		let index = 0;
		return await fakeApis.start((request) => {
			if (request.path !== '/user/list') return { status: 404, body: {} };
			index++;
			return {
				body:
					index > guard ? [] : page(index, Number(request.query.skip), Number(request.query.limit)),
			};
		});
	}
	const userListReads = (api: FakeApi) =>
		api.requests.filter((request) => request.path === '/user/list').length;

	test('an API that ignores skip (the same full page each time): Return All stops at the second page with a clear error', async () => {
		const api = await userListApi(() => usersFrom(0, 1000));
		const error = await errorInNode(fakeStore(api), (context) => listUsers(context));
		expect(error.message).toBe(
			'Reading the user list failed: the API answered page 2 (skip 1000) with users already read: it seems to ignore "skip", so the users after the first 1000 cannot be read',
		);
		expect(error.description).toMatch(/Nothing of the list was output/);
		expect(userListReads(api)).toBe(2);
	});

	test('an API that ignores skip but sends the whole list at once (5 users): read whole, each user once', async () => {
		const api = await userListApi(() => usersFrom(0, 5));
		const users = await valueInNode(fakeStore(api), (context) => listUsers(context));
		expect(users.map((user) => user.id)).toEqual(['u0', 'u1', 'u2', 'u3', 'u4']);
		expect(userListReads(api)).toBe(2);
	});

	test('an API that trickles one new user per page after a full one: a Limit of 2000 stops after 3 pages', async () => {
		const api = await userListApi((index) =>
			index === 1 ? usersFrom(0, 1000) : usersFrom(1000 + index, 1),
		);
		const error = await errorInNode(fakeStore(api), (context) => listUsers(context, 2000));
		expect(error.message).toBe(
			'Reading the user list failed: the API kept sending pages: 3 pages (1002 users) are more than 2000 users take',
		);
		expect(userListReads(api)).toBe(3);
	});

	test(`an API that never answers an empty page: Return All stops after ${MAX_USERS_READ} users with a clear error`, async () => {
		const api = await userListApi((index) =>
			usersFrom((index - 1) * 1000, 1000).map(({ id }) => ({ id })),
		);
		const error = await errorInNode(fakeStore(api), (context) => listUsers(context));
		expect(error.message).toBe(
			`Reading the user list failed: the organization has more than ${MAX_USERS_READ} users, more than Return All reads`,
		);
		expect(error.description).toMatch(/^Use a Limit/);
		expect(userListReads(api)).toBe(MAX_USERS_READ / 1000 + 1);
	}, 120_000);
});

describe('a list of sends that does not end', () => {
	const fakeApis = useFakeApis();
	const sendsFrom = (from: number, count: number) =>
		Array.from({ length: count }, (_, n) => ({ id: `s${from + n}` }));
	async function sendListApi(page: (index: number) => unknown[], guard = 1_200) {
		let index = 0;
		return await fakeApis.start((request) => {
			if (request.path !== '/push-notification/list') return { status: 404, body: {} };
			index++;
			return { body: index > guard ? [] : page(index) };
		});
	}
	const listReads = (api: FakeApi) =>
		api.requests.filter((request) => request.path === '/push-notification/list').length;

	test('new sends on every page: Return All stops once more pages came than the most it reads take', async () => {
		const api = await sendListApi((index) => sendsFrom((index - 1) * 100, 100));
		const error = await errorInNode(fakeStore(api), (context) => listNotifications(context));
		expect(error.message).toBe(
			`Reading the list of sends failed: the API kept sending pages: ${MAX_SENDS_READ / 100 + 1} pages (${MAX_SENDS_READ + 100} sends) are more than ${MAX_SENDS_READ} sends take`,
		);
		expect(listReads(api)).toBe(MAX_SENDS_READ / 100 + 1);
	}, 120_000);

	test('a full page, then one new send per page: a Limit of 250 stops after 4 pages', async () => {
		const api = await sendListApi((index) =>
			index === 1 ? sendsFrom(0, 100) : sendsFrom(1000 + index, 1),
		);
		const error = await errorInNode(fakeStore(api), (context) =>
			listNotifications(context, { max: 250 }),
		);
		expect(error.message).toBe(
			'Reading the list of sends failed: the API kept sending pages: 4 pages (103 sends) are more than 250 sends take',
		);
		expect(listReads(api)).toBe(4);
	});
});
