/**
 * The package on the n8n 1.x line: n8n 1.123.81 (the newest 1.x release the registry holds), on
 * Node 22 (the Node of n8n's 1.x Docker images), runtime installed by the global setup
 * (devkit/n8n, line '1.x'). The packed package installed as a community package, then:
 * - the node types load (n8n's /types/nodes.json lists them with their credential);
 * - the action cases of cases/actions.ts (send, get with waiting, schedule and cancel, users, a large
 *   audience, continue on fail) and the token renewal cases of cases/renewal.ts, run in a running
 *   n8n through its REST API, and an Idempotency Key (n8n's processed-data store) used twice, run by
 *   `n8n execute`;
 * - in a running n8n (`n8n start`): the ERP example through its real webhook, and the trigger: a send
 *   made in the sandbox from outside gives exactly one execution holding each of its events once, and
 *   the next poll adds nothing.
 * The trigger's n8n starts first and is checked last: its polls (one a minute) overlap the CLI cases.
 */
import {
	code,
	ERP_HEADERS,
	exampleWorkflows,
	hasFinished,
	manualWorkflow,
	N8nHome,
	type N8nRestClient,
	N8nServer,
	NODE_TYPE,
	pinnedVersions,
	push,
	request,
	runN8nCli,
	sendFromOutside,
	TRIGGER_TYPE,
	triggerWorkflow,
	waitFor,
} from './support/index.cts';
import { startSandbox, type Sandbox } from '../../sandbox/index.cts';
import { describeActions } from './cases/actions.cts';
import { describeRenewal } from './cases/renewal.cts';

const LINE = '1.x';
const POLL_MS = 60_000;
const TRIGGER_WORKFLOW = 'e2eTrigger1x';
const TAG = '[e2e-trigger-1x]';

