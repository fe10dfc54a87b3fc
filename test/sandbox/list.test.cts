import { LIST_SHAPES, type ListShape } from '../../sandbox/index.cts';
import {
	call,
	MANUAL_CLOCK,
	send,
	settleDeliveries,
	tokenFor,
	useSandbox,
} from '../harness/index.cts';

describe('sandbox GET /push-notification/list (spec: newest first; body, paging and filters not shown)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 50 });
	let token: string;
	let ids: string[];
	const list = (query = '') => call(sandbox, 'GET', `/push-notification/list${query}`, { token });
	beforeAll(async () => {
		token = await tokenFor(sandbox);
		ids = [];
		for (let i = 0; i < 5; i++) {
			ids.push(
				(
					await send(sandbox, token, sandbox.orgs.primary.userIds.slice(i, i + 2), {
						title: `Send ${i}`,
					})
				).id,
			);
			await sandbox.clock.advance(1000);
		}
	});
	afterEach(() => sandbox.configure({ listShape: 'envelope', listIncludesTargets: true }));

	test('default shape "envelope": {ok, data: {notifications, total, skip, limit}}, newest first', async () => {
		const answer = await list();
		expect(answer.status).toBe(200);
		expect(answer.body).toEqual({
			ok: true,
			data: { notifications: expect.any(Array), total: 5, skip: 0, limit: 100 },
		});
		expect(answer.body.data.notifications.map((item: any) => item.id)).toEqual([...ids].reverse());
	});

	test('each element is a notification record plus target_user_ids (as sent), statuses follow the clock', async () => {
		const [newest] = (await list()).body.data.notifications;
		expect(Object.keys(newest).sort()).toEqual(
			[
				'body',
				'created_at',
				'deeplink',
				'id',
				'image_url',
				'scheduled_at',
				'sent_at',
				'stats',
				'status',
				'target_user_ids',
				'title',
			].sort(),
		);
		expect(newest.target_user_ids).toEqual(sandbox.orgs.primary.userIds.slice(4, 6));
		await settleDeliveries(sandbox);
		const statuses = (await list()).body.data.notifications.map((item: any) => item.status);
		expect(statuses.every((status: string) => status !== 'sending')).toBe(true);
	});

	test('listIncludesTargets=false leaves target_user_ids out (a minimal variant clients must cope with)', async () => {
		sandbox.configure({ listIncludesTargets: false });
		const [newest] = (await list()).body.data.notifications;
		expect(newest.target_user_ids).toBeUndefined();
	});

	test('paging with skip and limit; limit is clamped to 1000; bad values answer 400', async () => {
		const page = await list('?skip=1&limit=2');
		expect(page.body.data).toMatchObject({ total: 5, skip: 1, limit: 2 });
		expect(page.body.data.notifications.map((item: any) => item.id)).toEqual([ids[3], ids[2]]);
		expect((await list('?skip=10')).body.data.notifications).toEqual([]);
		expect((await list('?limit=5000')).body.data.limit).toBe(1000);
		expect((await list('?limit=0')).status).toBe(400);
		expect((await list('?status=sent&unknown=1')).body.data.total).toBe(5); // filters are not supported, ignored
	});

	const expectedItems = (body: any, shape: ListShape) => {
		switch (shape) {
			case 'envelope':
			case 'dataNotifications':
				return body.data.notifications;
			case 'bareArray':
				return body;
			case 'dataArray':
				return body.data;
			case 'dataItems':
				return body.data.items;
		}
	};

	test.each(LIST_SHAPES.map((shape) => [shape]))(
		'switchable shape %s carries the same records',
		async (shape) => {
			sandbox.setListShape(shape as ListShape);
			const { body } = await list();
			const items = expectedItems(body, shape as ListShape);
			expect(items.map((item: any) => item.id)).toEqual([...ids].reverse());
			if (shape === 'dataItems' || shape === 'dataNotifications') expect(body.data.total).toBe(5);
			if (shape !== 'bareArray') expect(body.ok).toBe(true);
		},
	);
});
