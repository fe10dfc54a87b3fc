import { call, MANUAL_CLOCK, tokenFor, useSandbox, useTestSandboxes } from '../harness/index.cts';

describe('sandbox GET /user/list (spec Endpoints, User record, Limits)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 2500 });
	const sandboxes = useTestSandboxes();
	let token: string;
	beforeAll(async () => {
		token = await tokenFor(sandbox);
	});
	afterEach(() => sandbox.configure({ userListOverLimit: 'clamp', userListIgnoresSkip: false }));

	test('answers a bare array of user records with id, name, lastname, username, email', async () => {
		const answer = await call(sandbox, 'GET', '/user/list?skip=0&limit=3', { token });
		expect(answer.status).toBe(200);
		expect(Array.isArray(answer.body)).toBe(true);
		expect(answer.body).toHaveLength(3);
		for (const user of answer.body) {
			expect(Object.keys(user).sort()).toEqual(['email', 'id', 'lastname', 'name', 'username']);
			for (const value of Object.values(user)) expect(typeof value).toBe('string');
			expect(user.email).toContain('@');
		}
		expect(answer.body.map((user: any) => user.id)).toEqual(
			sandbox.orgs.primary.userIds.slice(0, 3),
		);
	});

	test('defaults (not shown): skip 0 and limit 100', async () => {
		const answer = await call(sandbox, 'GET', '/user/list', { token });
		expect(answer.body).toHaveLength(100);
		expect(answer.body[0].id).toBe(sandbox.orgs.primary.userIds[0]);
	});

	test('limit above 1000 (not shown) is clamped to 1000; with userListOverLimit=reject it answers 400', async () => {
		expect((await call(sandbox, 'GET', '/user/list?limit=5000', { token })).body).toHaveLength(
			1000,
		);
		sandbox.configure({ userListOverLimit: 'reject' });
		const rejected = await call(sandbox, 'GET', '/user/list?limit=5000', { token });
		expect(rejected.status).toBe(400);
		expect(rejected.body.error.field).toBe('limit');
	});

	test('skip past the end answers an empty array; invalid skip or limit answers 400 naming the parameter', async () => {
		expect((await call(sandbox, 'GET', '/user/list?skip=2500', { token })).body).toEqual([]);
		for (const [query, field] of [
			['skip=-1', 'skip'],
			['limit=0', 'limit'],
			['limit=ten', 'limit'],
			['skip=1.5', 'skip'],
		]) {
			const answer = await call(sandbox, 'GET', `/user/list?${query}`, { token });
			expect(answer.status).toBe(400);
			expect(answer.body.error.field).toBe(field);
		}
	});

	test('userListIgnoresSkip: every skip answers the first page, so the list never comes back empty', async () => {
		sandbox.configure({ userListIgnoresSkip: true });
		const firstPage = sandbox.orgs.primary.userIds.slice(0, 1000);
		for (const skip of [0, 1000, 2500, 9000]) {
			const answer = await call(sandbox, 'GET', `/user/list?skip=${skip}&limit=1000`, { token });
			expect(answer.body.map((user: any) => user.id)).toEqual(firstPage);
		}
	});

	test('same seed, same users; another seed, other users', async () => {
		const again = await sandboxes.start({ ...MANUAL_CLOCK, seedUsers: 2500 });
		const other = await sandboxes.start({ ...MANUAL_CLOCK, seedUsers: 2500, seed: 7 });
		const first = await call(again, 'GET', '/user/list?limit=50', { token: await tokenFor(again) });
		expect(first.body).toEqual((await call(sandbox, 'GET', '/user/list?limit=50', { token })).body);
		expect(again.orgs.primary.clientSecret).toBe(sandbox.orgs.primary.clientSecret);
		expect(other.orgs.primary.userIds[0]).not.toBe(sandbox.orgs.primary.userIds[0]);
		expect(other.orgs.primary.clientSecret).not.toBe(sandbox.orgs.primary.clientSecret);
	});
});

describe('sandbox GET /user/list with 100,000 users', () => {
	const sandboxes = useTestSandboxes();
	// How fast is the benchmark's to say (npm run bench, row 3), not a timed test's.
	test('paging by skip += page size until an empty array reads every user exactly once', async () => {
		const sandbox = await sandboxes.start({ seedUsers: 100_000 });
		const token = await tokenFor(sandbox);
		const seen = new Set<string>();
		let pages = 0;
		for (let skip = 0; ; skip += 1000) {
			const page = await call(sandbox, 'GET', `/user/list?skip=${skip}&limit=1000`, { token });
			pages++;
			if (page.body.length === 0) break;
			for (const user of page.body) seen.add(user.id);
		}
		expect(pages).toBe(101);
		expect(seen.size).toBe(100_000);
	});
});
