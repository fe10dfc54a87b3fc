/**
 * Notification > Get Report: one report over several sends, straight from a Send's output (every
 * batch), or from IDs in one field; totals of the counters, and one row per user with their phones
 * (and sends) collapsed. Each send is read once.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import {
	count,
	DETAIL,
	jsonOf,
	pairedOf,
	REFRESH,
	runOn,
	SEND,
	NODE_SANDBOX,
	onTestClock,
	sendParameters,
	storeFor,
	useSandbox,
	nodeResult,
	nodeWorkflow,
	runWorkflow,
} from '../harness/index.cts';

const report = (fields: IDataObject = {}) => ({
	resource: 'notification',
	operation: 'getReport',
	...fields,
});

describe('Get Report', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX });
	let users: Record<string, string>;
	beforeAll(async () => {
		const kind = (name: Parameters<typeof sandbox.orgs.primary.usersOfKind>[0]) =>
			sandbox.orgs.primary.usersOfKind(name, 1)[0];
		users = {
			twoPhones: kind('twoPhones'),
			partlyUninstalled: kind('partlyUninstalled'),
			uninstalled: kind('uninstalled'),
			noPhone: kind('noPhone'),
			onePhone: kind('onePhone'),
		};
	});
	beforeEach(() => sandbox.reset());

	/** Send (batches of 2, waiting for the final status) -> Get Report, in one workflow run. */
	async function sendThenReport(reportFields: IDataObject = {}) {
		const credentials = storeFor(sandbox);
		const workflow = nodeWorkflow({
			type: 'companionPush',
			name: 'Send',
			credentials,
			parameters: sendParameters({
				title: 'Safety alert',
				userIds: Object.values(users).join(', '),
				options: { batchSize: 2, waitForFinalStatus: true, waitTimeout: 10 },
			}),
		});
		const send = workflow.nodes[1];
		workflow.nodes.push({
			...send,
			id: 'n-report',
			name: 'Report',
			position: [400, 0],
			parameters: report(reportFields) as never,
		});
		workflow.connections.Send = { main: [[{ node: 'Report', type: 'main' as never, index: 0 }]] };
		const run = await onTestClock(() => runWorkflow(workflow));
		return { sent: nodeResult(run, 'Send'), reported: nodeResult(run, 'Report') };
	}

	test('straight after a Send of 3 batches: one summary of every batch, each read once, paired with every batch', async () => {
		const { sent, reported } = await sendThenReport();
		expect(sent.items).toHaveLength(3);
		expect(reported.error).toBeUndefined();
		expect(reported.items).toHaveLength(1);
		expect(pairedOf(reported.items)).toEqual([[0, 1, 2]]);
		const ids = jsonOf(sent.items).map((item) => item.id as string);
		const summary = reported.items[0].json;
		expect(summary).toMatchObject({
			notificationIds: expect.arrayContaining(ids),
			notifications: 3,
			allSettled: true,
			statuses: { partially_failed: 1, failed: 1, sent: 1 },
			// 2 + 2 (partly uninstalled) + 1 + 0 + 1 phones; one user without a device.
			stats: { targeted_users: 5, devices: 6, sent: 4, failed: 2, opened: 0, no_device: 1 },
			userCounts: {
				total: 5,
				reached: 3,
				opened: 0,
				notOpened: 3,
				notReached: 2,
				failed: 2,
				noDevice: 1,
			},
		});
		const rows = new Map((summary.users as IDataObject[]).map((row) => [row.userId, row]));
		expect(rows.get(users.twoPhones)).toEqual({
			userId: users.twoPhones,
			reached: true,
			opened: false,
			failed: false,
			noDevice: false,
			phones: 2,
			firstOpenedAt: null,
			notificationIds: [ids[0]],
			secondsToOpen: null,
			timeToOpenUnknown: false,
		});
		expect(rows.get(users.partlyUninstalled)).toMatchObject({
			reached: true,
			failed: true,
			phones: 2,
		});
		expect(rows.get(users.uninstalled)).toMatchObject({
			reached: false,
			failed: true,
			noDevice: false,
			phones: 1,
		});
		expect(rows.get(users.noPhone)).toMatchObject({
			reached: false,
			failed: false,
			noDevice: true,
			phones: 0,
		});
		// The sends' own reads (the wait) and the report's: exactly one each for the report.
		const reportReads = sandbox
			.requestLog()
			.filter((entry) => entry.endpoint === DETAIL)
			.slice(-3);
		expect(reportReads.map((entry) => entry.path.split('/').pop()).sort()).toEqual([...ids].sort());
	});

	test('users of several phones opening on one are opened; One Item per User pairs each row with its batch; Totals Only', async () => {
		const { sent } = await sendThenReport({ output: 'totals' });
		const batches: IDataObject[] = jsonOf(sent.items);
		sandbox.tap(batches[0].id as string, users.twoPhones, 1);

		const before = count(sandbox, DETAIL);
		const { items: perUser, error } = await runOn(sandbox, {
			items: batches,
			parameters: report({ output: 'perUser' }),
		});
		expect(error).toBeUndefined();
		expect(count(sandbox, DETAIL) - before).toBe(3);
		expect(jsonOf(perUser).map((row) => row.userId)).toEqual(Object.values(users));
		expect(perUser[0].json).toMatchObject({
			userId: users.twoPhones,
			reached: true,
			opened: true,
			firstOpenedAt: expect.any(String),
			phones: 2,
		});
		// The batches hold 2, 2 and 1 users.
		expect(pairedOf(perUser)).toEqual([[0], [0], [1], [1], [2]]);

		const { items: totals } = await runOn(sandbox, {
			items: batches,
			parameters: report({ output: 'totals' }),
		});
		expect(totals).toHaveLength(1);
		expect(totals[0].json.users).toBeUndefined();
		expect(totals[0].json).toMatchObject({
			stats: { opened: 1 },
			userCounts: { opened: 1, notOpened: 2 },
		});
	});

	test('IDs in one field (text or a list), repeated ones read once', async () => {
		const { sent } = await sendThenReport({ output: 'totals' });
		const ids = jsonOf(sent.items).map((item) => item.id as string);
		const before = count(sandbox, DETAIL);
		const { items: fromText } = await runOn(sandbox, {
			parameters: report({
				notificationIds: `${ids[0]}, ${ids[1]}\n${ids[2]}; ${ids[0]}`,
				output: 'totals',
			}),
		});
		expect(fromText[0].json).toMatchObject({ notifications: 3, userCounts: { total: 5 } });
		const { items: fromList } = await runOn(sandbox, {
			items: [{ ids }, { ids: [ids[2]] }],
			parameters: report({ notificationIds: '={{ $json.ids }}', output: 'totals' }),
		});
		expect(fromList[0].json).toMatchObject({ notifications: 3 });
		expect(pairedOf(fromList)).toEqual([[0, 1]]);
		expect(count(sandbox, DETAIL) - before).toBe(6);
	});

	test('bad input: a clear error naming the field and the item, nothing read', async () => {
		const cases: Array<[IDataObject, RegExp]> = [
			[{ notificationIds: '={{ $json.nothing }}' }, /^"Notification IDs" is empty \[item 0\]$/],
			[
				{ notificationIds: 'abc, de/f' },
				/^"Notification IDs" is not a valid ID: "de\/f" \[item 0\]$/,
			],
			[
				{ notificationIds: '={{ [true] }}' },
				/^"Notification IDs" contains a value that is not an ID: true \[item 0\]$/,
			],
		];
		for (const [fields, message] of cases) {
			const { error } = await runOn(sandbox, { parameters: report(fields) });
			expect(error?.message).toMatch(message);
		}
		expect(sandbox.requestLog()).toEqual([]);
	});

	test('a send that cannot be read: the run stops naming it; with Continue On Fail an error item and the report of the others', async () => {
		const { sent } = await sendThenReport({ output: 'totals' });
		const batches = [...jsonOf(sent.items), { id: 'no-such-send' }, { id: '' }];

		const stopped = await runOn(sandbox, { items: batches, parameters: report() });
		expect(stopped.error?.message).toMatch(/\[item 4\]/); // the bad input first, before any read

		const refreshes = count(sandbox, REFRESH);
		const failing = await runOn(sandbox, { items: batches.slice(0, 4), parameters: report() });
		expect(failing.error?.message).toMatch(/no-such-send/);
		expect(count(sandbox, REFRESH) - refreshes).toBe(1);

		const { items, error } = await runOn(sandbox, {
			items: batches,
			parameters: report({ output: 'totals' }),
			continueOnFail: true,
		});
		expect(error).toBeUndefined();
		const byKind = (output: INodeExecutionData[]) =>
			output.map((item) => (item.json.error ? 'error' : 'report'));
		expect(byKind(items)).toEqual(['error', 'error', 'report']);
		expect(items[0].json.error).toMatch(/"Notification IDs" is empty \[item 4\]/);
		expect(items[1].json).toMatchObject({
			notificationId: 'no-such-send',
			error: expect.stringMatching(/404|not found|does not exist/i),
		});
		expect(pairedOf(items)).toEqual([[4], [3], [0, 1, 2]]);
		expect(items[2].json).toMatchObject({ notifications: 3, userCounts: { total: 5 } });
		expect(count(sandbox, SEND)).toBe(3); // the Send's batches only: the report never sends
	});
});
