import { call, MANUAL_CLOCK, sendBody, tokenFor, useSandbox } from '../harness/index.cts';

describe('sandbox POST /push-notification/send validation (spec Send request table, Errors)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 30, resetBeforeEach: true });
	let token: string;
	let user: string;
	beforeAll(async () => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		token = await tokenFor(sandbox);
	});

	const post = (body: unknown) => call(sandbox, 'POST', '/push-notification/send', { token, body });
	const without = (field: string) => {
		const body: Record<string, unknown> = sendBody([user]);
		delete body[field];
		return body;
	};

	test.each([
		['title missing', () => without('title'), 'title'],
		['body missing', () => without('body'), 'body'],
		['target_user_ids missing', () => without('target_user_ids'), 'target_user_ids'],
		['target_user_ids empty', () => sendBody([]), 'target_user_ids'],
		['title empty', () => sendBody([user], { title: '' }), 'title'],
		['body blank', () => sendBody([user], { body: '   ' }), 'body'],
		['title null', () => sendBody([user], { title: null }), 'title'],
	])(
		'422 naming the field when a required field is missing or empty: %s',
		async (_name, body, field) => {
			const answer = await post(body());
			expect(answer.status).toBe(422);
			expect(answer.body.ok).toBe(false);
			expect(answer.body.error.field).toBe(field);
			expect(answer.body.error.message).toContain(field);
			expect(sandbox.notifications()).toEqual([]);
		},
	);

	test.each([
		['title not a string', { title: 42 }, 'title'],
		['body not a string', { body: ['x'] }, 'body'],
		['target_user_ids not an array', { target_user_ids: 'abc' }, 'target_user_ids'],
		['target_user_ids with a number', { target_user_ids: ['abc', 7] }, 'target_user_ids'],
		['target_user_ids with an empty id', { target_user_ids: [''] }, 'target_user_ids'],
		['image_url over http', { image_url: 'http://cdn.example.com/a.png' }, 'image_url'],
		['image_url not a URL', { image_url: 'not a url' }, 'image_url'],
		['image_url a GIF', { image_url: 'https://cdn.example.com/a.gif' }, 'image_url'],
		['deeplink not a string', { deeplink: 5 }, 'deeplink'],
		['announcement_id not a string', { announcement_id: { id: 1 } }, 'announcement_id'],
		['scheduled_at unparsable', { scheduled_at: 'tomorrow at nine' }, 'scheduled_at'],
		['scheduled_at date only', { scheduled_at: '2026-03-05' }, 'scheduled_at'],
		['scheduled_at impossible day', { scheduled_at: '2026-02-30T09:00:00Z' }, 'scheduled_at'],
		['scheduled_at without time zone', { scheduled_at: '2026-03-05T09:00:00' }, 'scheduled_at'],
		['scheduled_at not a string', { scheduled_at: 1772701200000 }, 'scheduled_at'],
		['tenant_id present', { tenant_id: 'org-primary' }, 'tenant_id'],
	])('400 naming the field when a value is invalid: %s', async (_name, extra, field) => {
		const answer = await post(sendBody([user], extra));
		expect(answer.status).toBe(400);
		expect(answer.body.error.field).toBe(field);
		expect(sandbox.notifications()).toEqual([]);
	});

	test('a scheduled_at without time zone answers 422 when scheduledAtWithoutZoneStatus is 422', async () => {
		sandbox.configure({ scheduledAtWithoutZoneStatus: 422 });
		const answer = await post(sendBody([user], { scheduled_at: '2026-03-05T09:00' }));
		expect(answer.status).toBe(422);
		expect(answer.body.error.field).toBe('scheduled_at');
		expect(answer.body.error.message).toMatch(/time zone/);
	});

	test('with tenantIdPolicy=ignore a tenant_id is accepted (and still visible in the request log)', async () => {
		sandbox.configure({ tenantIdPolicy: 'ignore' });
		expect((await post(sendBody([user], { tenant_id: 'x' }))).status).toBe(202);
		expect(sandbox.requestLog().at(-1)?.body).toMatchObject({ tenant_id: 'x' });
	});

	test('a body that is not JSON, or not an object, answers 400', async () => {
		const notJson = await call(sandbox, 'POST', '/push-notification/send', {
			token,
			rawBody: '{"title": "x",',
		});
		expect(notJson.status).toBe(400);
		expect(notJson.body.error.code).toBe('invalid_json');
		expect((await post([sendBody([user])])).status).toBe(400);
	});

	test('several problems: 422 wins (missing fields first), details list every field', async () => {
		const answer = await post({
			title: 7,
			target_user_ids: [],
			image_url: 'http://x.example/a.png',
		});
		expect(answer.status).toBe(422);
		expect(answer.body.error.details.map((problem: any) => problem.field)).toEqual([
			'body',
			'target_user_ids',
			'title',
			'image_url',
		]);
		expect(answer.body.error.field).toBe('body');
	});

	test('valid optional fields are accepted: https image without extension or .png, any deeplink, announcement_id, offsets', async () => {
		for (const extra of [
			{ image_url: 'https://cdn.example.com/img/abc?size=2' },
			{ image_url: 'https://cdn.example.com/banner.PNG', deeplink: 'companionapp://chat' },
			{ deeplink: 'companionapp://somewhere-unknown' },
			{ deeplink: 'companionapp://announcement/an-1', announcement_id: 'an-1' },
			{ announcement_id: '' },
			{ scheduled_at: '2026-03-05T09:00:00+0200' },
			{ scheduled_at: '2026-03-05T09:00:00.123-05:00' },
			{ image_url: null, deeplink: null, scheduled_at: null, announcement_id: null },
			{ some_future_field: true },
		]) {
			const answer = await post(sendBody([user], extra));
			expect([answer.status, extra]).toEqual([202, extra]);
		}
	});

	test('lengths and recipients (not shown) are not limited by default; switches enforce them with 400', async () => {
		const longTitle = 'x'.repeat(200);
		const many = sandbox.orgs.primary.userIds.slice(0, 20);
		expect((await post(sendBody(many, { title: longTitle, body: 'y'.repeat(1000) }))).status).toBe(
			202,
		);
		sandbox.configure({ maxTitleLength: 50, maxBodyLength: 150, maxRecipients: 10 });
		expect((await post(sendBody([user], { title: longTitle }))).body.error.field).toBe('title');
		expect((await post(sendBody([user], { body: 'y'.repeat(151) }))).body.error.field).toBe('body');
		const tooMany = await post(sendBody(many));
		expect(tooMany.status).toBe(400);
		expect(tooMany.body.error.field).toBe('target_user_ids');
	});

	test('duplicate user ids (to be avoided) are notified once', async () => {
		const twoPhones = sandbox.orgs.primary.usersOfKind('twoPhones', 1)[0];
		const answer = await post(sendBody([twoPhones, twoPhones, twoPhones]));
		expect(answer.status).toBe(202);
		await sandbox.clock.advance(10_000);
		const [record] = sandbox.notifications();
		expect(record.stats.targeted_users).toBe(1);
		expect(record.deliveries).toHaveLength(2);
		expect(record.target_user_ids).toHaveLength(3); // as sent
		expect(sandbox.deliveriesByUser().get(twoPhones)).toBe(1);
	});
});
