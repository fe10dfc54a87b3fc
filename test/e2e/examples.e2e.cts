/**
 * The example workflows of examples/ in a real n8n: they import as they are, and their Companion
 * Push nodes, exactly as saved, run behind a Manual Trigger fed with what their own trigger would
 * give (a webhook request, a settled-send event). Their real triggers (Webhook, Companion Push
 * Trigger) run in trigger.e2e.ts under `n8n start`. The AI Agent example needs its scripted model:
 * it runs as it is in ai-agent.e2e.ts.
 */
import {
	code,
	CREDENTIAL_ID,
	exampleWorkflows,
	manualWorkflow,
	N8nHome,
	type NodeSpec,
	requestsDuring,
	type RunResult,
} from './support/index.cts';
import { startSandbox, type Sandbox } from '../../sandbox/index.cts';

const SEND = 'POST /push-notification/send';

function exampleNode(file: string, name: string): NodeSpec {
	const example = exampleWorkflows().find((entry) => entry.file === file);
	if (!example) throw new Error(`No example ${file}`);
	const node = example.workflow.nodes.find(
		(candidate: { name: string }) => candidate.name === name,
	);
	if (!node) throw new Error(`No node "${name}" in ${file}`);
	return node;
}

describe('the example workflows in a real n8n', () => {
	let sandbox: Sandbox;
	let home: N8nHome;
	let result: RunResult;
	let employee: string;

	beforeAll(async () => {
		// About 950 users with an active app: the digest (batches of 500) makes two sends.
		sandbox = await startSandbox({ port: 0, seedUsers: 1200, deliveryMs: 500 });
		employee = sandbox.orgs.primary.usersOfKind('twoPhones', 1)[0];
		home = await N8nHome.create();
		await home.useSandbox(sandbox);

		const webhookRequest = {
			headers: {},
			params: {},
			query: {},
			body: { orderId: '1042', status: 'shipped', userId: employee, announcementId: 'an-7' },
		};
		const settled = {
			event: 'notificationSettled',
			notificationId: 'n-1042',
			title: 'Order 1042: shipped',
			status: 'partially_failed',
			previousStatus: null,
			stats: { targeted_users: 3, devices: 4, sent: 3, failed: 1, opened: 2, no_device: 0 },
		};
		const report = { ...settled, notificationId: 'n-1043', title: 'Delivery report: sent' };
		// The examples as they are, and their nodes behind a Manual Trigger: one import.
		await home.importWorkflows([
			...exampleWorkflows().map((entry) => entry.workflow),
			manualWorkflow('e2eExampleNodes', 'e2e: the example nodes as saved', [
				[
					code('As the Webhook Gives It', `return [{ json: ${JSON.stringify(webhookRequest)} }];`),
					exampleNode('erp-event-to-push.json', 'Notify the User'),
				],
				[
					code(
						'As the Trigger Gives It',
						`return [{ json: ${JSON.stringify(settled)} }, { json: ${JSON.stringify(report)} }];`,
					),
					exampleNode('follow-up-report.json', 'Not a Report Itself'),
					exampleNode('follow-up-report.json', 'Report to Ops'),
				],
				[exampleNode('scheduled-digest.json', 'Digest to Active Users')],
			]),
		]);
		result = await home.execute('e2eExampleNodes');
	});

	afterAll(async () => {
		await sandbox?.stop();
		home?.remove();
	});

	test('the five examples import into n8n, every Companion Push node using the credential cpSandboxCredential', () => {
		const examples = exampleWorkflows();
		expect(examples.map((entry) => entry.file)).toEqual([
			'ai-agent-notify.json',
			'erp-event-to-push.json',
			'follow-up-report.json',
			'safety-alert-escalation.json',
			'scheduled-digest.json',
		]);
		for (const { workflow } of examples) {
			const pushNodes = workflow.nodes.filter((node: { type: string }) =>
				node.type.startsWith('n8n-nodes-companion-push.'),
			);
			expect(pushNodes.length).toBeGreaterThan(0);
			for (const node of pushNodes)
				expect(node.credentials.companionPushApi.id).toBe(CREDENTIAL_ID);
		}
		expect(result.status).toBe('success');
	});

	test('ERP event to push: notifies the user named in the event, with the announcement deeplink', () => {
		const [sent] = result.items('Notify the User');
		expect(sent).toMatchObject({ status: 'sending', targetUserIds: [employee] });
		const [request] = requestsDuring(sandbox, result, 'Notify the User').filter(
			(entry) => entry.endpoint === SEND,
		);
		expect(request.body).toEqual({
			title: 'Order 1042: shipped',
			body: 'Your order 1042 is now shipped. Tap to see the details.',
			target_user_ids: [employee],
			deeplink: 'companionapp://announcement/an-7',
		});
	});

	test('Follow-up report: one report with the counters per settled send; reports are not reported', () => {
		expect(result.items('Not a Report Itself').map((item) => item.notificationId)).toEqual([
			'n-1042',
		]);
		const sends = requestsDuring(sandbox, result, 'Report to Ops').filter(
			(entry) => entry.endpoint === SEND,
		);
		expect(sends).toHaveLength(1);
		expect(sends[0].body).toEqual({
			title: 'Delivery report: partially_failed',
			body: '"Order 1042: shipped" (n-1042) is partially_failed: 3 users targeted, 4 phones, 3 sent, 1 failed, 0 without a phone, 2 opened.',
			target_user_ids: ['e533773a0ba45c0000000000'],
			deeplink: 'companionapp://home',
		});
		// The ops user of the example is the first user of the sandbox (seed 1).
		expect(sandbox.orgs.primary.userIds[0]).toBe('e533773a0ba45c0000000000');
	});

	test('Scheduled digest: every user with an active app, in batches of 500, nobody twice', () => {
		const { primary } = sandbox.orgs;
		const active = primary.userIds.filter((id) =>
			primary.devicesOf(id).some((device) => device.session === 'active'),
		);
		const items = result.items('Digest to Active Users');
		expect(items.map((item) => item.batchCount)).toEqual(
			Array(Math.ceil(active.length / 500)).fill(items.length),
		);
		const sends = requestsDuring(sandbox, result, 'Digest to Active Users').filter(
			(entry) => entry.endpoint === SEND,
		);
		const targets = sends.flatMap(
			(send) => (send.body as { target_user_ids: string[] }).target_user_ids,
		);
		expect(
			sends
				.map((send) => (send.body as { target_user_ids: string[] }).target_user_ids.length)
				.every((n) => n <= 500),
		).toBe(true);
		expect(targets).toHaveLength(active.length);
		expect(new Set(targets)).toEqual(new Set(active));
		const body = sends[0].body as { title: string; body: string; deeplink: string };
		expect(body.title).toBe('Your morning digest');
		expect(body.body).toMatch(
			/^Good morning! \w+day \d{1,2} \w+: three new announcements are waiting for you\.$/,
		);
		expect(body.deeplink).toBe('companionapp://home');
	});
});