describe(`the package in n8n ${pinnedVersions(LINE).n8n} (the 1.x line)`, () => {
	let sandbox: Sandbox;
	let home: N8nHome;
	let server: N8nServer;
	let rest: N8nRestClient;
	let session: { cookie: string; browserId: string };
	let users: Record<string, string>;
	let outsideSendId: string;

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0, deliveryMs: 1500 });
		const { primary } = sandbox.orgs;
		users = {
			onePhone: primary.usersOfKind('onePhone', 1)[0],
			noPhone: primary.usersOfKind('noPhone', 1)[0],
			uninstalled: primary.usersOfKind('uninstalled', 1)[0],
		};
		home = await N8nHome.create({ line: LINE });
		await home.useSandbox(sandbox);
		const erpExample = exampleWorkflows().find(
			(entry) => entry.workflow.id === 'cpExampleErpEvent',
		)!.workflow;
		await home.importWorkflows([triggerWorkflow(TRIGGER_WORKFLOW, TAG), erpExample]);
		// n8n 1.x has no `publish:workflow` (2.x): both workflows (all there is) are marked active in the
		// database and activated by `n8n start`.
		const activate = await runN8nCli(home.env, ['update:workflow', '--all', '--active=true'], {
			runtime: home.runtime,
		});
		if (activate.code !== 0)
			throw new Error(
				`n8n update:workflow failed (exit ${activate.code}):\n${activate.stdout.slice(-2000)}\n${activate.stderr.slice(-2000)}`,
			);
		// The owner set up as n8n 1.x's setup screen does (devkit/n8n/rest.cts), then logged in as 2.x does.
		server = await N8nServer.start(home);
		({ rest, session } = server);
		// The trigger polls once at activation (its starting point); the outside send comes after it.
		await waitFor(
			"the trigger's first poll",
			() => sandbox.requestLog().some((entry) => entry.path === '/push-notification/list'),
			60_000,
			250,
		);
		outsideSendId = await sendFromOutside(sandbox, `${TAG} Quarterly results`, [
			users.onePhone,
			users.uninstalled,
			users.noPhone,
		]);
	});

	afterAll(async () => {
		await server?.stop();
		await sandbox?.stop();
		home?.remove();
	});

	test('the community package loads: n8n lists its node and trigger, with their credential', async () => {
		const response = await request(`${server.url}/types/nodes.json`, {
			headers: { cookie: session.cookie, 'browser-id': session.browserId },
		});
		expect(response.status).toBe(200);
		const types = (
			response.json as Array<{
				name: string;
				version: number | number[];
				credentials?: Array<{ name: string }>;
			}>
		).filter((type) => [NODE_TYPE, TRIGGER_TYPE].includes(type.name));
		expect(
			types
				.map((type) => [type.name, type.credentials?.map((credential) => credential.name)])
				.sort(),
		).toEqual([
			[NODE_TYPE, ['companionPushApi']],
			[TRIGGER_TYPE, ['companionPushApi']],
		]);
	});

	test('the ERP example through its real webhook (production run, Idempotency Key): the named user is notified once', async () => {
		const event = { orderId: '7001', status: 'ready for pickup', userId: users.onePhone };
		expect(
			(
				await request(`${server.url}/webhook/erp-event`, {
					method: 'POST',
					headers: ERP_HEADERS,
					body: event,
				})
			).status,
		).toBe(200);
		const executions = await waitFor(
			'its execution',
			async () => {
				const list = await rest.listExecutions('cpExampleErpEvent');
				return list.length > 0 && list.every((execution) => execution.status === 'success') && list;
			},
			30_000,
			500,
		);
		expect(executions.map((execution) => execution.mode)).toEqual(['webhook']);
		const erpSends = sandbox
			.requestLog()
			.filter(
				(entry) =>
					entry.endpoint === 'POST /push-notification/send' &&
					(entry.body as any)?.title === 'Order 7001: ready for pickup',
			);
		expect(erpSends.map((entry) => [entry.status, (entry.body as any).target_user_ids])).toEqual([
			[202, [users.onePhone]],
		]);
	});

	describeActions(LINE);
	describeRenewal(LINE);

	describe('Idempotency Key in n8n 1.x (its processed-data store, n8n execute)', () => {
		const keyed = {} as { sandbox: Sandbox; home: N8nHome };

		beforeAll(async () => {
			keyed.sandbox = await startSandbox({ port: 0, deliveryMs: 500 });
			keyed.home = await N8nHome.create({ line: LINE });
			const userId = keyed.sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
			await keyed.home.useSandbox(keyed.sandbox);
			await keyed.home.importWorkflows([
				manualWorkflow('e2eKeyed1x', 'e2e: a keyed send', [
					[
						code(
							'Order Event',
							`return [{ json: { userId: '${userId}', key: 'order-9001:shipped' } }];`,
						),
						push('Send Keyed', {
							resource: 'notification',
							operation: 'send',
							title: 'Order 9001 has shipped',
							body: 'On its way',
							audience: 'userIds',
							userIds: '={{ $json.userId }}',
							additionalFields: {},
							options: { idempotencyKey: '={{ $json.key }}' },
						}),
					],
				]),
			]);
		});

		afterAll(async () => {
			await keyed.sandbox?.stop();
			keyed.home?.remove();
		});

		test('the same event run twice: one send; the item of the second run is skipped, naming the key', async () => {
			const first = await keyed.home.execute('e2eKeyed1x');
			const second = await keyed.home.execute('e2eKeyed1x');
			expect([first.status, second.status]).toEqual(['success', 'success']);
			const sends = keyed.sandbox
				.requestLog()
				.filter((entry) => entry.endpoint === 'POST /push-notification/send');
			expect(sends.map((entry) => entry.status)).toEqual([202]);
			const [sent] = first.items('Send Keyed');
			expect(sent).toMatchObject({
				id: sends[0].notificationId,
				status: 'sending',
				idempotencyKey: 'order-9001:shipped',
			});
			const [skipped] = second.items('Send Keyed');
			expect(skipped).toMatchObject({ skipped: true, idempotencyKey: 'order-9001:shipped' });
			expect(skipped.id).toBeUndefined();
		});
	});

	describe('the trigger in a running n8n 1.x (n8n start)', () => {
		let first: { id: string; startedAt: string };

		test('a send made in the sandbox gives exactly one execution, with each of its events once', async () => {
			const executions = await waitFor(
				'the trigger to start an execution and finish it',
				async () => {
					const list = await rest.listExecutions(TRIGGER_WORKFLOW);
					return list.length > 0 && list.every(hasFinished) && list;
				},
				2 * POLL_MS + 15_000,
				2000,
			);
			expect(executions).toHaveLength(1);
			first = executions[0];
			expect(first).toMatchObject({ mode: 'trigger', status: 'success' });
			const execution = await rest.getExecution(first.id);
			const items = execution.data.resultData.runData['Settled Or Failed'][0].data.main[0].map(
				(item: { json: Record<string, any> }) => item.json,
			);
			expect(items.map((item: Record<string, any>) => [item.event, item.notificationId])).toEqual([
				['notificationSettled', outsideSendId],
				['deliveryFailed', outsideSendId],
			]);
			expect(items[0]).toMatchObject({
				status: 'partially_failed',
				stats: { targeted_users: 3, devices: 2, sent: 1, failed: 1, opened: 0, no_device: 1 },
			});
			expect(items[1]).toMatchObject({ userId: users.uninstalled, status: 'failed' });
		});

		test('the next poll, after that execution, emits nothing again', async () => {
			expect(first).toBeDefined();
			const startedAt = Date.parse(first.startedAt);
			// The trigger is the only one polling this sandbox, once a minute. The first poll after the
			// execution has long ended when the second one begins: had it emitted anything again, that
			// execution would be listed by then.
			const [laterPoll] = await waitFor(
				'two polls after the execution',
				() => {
					const polls = sandbox
						.requestLog()
						.filter(
							(entry) => entry.path === '/push-notification/list' && entry.time > startedAt + 1000,
						);
					return polls.length >= 2 && polls;
				},
				2 * POLL_MS + 15_000,
				1000,
			);
			expect(laterPoll.status).toBe(200);
			const executions = await rest.listExecutions(TRIGGER_WORKFLOW);
			expect(executions.map((execution) => execution.id)).toEqual([first.id]);
			// Only the outside send and the ERP example's were ever made in this sandbox: the trigger's workflow sent nothing.
			expect(
				sandbox.requestLog().filter((entry) => entry.endpoint === 'POST /push-notification/send'),
			).toHaveLength(2);
		});
	});
});
