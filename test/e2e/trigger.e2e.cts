/**
 * Published workflows in a running n8n (`n8n start`), against the in-process sandbox:
 * - the Companion Push Trigger (poll every minute), watching the sandbox's secondary org: a send
 *   made there from outside n8n gives exactly one execution, holding each of its events once;
 *   another send there without the trigger's tag in its title gives none; the next poll adds nothing;
 * - the ERP example through its real Webhook;
 * - the follow-up report example (primary org) through its real trigger: one report per settled
 *   send, with the counters of that send, and the reports themselves are not reported.
 * Every wait is for a state (an execution finished, a report sent, a poll seen in the sandbox's log),
 * bounded by two or three poll intervals. The two triggers watch different orgs so that the sandbox's
 * log tells their polls apart.
 */
import {
	ERP_HEADERS,
	exampleWorkflows,
	hasFinished,
	N8nHome,
	type N8nRestClient,
	N8nServer,
	publish,
	request,
	SECONDARY_CREDENTIAL,
	sendFromOutside,
	triggerWorkflow,
	waitFor,
} from './support/index.cts';
import { startSandbox, type Sandbox, type SandboxOrg } from '../../sandbox/index.cts';

const POLL_MS = 60_000;
const TRIGGER_WORKFLOW = 'e2eTrigger';
const TAG = '[e2e-trigger]';
const LIST = 'GET /push-notification/list';

const fourUsers = (org: SandboxOrg) => ({
	onePhone: org.usersOfKind('onePhone', 1)[0],
	twoPhones: org.usersOfKind('twoPhones', 1)[0],
	noPhone: org.usersOfKind('noPhone', 1)[0],
	uninstalled: org.usersOfKind('uninstalled', 1)[0],
});

