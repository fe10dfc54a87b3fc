/**
 * Paging: GET /user/list by skip/limit pages of 1000 until an empty page (spec); the list of
 * sends, whose paging the spec does not show, read until it proves it has no more, even from a
 * server that ignores `skip`.
 */
import { listNotifications, listUsers, USER_PAGE_SIZE } from '../../nodes/CompanionPush/transport';
import {
	count,
	fakeStore,
	logOf,
	storeFor,
	TRANSPORT_SANDBOX,
	useFakeApis,
	USER_LIST,
	useSandbox,
	useTestSandboxes,
	valueInNode,
	CredentialStore,
} from '../harness';

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
		expect(logOf(sandbox, USER_LIST).map((entry) => [entry.query.skip, entry.query.limit, entry.status])).toEqual([
			['0', '1000', 200],
			['1000', '1000', 200],
			['2000', '1000', 200],
			['2500', '1000', 200],
		]);
	});

	test('a maximum reads only what it needs (1500: a page of 1000, then one of 500)', async () => {
		const users = await valueInNode(store, (context) => listUsers(context, 1500));
		expect(users.map((user) => user.id)).toEqual(sandbox.orgs.primary.userIds.slice(0, 1500));
		expect(logOf(sandbox, USER_LIST).map((entry) => [entry.query.skip, entry.query.limit])).toEqual([
			['0', '1000'],
			['1000', '500'],
		]);
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
		const sends = [3, 2, 1].map((n) => ({ id: `n${n}`, title: `Send ${n}`, body: 'B', status: 'sent', created_at: new Date().toISOString() }));
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
		expect(api.requests.filter((request) => request.path === '/push-notification/list')).toHaveLength(2);
	});

	test('a server ignoring skip and limit, reporting a total: stops on the total', async () => {
		const sends = Array.from({ length: 5 }, (_, n) => ({ id: `t${n}` }));
		const api = await fakeApis.start(() => ({ body: { ok: true, data: { items: sends, total: 5 } } }));
		const store = fakeStore(api);
		const listed = await valueInNode(store, (context) => listNotifications(context));
		expect(listed.map((send) => send.id)).toEqual(['t0', 't1', 't2', 't3', 't4']);
		expect(api.requests.filter((request) => request.path === '/push-notification/list')).toHaveLength(1);
	});
});
