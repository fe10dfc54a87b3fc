/**
 * Notification > Get: the record, its counters and deliveries (included, omitted or split into
 * items), waiting for the final status, and the API's 404 and 403.
 */
import {
	count,
	DETAIL,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	onTestClock,
	pairedOf,
	runOn,
	SEND_LIST,
	seedSends,
	storeFor,
	useSandbox,
	wait,
} from '../harness/index.cts';

const get = (notificationId: string, options: Record<string, unknown> = {}) => ({
	resource: 'notification',
	operation: 'get',
	notificationId,
	options,
});

describe('Get', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let twoPhones: string;
	let noPhone: string;
	beforeAll(async () => {
		twoPhones = sandbox.orgs.primary.usersOfKind('twoPhones', 1)[0];
		noPhone = sandbox.orgs.primary.usersOfKind('noPhone', 1)[0];
	});

	/** A send to a user with two phones and one without: 3 delivery entries once settled. */
	async function settledSend(): Promise<string> {
		const [id] = await seedSends(sandbox, 1, { target_user_ids: [twoPhones, noPhone] });
		await wait(100);
		return id;
	}

	test('deliveries included (default): the record with counters and the deliveries list; one read', async () => {
		const id = await settledSend();
		const { items: output, error } = await runOn(sandbox, { parameters: get(id) });

		expect(error).toBeUndefined();
		expect(output).toHaveLength(1);
		const json = output[0].json;
		expect(json).toMatchObject({
			id,
			title: 'Send 0',
			status: 'sent',
			stats: { targeted_users: 2, devices: 2, sent: 2, failed: 0, no_device: 1, opened: 0 },
		});
		expect(json.deliveries).toHaveLength(3);
		expect(
			(json.deliveries as Array<{ user_id: string; status: string }>)
				.map((entry) => [entry.user_id, entry.status])
				.sort(),
		).toEqual(
			[
				[noPhone, 'no_device'],
				[twoPhones, 'sent'],
				[twoPhones, 'sent'],
			].sort(),
		);
		expect(logOf(sandbox, DETAIL).map((entry) => [entry.path, entry.status])).toEqual([
			[`/push-notification/${id}`, 200],
		]);
	});

	test('deliveries omitted: only the record and its counters', async () => {
		const id = await settledSend();
		const { items: output } = await runOn(sandbox, { parameters: get(id, { deliveries: 'omit' }) });
		expect(output[0].json).toMatchObject({ id, status: 'sent', stats: { targeted_users: 2 } });
		expect(output[0].json.deliveries).toBeUndefined();
	});

	test('deliveries split: one item per delivery entry, each paired with the input item', async () => {
		const id = await settledSend();
		const { items: output } = await runOn(sandbox, {
			parameters: get(id, { deliveries: 'split' }),
		});

		expect(output).toHaveLength(3);
		expect(jsonOf(output).map((json) => json.deliveryIndex)).toEqual([0, 1, 2]);
		for (const json of jsonOf(output)) {
			expect(json).toMatchObject({
				notificationId: id,
				title: 'Send 0',
				notificationStatus: 'sent',
			});
			expect(typeof json.user_id).toBe('string');
			expect(['sent', 'no_device']).toContain(json.status);
		}
		expect(pairedOf(output)).toEqual([[0], [0], [0]]);
	});

	test('deliveries split on a send still without entries: no item for it', async () => {
		const [id] = await seedSends(sandbox, 1, {
			scheduled_at: new Date(Date.now() + 3600_000).toISOString(),
		});
		const { items: output, error } = await runOn(sandbox, {
			parameters: get(id, { deliveries: 'split' }),
		});
		expect(error).toBeUndefined();
		expect(output).toEqual([]);
	});

	test('several items: one read each, in order, paired', async () => {
		const ids = await seedSends(sandbox, 3);
		const { items: output } = await runOn(sandbox, {
			items: ids.map((id) => ({ id })),
			parameters: get('={{ $json.id }}'),
		});
		expect(jsonOf(output).map((json) => json.id)).toEqual(ids);
		expect(pairedOf(output)).toEqual([[0], [1], [2]]);
		expect(logOf(sandbox, DETAIL).map((entry) => entry.path)).toEqual(
			ids.map((id) => `/push-notification/${id}`),
		);
	});

	test('Wait for Final Status on a fresh send: read again until it leaves "sending"', async () => {
		const [id] = await seedSends(sandbox, 1, { target_user_ids: [twoPhones] });
		const { items: output, error } = await onTestClock(() =>
			runOn(sandbox, {
				parameters: get(id, { waitForFinalStatus: true, waitTimeout: 10 }),
			}),
		);

		expect(error).toBeUndefined();
		expect(output[0].json).toMatchObject({ id, status: 'sent', finalStatusReached: true });
		expect(output[0].json.waitNote).toBeUndefined();
		expect(output[0].json.deliveries).toHaveLength(2);
		expect(count(sandbox, DETAIL)).toBeGreaterThanOrEqual(1);
		expect(count(sandbox, DETAIL)).toBeLessThanOrEqual(3);
	});

	test('Wait for Final Status with deliveries split: every entry says the final status was reached', async () => {
		const [id] = await seedSends(sandbox, 1, { target_user_ids: [twoPhones, noPhone] });
		const { items: output } = await onTestClock(() =>
			runOn(sandbox, {
				parameters: get(id, { waitForFinalStatus: true, waitTimeout: 10, deliveries: 'split' }),
			}),
		);

		expect(output).toHaveLength(3);
		for (const json of output.map((item) => item.json)) {
			expect(json).toMatchObject({
				notificationId: id,
				notificationStatus: 'sent',
				finalStatusReached: true,
			});
			expect(['sent', 'no_device']).toContain(json.status);
		}
	});

	test('Wait for Final Status on a scheduled send: the timeout passes and the item says so', async () => {
		const [id] = await seedSends(sandbox, 1, {
			scheduled_at: new Date(Date.now() + 3600_000).toISOString(),
		});
		const { items: output, error } = await onTestClock(() =>
			runOn(sandbox, {
				parameters: get(id, { waitForFinalStatus: true, waitTimeout: 0.5, deliveries: 'omit' }),
			}),
		);

		expect(error).toBeUndefined();
		expect(output[0].json).toMatchObject({
			id,
			status: 'scheduled',
			finalStatusReached: false,
			waitNote: expect.stringContaining('scheduled'),
		});
		// Followed in the list of sends; its detail read once, for the output.
		expect(count(sandbox, SEND_LIST)).toBeGreaterThanOrEqual(1);
		expect(count(sandbox, DETAIL)).toBe(1);
	});

	test('an unknown ID: the API 404, naming the item', async () => {
		const { error } = await runOn(sandbox, { parameters: get('no-such-send') });
		expect(error?.message).toMatch(/404|not found|does not exist/i);
		expect(logOf(sandbox, DETAIL).map((entry) => entry.status)).toEqual([404]);
	});

	test("another organization's send: 403; with continue on fail an error item paired with its item", async () => {
		const [foreign] = await seedSends(sandbox, 1, {}, sandbox.orgs.secondary);
		const [own] = await seedSends(sandbox, 1);
		const { items: output, error } = await runOn(sandbox, {
			items: [{ id: own }, { id: foreign }],
			continueOnFail: true,
			parameters: get('={{ $json.id }}', { deliveries: 'omit' }),
		});

		expect(error).toBeUndefined();
		expect(logOf(sandbox, DETAIL).map((entry) => entry.status)).toEqual([200, 403]);
		expect(output[0].json.id).toBe(own);
		expect(output[1].json.error).toMatch(/403|permission|forbidden|organization/i);
		expect(pairedOf(output)).toEqual([[0], [1]]);
	});

	test('the secondary organization reads its own send', async () => {
		const [foreign] = await seedSends(sandbox, 1, {}, sandbox.orgs.secondary);
		const { items: output, error } = await runOn(sandbox, {
			credentials: storeFor(sandbox, { credential: sandbox.orgs.secondary }),
			parameters: get(foreign, { deliveries: 'omit' }),
		});
		expect(error).toBeUndefined();
		expect(output[0].json.id).toBe(foreign);
	});
});