describe('published workflows in a running n8n (n8n start)', () => {
	let sandbox: Sandbox;
	let home: N8nHome;
	let server: N8nServer;
	let rest: N8nRestClient;
	let users: ReturnType<typeof fourUsers>;
	let secondaryUsers: ReturnType<typeof fourUsers>;
	let outsideSendId: string;
	let firstExecution: { id: string; startedAt: string };

	/** The items the trigger node emitted in an execution. */
	async function triggerItems(
		executionId: string,
		node = 'Settled Or Failed',
	): Promise<Array<Record<string, any>>> {
		const execution = await rest.getExecution(executionId);
		const runs = execution.data.resultData.runData[node];
		return runs[0].data.main[0].map((item: { json: Record<string, any> }) => item.json);
	}

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0, deliveryMs: 1500 });
		users = fourUsers(sandbox.orgs.primary);
		secondaryUsers = fourUsers(sandbox.orgs.secondary);
		home = await N8nHome.create();
		await home.useSandbox(sandbox, { secondaryOrg: true });
		server = await N8nServer.start(home, {
			workflows: [
				...exampleWorkflows().map((entry) => entry.workflow),
				triggerWorkflow(TRIGGER_WORKFLOW, TAG, SECONDARY_CREDENTIAL),
			],
		});
		rest = server.rest;
	});

	afterAll(async () => {
		await server?.stop();
		await sandbox?.stop();
		home?.remove();
	});

	test('publishing: the trigger workflows, the webhook example and the schedule example activate; each trigger polls at once', async () => {
		const before = sandbox.requestLog().length;
		for (const id of [
			TRIGGER_WORKFLOW,
			'cpExampleFollowUp',
			'cpExampleErpEvent',
			'cpExampleDigest',
		]) {
			// Publishing is asynchronous in n8n 2.41 (an outbox): this waits until it is done.
			const status = await publish(rest, id);
			expect({
				id,
				status: status.status,
				triggers: status.triggers.map((trigger) => trigger.status),
			}).toEqual({
				id,
				status: 'published',
				triggers: ['activated'],
			});
		}
		// The digest runs at 09:00 on weekdays: activated to prove its schedule is valid, then unpublished.
		await rest.deactivateWorkflow('cpExampleDigest');
		// Each trigger's first poll (at activation) lists the sends of its org to set its starting point.
		const lists = sandbox
			.requestLog()
			.slice(before)
			.filter((entry) => entry.endpoint === LIST);
		expect([...new Set(lists.map((entry) => entry.orgId))].sort()).toEqual(
			[sandbox.orgs.primary.id, sandbox.orgs.secondary.id].sort(),
		);
	});

	test('the ERP example through its real webhook: the named user is notified', async () => {
		const response = await request(`${server.url}/webhook/erp-event`, {
			method: 'POST',
			headers: ERP_HEADERS,
			body: { orderId: '7001', status: 'ready for pickup', userId: users.twoPhones },
		});
		expect(response.status).toBe(200);
		const record = await waitFor(
			'the ERP send',
			() => sandbox.notifications().find((entry) => entry.title === 'Order 7001: ready for pickup'),
			30_000,
			250,
		);
		expect(record).toMatchObject({
			body: 'Your order 7001 is now ready for pickup. Tap to see the details.',
			deeplink: 'companionapp://home',
		});
		const executions = await waitFor(
			'its execution',
			async () => {
				const list = await rest.listExecutions('cpExampleErpEvent');
				return list.length > 0 && list.every((execution) => execution.status === 'success') && list;
			},
			30_000,
		);
		expect(executions.map((execution) => execution.mode)).toEqual(['webhook']);
	});

	test('the trigger: a send made in the sandbox gives exactly one execution, with each of its events once', async () => {
		const { secondary } = sandbox.orgs;
		// Another send of the watched org, without the tag in its title: the trigger's filter drops it.
		await sendFromOutside(
			sandbox,
			'Quarterly results for sales',
			[secondaryUsers.twoPhones],
			secondary,
		);
		outsideSendId = await sendFromOutside(
			sandbox,
			`${TAG} Quarterly results`,
			[secondaryUsers.onePhone, secondaryUsers.uninstalled, secondaryUsers.noPhone],
			secondary,
		);
		// And one in the primary org, for the follow-up report example below.
		await sendFromOutside(sandbox, 'Quarterly results', [
			users.onePhone,
			users.uninstalled,
			users.noPhone,
		]);
		// Finished, not only started: under load the execution can still be running when first listed.
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
		firstExecution = executions[0];
		expect(executions[0]).toMatchObject({ mode: 'trigger', status: 'success' });
		const items = await triggerItems(executions[0].id);
		expect(items.map((item) => [item.event, item.notificationId])).toEqual([
			['notificationSettled', outsideSendId],
			['deliveryFailed', outsideSendId],
		]);
		expect(items[0]).toMatchObject({
			title: `${TAG} Quarterly results`,
			status: 'partially_failed',
			stats: { targeted_users: 3, devices: 2, sent: 1, failed: 1, opened: 0, no_device: 1 },
		});
		expect(items[1]).toMatchObject({ userId: secondaryUsers.uninstalled, status: 'failed' });
	});

	test('the follow-up report example: one report per settled send with its counters; the reports are not reported', async () => {
		const reports = await waitFor(
			'two delivery reports',
			() => {
				const found = sandbox
					.notifications()
					.filter((entry) => entry.title.startsWith('Delivery report:'));
				return found.length >= 2 && found;
			},
			2 * POLL_MS + 15_000,
			2000,
		);
		const erpSend = sandbox
			.notifications()
			.find((entry) => entry.title === 'Order 7001: ready for pickup');
		const outside = sandbox.notifications().find((entry) => entry.title === 'Quarterly results');
		for (const send of [erpSend, outside]) {
			const stats = send!.stats;
			const report = reports.find((entry) => entry.body.includes(`(${send!.id})`));
			expect(report).toBeDefined();
			expect(report!.title).toBe(`Delivery report: ${send!.status}`);
			expect(report!.body).toBe(
				`"${send!.title}" (${send!.id}) is ${send!.status}: ${stats.targeted_users} users targeted, ${stats.devices} phones, ` +
					`${stats.sent} sent, ${stats.failed} failed, ${stats.no_device} without a phone, ${stats.opened} opened.`,
			);
			expect(report!.target_user_ids).toEqual(['e533773a0ba45c0000000000']);
		}
	});

	test('later polls: no event was emitted twice; the reports settled and the follow-up trigger left them out', async () => {
		// The example's trigger leaves out its own reports (Filters > Title Does Not Contain).
		const primarySends = () =>
			sandbox
				.notifications(sandbox.orgs.primary.id)
				.filter((send) => !send.title.startsWith('Delivery report:'));
		/** The events the follow-up trigger emitted, over its finished executions (undefined while one runs). */
		const followUpEmitted = async () => {
			const followUps = await rest.listExecutions('cpExampleFollowUp');
			if (!followUps.every(hasFinished)) return undefined;
			expect(followUps.every((execution) => execution.status === 'success')).toBe(true);
			return (
				await Promise.all(
					followUps.map(
						async (execution) => await triggerItems(execution.id, 'When a Send Settles'),
					),
				)
			).flat();
		};
		// The follow-up trigger has emitted every send of its org but the reports.
		await waitFor(
			'the follow-up trigger to emit every send of the primary org',
			async () => {
				const emitted = new Set(
					((await followUpEmitted()) ?? []).map((item) => item.notificationId),
				);
				return primarySends().every((send) => emitted.has(send.id));
			},
			2 * POLL_MS + 15_000,
			2000,
		);
		// The trigger's first poll after its execution has ended when its second one begins (one poll a
		// minute, each in a moment): had that poll emitted anything again, the execution would be listed.
		const startedAt = Date.parse(firstExecution.startedAt);
		await waitFor(
			"two of the trigger's polls after its execution",
			() =>
				sandbox
					.requestLog()
					.filter(
						(entry) =>
							entry.endpoint === LIST &&
							entry.orgId === sandbox.orgs.secondary.id &&
							entry.time > startedAt + 1000,
					).length >= 2,
			2 * POLL_MS + 15_000,
			1000,
		);

		const executions = await rest.listExecutions(TRIGGER_WORKFLOW);
		expect(executions.map((execution) => execution.id)).toEqual([firstExecution.id]);

		expect(
			sandbox.notifications().filter((entry) => entry.title.startsWith('Delivery report:')),
		).toHaveLength(2);
		const sends = sandbox
			.requestLog()
			.filter((entry) => entry.endpoint === 'POST /push-notification/send');
		expect(sends).toHaveLength(6); // the ERP send, three outside sends, the two reports (of the primary org's two sends)
		// The follow-up trigger emitted each settled send of its org once, and no report (settled by now).
		const emitted = (await followUpEmitted())!;
		expect(emitted.map((item) => item.notificationId).sort()).toEqual(
			primarySends()
				.map((send) => send.id)
				.sort(),
		);
	});
});
