/**
 * Published workflows in a running n8n (`n8n start`), against the in-process sandbox:
 * - the Companion Push Trigger (poll every minute): a send made in the sandbox, from outside n8n,
 *   gives exactly one execution, holding each of its events once; the next poll adds nothing;
 * - the ERP example through its real Webhook;
 * - the follow-up report example through its real trigger: one report per settled send, with the
 *   counters of that send, and the reports themselves are not reported.
 * Bounded waits: at most two poll intervals for an event, and one more to see nothing is repeated.
 */
import { N8nRestClient, request } from '../../scripts/n8n-preload';
import type { RunningN8n } from '../../scripts/n8n-runtime';
import { startSandbox, type Sandbox } from '../../sandbox';
import { exampleWorkflows } from '../../scripts/n8n-preload';
import { N8nHome, sendFromOutside, triggerWorkflow, waitFor } from './n8n';

const POLL_MS = 60_000;
const TRIGGER_WORKFLOW = 'e2eTrigger';
const TAG = '[e2e-trigger]';

describe('published workflows in a running n8n (n8n start)', () => {
	let sandbox: Sandbox;
	let home: N8nHome;
	let n8n: RunningN8n;
	let rest: N8nRestClient;
	let users: Record<string, string>;
	let outsideSendId: string;
	let firstExecution: { id: string; startedAt: string };

	/** The items the trigger node emitted in an execution. */
	async function triggerItems(executionId: string, node = 'Settled Or Failed'): Promise<Array<Record<string, any>>> {
		const execution = await rest.getExecution(executionId);
		const runs = execution.data.resultData.runData[node];
		return runs[0].data.main[0].map((item: { json: Record<string, any> }) => item.json);
	}

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0, deliveryMs: 1500 });
		const { primary } = sandbox.orgs;
		users = {
			onePhone: primary.usersOfKind('onePhone', 1)[0],
			twoPhones: primary.usersOfKind('twoPhones', 1)[0],
			noPhone: primary.usersOfKind('noPhone', 1)[0],
			uninstalled: primary.usersOfKind('uninstalled', 1)[0],
		};
		home = await N8nHome.create();
		await home.useSandbox(sandbox);
		await home.importWorkflows([...exampleWorkflows().map((entry) => entry.workflow), triggerWorkflow(TRIGGER_WORKFLOW, TAG)]);
		n8n = await home.start();
		rest = new N8nRestClient(n8n.url);
		await rest.login();
	});

	afterAll(async () => {
		await n8n?.stop();
		await sandbox?.stop();
		home?.remove();
	});

	test('publishing: the trigger workflows, the webhook example and the schedule example activate; each trigger polls at once', async () => {
		const before = sandbox.requestLog().length;
		for (const id of [TRIGGER_WORKFLOW, 'cpExampleFollowUp', 'cpExampleErpEvent', 'cpExampleDigest']) {
			await rest.activateWorkflow(id);
			// Publishing is asynchronous in n8n 2.41 (an outbox): wait until it is done.
			const status = await waitFor(
				`${id} to be published`,
				async () => {
					const current = await rest.call('GET', `/workflows/${id}/publication-status`);
					return current.status !== 'in_progress' && current.status !== 'pending' && current;
				},
				60_000,
				250,
			);
			expect({ id, status: status.status, triggers: status.triggers.map((trigger: { status: string }) => trigger.status) }).toEqual({
				id,
				status: 'published',
				triggers: ['activated'],
			});
		}
		// The digest runs at 09:00 on weekdays: activated to prove its schedule is valid, then unpublished.
		await rest.deactivateWorkflow('cpExampleDigest');
		// Each trigger's first poll (at activation) lists the sends to set its starting point.
		const lists = sandbox.requestLog().slice(before).filter((entry) => entry.path === '/push-notification/list');
		expect(lists.length).toBeGreaterThanOrEqual(2);
	});

	test('the ERP example through its real webhook: the named user is notified', async () => {
		const response = await request(`${n8n.url}/webhook/erp-event`, {
			method: 'POST',
			body: { orderId: '7001', status: 'ready for pickup', userId: users.twoPhones },
		});
		expect(response.status).toBe(200);
		const record = await waitFor(
			'the ERP send',
			() => sandbox.notifications().find((entry) => entry.title === 'Order 7001: ready for pickup'),
			30_000,
			250,
		);
		expect(record).toMatchObject({ body: 'Your order 7001 is now ready for pickup. Tap to see the details.', deeplink: 'companionapp://home' });
		const executions = await waitFor('its execution', async () => {
			const list = await rest.listExecutions('cpExampleErpEvent');
			return list.length > 0 && list.every((execution) => execution.status === 'success') && list;
		}, 30_000);
		expect(executions.map((execution) => execution.mode)).toEqual(['webhook']);
	});

	test('the trigger: a send made in the sandbox gives exactly one execution, with each of its events once', async () => {
		outsideSendId = await sendFromOutside(sandbox, `${TAG} Quarterly results`, [users.onePhone, users.uninstalled, users.noPhone]);
		const executions = await waitFor(
			'the trigger to start an execution',
			async () => {
				const list = await rest.listExecutions(TRIGGER_WORKFLOW);
				return list.length > 0 && list;
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
		expect(items[1]).toMatchObject({ userId: users.uninstalled, status: 'failed' });
	});

	test('the follow-up report example: one report per settled send with its counters; the reports are not reported', async () => {
		const reports = await waitFor(
			'two delivery reports',
			() => {
				const found = sandbox.notifications().filter((entry) => entry.title.startsWith('Delivery report:'));
				return found.length >= 2 && found;
			},
			2 * POLL_MS + 15_000,
			2000,
		);
		const erpSend = sandbox.notifications().find((entry) => entry.title === 'Order 7001: ready for pickup');
		const outside = sandbox.notifications().find((entry) => entry.id === outsideSendId);
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

	test('one more poll later: no event was emitted twice; the reports settled, were seen by the trigger and filtered out', async () => {
		// Every trigger polls once a minute: after this wait each has polled again after the first
		// execution, and after the reports settled (deliveries take 4.5 s at most here).
		const reports = sandbox.notifications().filter((entry) => entry.title.startsWith('Delivery report:'));
		const lastReportAt = Math.max(...reports.map((report) => Date.parse(report.created_at)));
		const waitUntil = Math.max(Date.parse(firstExecution.startedAt), lastReportAt + 5000) + POLL_MS + 5000;
		await new Promise((resolve) => setTimeout(resolve, Math.max(0, waitUntil - Date.now())));

		const executions = await rest.listExecutions(TRIGGER_WORKFLOW);
		expect(executions.map((execution) => execution.id)).toEqual([firstExecution.id]);

		expect(sandbox.notifications().filter((entry) => entry.title.startsWith('Delivery report:'))).toHaveLength(2);
		const sends = sandbox.requestLog().filter((entry) => entry.endpoint === 'POST /push-notification/send');
		expect(sends).toHaveLength(4); // the ERP send, the outside send, two reports

		// The follow-up trigger emitted each settled send once, the reports included; the filter kept the reports back.
		const followUps = await rest.listExecutions('cpExampleFollowUp');
		expect(followUps.every((execution) => execution.status === 'success')).toBe(true);
		const emitted = (await Promise.all(followUps.map(async (execution) => await triggerItems(execution.id, 'When a Send Settles')))).flat();
		expect(emitted.map((item) => item.notificationId).sort()).toEqual(sandbox.notifications().map((entry) => entry.id).sort());
	});
});
