import { call, detail, MANUAL_CLOCK, send, tokenFor, useSandbox } from '../harness/index.cts';

const SEND = 'POST /push-notification/send';

/**
 * The list's paging and filters are not shown in the API specification: the sandbox keeps one
 * default (every registered send, skip/limit honoured, every field) and these switches make the list
 * mislead a client that checks it after a lost answer.
 */
describe('sandbox list switches: lag, skip ignored, capped pages, omitted fields', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 30 });
	let token: string;
	let users: string[];
	const listIds = async (query = '') =>
		(await list(query)).body.data.notifications.map((item: any) => item.id);
	const list = (query = '') => call(sandbox, 'GET', `/push-notification/list${query}`, { token });
	const admin = (method: string, path: string, body?: unknown) =>
		call(sandbox, method, `/__sandbox${path}`, { body });
	beforeAll(async () => {
		users = sandbox.orgs.primary.userIds;
	});
	beforeEach(async () => {
		await sandbox.reset();
		token = await tokenFor(sandbox);
	});

	test('by default a send is listed at once, with every field, and paging honours skip and limit', async () => {
		expect(sandbox.settings()).toMatchObject({
			listLagMs: 0,
			listIgnoresSkip: false,
			listMaxPageSize: null,
			listOmitsFields: [],
		});
		const ids: string[] = [];
		for (let i = 0; i < 3; i++) ids.push((await send(sandbox, token, [users[i]])).id);
		expect(await listIds()).toEqual([...ids].reverse());
		expect(await listIds('?skip=2&limit=5')).toEqual([ids[0]]);
	});

	test('listLagMs: a new send is listed only listLagMs after its registration, the detail shows it at once', async () => {
		sandbox.configure({ listLagMs: 30_000 });
		const { id } = await send(sandbox, token, [users[0]], { title: 'Lagging' });
		expect(await listIds()).toEqual([]);
		expect((await list()).body.data.total).toBe(0);
		expect((await detail(sandbox, token, id)).notification).toMatchObject({ id, title: 'Lagging' });
		await sandbox.clock.advance(29_999);
		expect(await listIds()).toEqual([]);
		await sandbox.clock.advance(1);
		expect(await listIds()).toEqual([id]);
		expect((await list()).body.data.total).toBe(1);
		// Back to 0: every registered send is listed again.
		const second = await send(sandbox, token, [users[1]]);
		sandbox.configure({ listLagMs: 0 });
		expect(await listIds()).toEqual([second.id, id]);
	});

	test('listLag fault: one big send is listed a minute late while a send made a second after it is listed at once', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'listLag', listDelayMs: 60_000 });
		const big = await send(sandbox, token, users.slice(0, 25), { title: 'Big send' });
		await sandbox.clock.advance(1000);
		const small = await send(sandbox, token, [users[0]], { title: 'Small send' });
		expect(await listIds()).toEqual([small.id]);
		expect((await detail(sandbox, token, big.id)).notification.title).toBe('Big send');
		await sandbox.clock.advance(59_000);
		expect(await listIds()).toEqual([small.id, big.id]);
		const [bigSend] = sandbox.requestLog().filter((entry) => entry.endpoint === SEND);
		expect(bigSend).toMatchObject({ status: 202, fault: 'listLag', notificationId: big.id });
	});

	test("a fault's listDelayMs replaces listLagMs for its send only, shorter too", async () => {
		sandbox.configure({ listLagMs: 10_000 });
		sandbox.addFault({ endpoint: SEND, kind: 'listLag', listDelayMs: 0 });
		const atOnce = await send(sandbox, token, [users[0]]);
		const lagging = await send(sandbox, token, [users[1]]);
		expect(await listIds()).toEqual([atOnce.id]);
		await sandbox.clock.advance(10_000);
		expect(await listIds()).toEqual([lagging.id, atOnce.id]);
	});

	test('listDelayMs on a resetAfter: the answer is lost and the list does not show the send for a minute', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', listDelayMs: 60_000 });
		await expect(
			call(sandbox, 'POST', '/push-notification/send', {
				token,
				body: { title: 't', body: 'b', target_user_ids: [users[0]] },
			}),
		).rejects.toThrow();
		const [registered] = sandbox.notifications();
		expect(await listIds()).toEqual([]);
		await sandbox.clock.advance(60_000);
		expect(await listIds()).toEqual([registered.id]);
	});

	test('listIgnoresSkip: every page is the newest page, the envelope echoes the skip asked', async () => {
		const ids: string[] = [];
		for (let i = 0; i < 5; i++) ids.push((await send(sandbox, token, [users[i]])).id);
		const newestFirst = [...ids].reverse();
		sandbox.configure({ listIgnoresSkip: true });
		const page = await list('?skip=2&limit=2');
		expect(page.body.data).toMatchObject({ skip: 2, limit: 2, total: 5 });
		expect(page.body.data.notifications.map((item: any) => item.id)).toEqual(
			newestFirst.slice(0, 2),
		);
		expect(await listIds('?skip=10')).toEqual(newestFirst);
		sandbox.configure({ listIgnoresSkip: false });
		expect(await listIds('?skip=2&limit=2')).toEqual(newestFirst.slice(2, 4));
	});

	test('listMaxPageSize: pages are silently cut to it, the envelope echoes the limit asked', async () => {
		const ids: string[] = [];
		for (let i = 0; i < 5; i++) ids.push((await send(sandbox, token, [users[i]])).id);
		const newestFirst = [...ids].reverse();
		sandbox.configure({ listMaxPageSize: 2 });
		const page = await list('?limit=100');
		expect(page.body.data).toMatchObject({ skip: 0, limit: 100, total: 5 });
		expect(page.body.data.notifications.map((item: any) => item.id)).toEqual(
			newestFirst.slice(0, 2),
		);
		expect(await listIds()).toEqual(newestFirst.slice(0, 2)); // the default limit too
		expect(await listIds('?skip=2&limit=1')).toEqual([newestFirst[2]]); // a smaller limit is kept
		expect(await listIds('?skip=4&limit=50')).toEqual([newestFirst[4]]);
	});

	test('listOmitsFields: the named fields are left out of list elements, the detail keeps them', async () => {
		sandbox.configure({ recordIncludesAnnouncementId: true });
		const { id } = await send(sandbox, token, [users[0]], {
			announcement_id: 'a-1',
			scheduled_at: '2030-01-01T00:00:00Z',
		});
		const omitted = [
			'title',
			'body',
			'image_url',
			'deeplink',
			'scheduled_at',
			'created_at',
			'announcement_id',
			'status',
			'target_user_ids',
		] as const;
		const [full] = (await list()).body.data.notifications;
		expect(Object.keys(full)).toEqual(
			expect.arrayContaining([...omitted, 'id', 'sent_at', 'stats']),
		);
		for (const field of omitted) {
			sandbox.configure({ listOmitsFields: [field] });
			const [element] = (await list()).body.data.notifications;
			expect(Object.keys(element).sort()).toEqual(
				Object.keys(full)
					.filter((key) => key !== field)
					.sort(),
			);
		}
		sandbox.configure({ listOmitsFields: [...omitted, 'sent_at', 'stats'] });
		expect((await list()).body.data.notifications).toEqual([{ id }]);
		const record = (await detail(sandbox, token, id)).notification;
		expect(record).toMatchObject({
			id,
			title: 'Shift change',
			status: 'scheduled',
			announcement_id: 'a-1',
			scheduled_at: '2030-01-01T00:00:00.000Z',
		});
	});

	test('listIncludesTargets=false still leaves target_user_ids out, whatever listOmitsFields says', async () => {
		await send(sandbox, token, [users[0]]);
		sandbox.configure({ listIncludesTargets: false, listOmitsFields: ['title'] });
		const [element] = (await list()).body.data.notifications;
		expect(element.target_user_ids).toBeUndefined();
		expect(element.title).toBeUndefined();
		expect(element.body).toBe('Your shift starts at 9:00 tomorrow.');
	});

	test('bad values are refused naming the setting or fault field; id cannot be omitted', async () => {
		expect(() => sandbox.configure({ listOmitsFields: ['id' as never] })).toThrow(
			/invalid sandbox setting listOmitsFields\.0/,
		);
		expect(() => sandbox.configure({ listMaxPageSize: 0 })).toThrow(/listMaxPageSize/);
		expect(() => sandbox.configure({ listLagMs: -1 })).toThrow(/listLagMs/);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'listLag' })).toThrow(
			/invalid fault listDelayMs: listLag needs a listDelayMs/,
		);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'status5xx', listDelayMs: 5 })).toThrow(
			/invalid fault listDelayMs: status5xx registers no send/,
		);
		expect(() =>
			sandbox.addFault({ endpoint: 'GET /user/list', kind: 'listLag', listDelayMs: 5 }),
		).toThrow(/listDelayMs acts on sends only/);
		expect(sandbox.settings().listOmitsFields).toEqual([]);
	});

	test('over the admin HTTP API: POST /__sandbox/settings and /__sandbox/faults', async () => {
		const changed = await admin('POST', '/settings', {
			listLagMs: 5000,
			listIgnoresSkip: true,
			listMaxPageSize: 1,
			listOmitsFields: ['body', 'created_at'],
		});
		expect(changed.status).toBe(200);
		expect(changed.body.settings).toMatchObject({
			listLagMs: 5000,
			listIgnoresSkip: true,
			listMaxPageSize: 1,
			listOmitsFields: ['body', 'created_at'],
		});
		expect(
			(await admin('POST', '/faults', { endpoint: SEND, kind: 'listLag', listDelayMs: 0 })).status,
		).toBe(200);
		const first = await send(sandbox, token, [users[0]]);
		const second = await send(sandbox, token, [users[1]]);
		expect(await listIds()).toEqual([first.id]); // the fault's 0 for the first; 5000 for the second
		await sandbox.clock.advance(5000);
		const [element] = (await list('?skip=1')).body.data.notifications;
		expect(element.id).toBe(second.id); // skip ignored, one per page
		expect(element.body).toBeUndefined();
		expect(element.created_at).toBeUndefined();
		const refused = await admin('POST', '/settings', { listOmitsFields: ['colour'] });
		expect(refused.status).toBe(400);
		expect(refused.body.error.message).toMatch(/listOmitsFields/);
		expect((await admin('POST', '/faults', { endpoint: SEND, kind: 'listLag' })).status).toBe(400);
	});
});
