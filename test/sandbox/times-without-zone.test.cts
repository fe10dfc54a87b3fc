import { call, detail, MANUAL_CLOCK, send, tokenFor, useSandbox } from '../harness/index.cts';

/**
 * timesWithoutZone: the spec says only "ISO 8601", which allows a time without a zone. The switch
 * makes the API write every time it shows as the wall time of one zone, with no designator.
 */
describe('sandbox timesWithoutZone: times written without a zone', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20 });
	let token: string;
	let user: string;
	const listed = async () =>
		(await call(sandbox, 'GET', '/push-notification/list', { token })).body.data.notifications;
	beforeAll(() => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		await sandbox.reset();
		token = await tokenFor(sandbox);
	});

	test('off by default: every time is UTC with Z', async () => {
		expect(sandbox.settings().timesWithoutZone).toBeNull();
		const { id } = await send(sandbox, token, [user]);
		await sandbox.clock.advance(5_000);
		const { notification, deliveries } = await detail(sandbox, token, id);
		expect(notification.created_at).toBe('2026-03-02T09:00:00.000Z');
		expect(deliveries[0].sent_at).toMatch(/Z$/);
	});

	test("a zone: created_at, sent_at, scheduled_at and delivery times are that zone's wall time, without a zone, in the list and the detail", async () => {
		// 09:00 UTC on a summer day: 11:00 in Berlin (UTC+2), 05:00 in New York (UTC-4).
		await sandbox.clock.set('2026-07-01T09:00:00.000Z');
		token = await tokenFor(sandbox);
		sandbox.configure({ timesWithoutZone: 'Europe/Berlin' });
		const now = await send(sandbox, token, [user]);
		const later = await send(sandbox, token, [user], { scheduled_at: '2026-07-01T12:00:00Z' });
		await sandbox.clock.advance(5_000);
		sandbox.tap(now.id, user);

		const { notification, deliveries } = await detail(sandbox, token, now.id);
		expect(notification.created_at).toBe('2026-07-01T11:00:00.000');
		expect(notification.sent_at).toBe('2026-07-01T11:00:00.000');
		expect(deliveries[0]).toMatchObject({
			sent_at: '2026-07-01T11:00:01.500',
			opened_at: '2026-07-01T11:00:05.000',
		});
		const scheduled = (await detail(sandbox, token, later.id)).notification;
		expect(scheduled.scheduled_at).toBe('2026-07-01T14:00:00.000');
		expect((await listed()).map((item: any) => [item.created_at, item.scheduled_at])).toEqual([
			['2026-07-01T11:00:00.000', '2026-07-01T14:00:00.000'],
			['2026-07-01T11:00:00.000', null],
		]);
		// What the tests read of the sandbox keeps the instant.
		expect(sandbox.notifications()[0].created_at).toBe('2026-07-01T09:00:00.000Z');

		sandbox.configure({ timesWithoutZone: 'America/New_York' });
		expect((await detail(sandbox, token, now.id)).notification.created_at).toBe(
			'2026-07-01T05:00:00.000',
		);
	});

	test('a name that is not a zone is refused, over HTTP too', async () => {
		expect(() => sandbox.configure({ timesWithoutZone: 'Mars/Olympus' })).toThrow(/IANA time zone/);
		const answer = await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { timesWithoutZone: 'Mars/Olympus' },
		});
		expect(answer.status).toBe(400);
		expect(sandbox.settings().timesWithoutZone).toBeNull();
	});
});
