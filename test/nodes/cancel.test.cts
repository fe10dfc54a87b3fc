/**
 * Notification > Cancel: a scheduled send is canceled; one that already left gives a clear
 * error (or, with "Ignore If Not Scheduled", an item saying canceled: false); unknown and
 * foreign sends give the API's 404 and 403.
 */
import { DateTime } from 'luxon';

import {
	CANCEL,
	count,
	DETAIL,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	pairedOf,
	runOn,
	seedSends,
	storeFor,
	useSandbox,
} from '../harness/index.cts';

describe('Cancel', () => {
	// Deliveries take a minute: a send made now stays "sending" for the whole test.
	const sandbox = useSandbox({ ...NODE_SANDBOX, deliveryMs: 60_000, resetBeforeEach: true });
	const future = () => DateTime.now().plus({ days: 2 }).toISO();

	const cancel = (notificationId: string, options: Record<string, unknown> = {}) => ({
		resource: 'notification',
		operation: 'cancel',
		notificationId,
		options,
	});

	test('a scheduled send is canceled: one cancel call, the item says canceled', async () => {
		const [id] = await seedSends(sandbox, 1, { scheduled_at: future() });
		const { items: output, error } = await runOn(sandbox, { parameters: cancel(id) });

		expect(error).toBeUndefined();
		expect(jsonOf(output)).toEqual([
			{
				id,
				canceled: true,
				status: 'canceled',
				message: 'Push notification canceled',
				alreadyCanceled: false,
			},
		]);
		expect(logOf(sandbox, CANCEL).map((entry) => [entry.path, entry.status])).toEqual([
			[`/push-notification/${id}/cancel`, 200],
		]);
		expect(sandbox.notifications()[0].status).toBe('canceled');
	});

	test('several items, IDs from the input: each canceled, each output paired with its item', async () => {
		const ids = await seedSends(sandbox, 3, { scheduled_at: future() });
		const { items: output } = await runOn(sandbox, {
			items: ids.map((id) => ({ id })),
			parameters: cancel('={{ $json.id }}'),
		});
		expect(jsonOf(output).map((json) => [json.id, json.canceled])).toEqual(
			ids.map((id) => [id, true]),
		);
		expect(pairedOf(output)).toEqual([[0], [1], [2]]);
		expect(count(sandbox, CANCEL)).toBe(3);
	});

	test('a send that already left (409): a clear error that says so and its current status', async () => {
		const [id] = await seedSends(sandbox, 1);
		const { items: output, error } = await runOn(sandbox, { parameters: cancel(id) });

		expect(output).toEqual([]);
		expect(error?.message).toBe(
			`Notification ${id} can no longer be canceled: it is "sending", and only a scheduled send can be canceled`,
		);
		expect(error?.description).toMatch(/already left/);
		expect(logOf(sandbox, CANCEL).map((entry) => entry.status)).toEqual([409]);
		expect(count(sandbox, DETAIL)).toBe(1);
		expect(sandbox.notifications()[0].status).not.toBe('canceled');
	});

	test('"Ignore If Not Scheduled": the 409 becomes an item with canceled false and the current status', async () => {
		const [id] = await seedSends(sandbox, 1);
		const { items: output, error } = await runOn(sandbox, {
			parameters: cancel(id, { ignoreIfNotScheduled: true }),
		});

		expect(error).toBeUndefined();
		expect(output).toHaveLength(1);
		expect(output[0].json).toMatchObject({ id, canceled: false, status: 'sending' });
		expect(String(output[0].json.message)).toContain('can no longer be canceled');
		expect(pairedOf(output)).toEqual([[0]]);
	});

	test('canceling twice: the second answer (409) is recognized as already canceled, not an error', async () => {
		const [id] = await seedSends(sandbox, 1, { scheduled_at: future() });
		await runOn(sandbox, { parameters: cancel(id) });
		const { items: output, error } = await runOn(sandbox, { parameters: cancel(id) });

		expect(error).toBeUndefined();
		expect(output[0].json).toMatchObject({
			id,
			canceled: true,
			status: 'canceled',
			alreadyCanceled: true,
		});
		expect(logOf(sandbox, CANCEL).map((entry) => entry.status)).toEqual([200, 409]);
	});

	test('an unknown ID: the API 404 as an error naming the item, even with "Ignore If Not Scheduled"', async () => {
		const { error } = await runOn(sandbox, {
			parameters: cancel('no-such-send', { ignoreIfNotScheduled: true }),
		});
		expect(error?.message).toMatch(/404|not found|does not exist/i);
		expect(logOf(sandbox, CANCEL).map((entry) => [entry.path, entry.status])).toEqual([
			['/push-notification/no-such-send/cancel', 404],
		]);
	});

	test("another organization's send: 403; continue on fail gives an error item, the next item is still canceled", async () => {
		const [foreign] = await seedSends(
			sandbox,
			1,
			{ scheduled_at: future() },
			sandbox.orgs.secondary,
		);
		const [own] = await seedSends(sandbox, 1, { scheduled_at: future() });
		const { items: output, error } = await runOn(sandbox, {
			items: [{ id: foreign }, { id: own }],
			continueOnFail: true,
			parameters: cancel('={{ $json.id }}'),
		});

		expect(error).toBeUndefined();
		expect(logOf(sandbox, CANCEL).map((entry) => entry.status)).toEqual([403, 200]);
		expect(output[0].json.error).toMatch(/403|permission|forbidden|organization/i);
		expect(output[1].json).toMatchObject({ id: own, canceled: true });
		expect(pairedOf(output)).toEqual([[0], [1]]);
		expect(sandbox.notifications('secondary')[0].status).toBe('scheduled');
	});

	test('a non-admin credential: 403 (a cancel is a write)', async () => {
		const [id] = await seedSends(sandbox, 1, { scheduled_at: future() });
		const { error } = await runOn(sandbox, {
			credentials: storeFor(sandbox, { credential: sandbox.nonAdminCredential }),
			parameters: cancel(id),
		});
		expect(error?.message).toMatch(/403|permission|forbidden/i);
		expect(sandbox.notifications()[0].status).toBe('scheduled');
	});
});
