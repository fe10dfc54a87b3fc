import { call, MANUAL_CLOCK, send, tokenFor, useSandbox } from '../harness/index.cts';

const SEND = 'POST /push-notification/send';

/**
 * A busy organization: another integration of the same org sends beside the one under test. Its
 * sends are listed like any other, but they are no request of the client under test: not in the
 * request log, and never met by a fault meant for that client.
 */
describe('sandbox: sends of another client of the org', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 10, resetBeforeEach: true });

	test('listed like any send, on the API clock, but not logged, counted or met by a fault', async () => {
		sandbox.configure({ clockOffsetMs: 5_000 });
		const token = await tokenFor(sandbox);
		const [user] = sandbox.orgs.primary.userIds;
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 503 });
		const logged = sandbox.requestLog().length;
		const id = sandbox.sendAsAnotherClient('primary', {
			title: 'Other client',
			body: 'From elsewhere',
			target_user_ids: [user],
		});
		expect(sandbox.requestLog()).toHaveLength(logged);
		expect(sandbox.counts()[SEND] ?? 0).toBe(0);
		const listed = (await call(sandbox, 'GET', '/push-notification/list', { token })).body.data
			.notifications;
		expect(listed).toEqual([
			expect.objectContaining({ id, title: 'Other client', target_user_ids: [user] }),
		]);
		expect(Date.parse(listed[0].created_at)).toBe(sandbox.clock.apiNow());
		// The fault is still there for the client under test.
		await expect(send(sandbox, token, [user])).rejects.toThrow(/503/);
	});

	test('the list lag applies to it too', async () => {
		sandbox.configure({ listLagMs: 1_000 });
		const token = await tokenFor(sandbox);
		const id = sandbox.sendAsAnotherClient('primary', {
			title: 'Other client',
			body: 'Late',
			target_user_ids: [sandbox.orgs.primary.userIds[0]],
		});
		const listIds = async () =>
			(
				await call(sandbox, 'GET', '/push-notification/list', { token })
			).body.data.notifications.map((item: { id: string }) => item.id);
		expect(await listIds()).toEqual([]);
		await sandbox.clock.advance(1_000);
		expect(await listIds()).toEqual([id]);
	});

	test('an invalid body throws naming the field and registers nothing', () => {
		expect(() =>
			sandbox.sendAsAnotherClient('primary', { body: 'No title', target_user_ids: ['x'] }),
		).toThrow(expect.objectContaining({ status: 422, field: 'title' }));
		expect(sandbox.notifications()).toEqual([]);
	});
});
