/**
 * The example workflows of examples/ in a real n8n: they import as they are, and their Companion
 * Push nodes, exactly as saved, run behind a Manual Trigger fed with what their own trigger would
 * give (a webhook request, a settled-send event). Then, under `n8n start`, the two examples with a
 * trigger anyone can call are published as their notes say: the ERP webhook and the safety alert's
 * form refuse a caller without their credential (nothing sent, no execution), work with it, and the
 * ERP example answers an event without its fields with the missing field's name, sending nothing;
 * the alert ladder follows the alerts its form sent, not another system's "Safety alert". The
 * Companion Push Trigger of the follow-up report runs in trigger.e2e.ts; the ladder's steps in
 * escalation.e2e.ts. The AI Agent example needs its scripted model: it runs as it is in ai-agent.e2e.ts.
 */
import {
	ALERT_FORM_ANSWERS,
	alertFormAuthorization,
	code,
	CREDENTIAL_ID,
	ERP_HEADERS,
	ERP_WEBHOOK_HEADER,
	EXAMPLE_SECRETS,
	exampleWorkflows,
	hasFinished,
	manualWorkflow,
	N8nHome,
	N8nServer,
	type NodeSpec,
	publish,
	request,
	requestsDuring,
	type RunResult,
	sendFromOutside,
	smtpCredentialEntry,
	type SmtpSink,
	startSmtpSink,
	waitFor,
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
		// The examples as they are, and their nodes behind a Manual Trigger: one import.
		await home.importWorkflows([
			...exampleWorkflows().map((entry) => entry.workflow),
			manualWorkflow('e2eExampleNodes', 'e2e: the example nodes as saved', [
				[
					code('As the Webhook Gives It', `return [{ json: ${JSON.stringify(webhookRequest)} }];`),
					exampleNode('erp-event-to-push.json', 'Notify the User'),
				],
				[
					// The trigger's filter leaves the reports out (test/examples/follow-up-fetch.test.cts).
					code('As the Trigger Gives It', `return [{ json: ${JSON.stringify(settled)} }];`),
					exampleNode('follow-up-report.json', 'Report to Ops'),
				],
				[exampleNode('scheduled-digest.json', 'Morning Push to Active Users')],
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

	test('Follow-up report: one report with the counters per settled send', () => {
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

	test('Morning announcement: every user with an active app, in batches of 500, nobody twice', () => {
		const { primary } = sandbox.orgs;
		const active = primary.userIds.filter((id) =>
			primary.devicesOf(id).some((device) => device.session === 'active'),
		);
		const items = result.items('Morning Push to Active Users');
		expect(items.map((item) => item.batchCount)).toEqual(
			Array(Math.ceil(active.length / 500)).fill(items.length),
		);
		const sends = requestsDuring(sandbox, result, 'Morning Push to Active Users').filter(
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
		expect(body.title).toBe('Your morning update');
		expect(body.body).toMatch(
			/^Good morning! \w+day \d{1,2} \w+: three new announcements are waiting for you\.$/,
		);
		expect(body.deeplink).toBe('companionapp://home');
	});

	describe('published as their notes say (n8n start): only a caller with the credential gets in', () => {
		let server: N8nServer;
		let smtp: SmtpSink;
		const ERP = 'cpExampleErpEvent';
		const ALERT = 'cpExampleEscalation';
		const alertExample = () =>
			exampleWorkflows().find((entry) => entry.workflow.id === ALERT)!.workflow;
		const formUrl = () => {
			const form = alertExample().nodes.find(
				(node: { type: string }) => node.type === 'n8n-nodes-base.formTrigger',
			);
			return `${server.url}/form/${form.webhookId}`;
		};
		/** The form's fields as its page posts them, with their defaults. */
		const formFields = () => {
			const form = alertExample().nodes.find(
				(node: { type: string }) => node.type === 'n8n-nodes-base.formTrigger',
			);
			const fields = new FormData();
			// The form comes empty (a real alert is typed): the headline and instructions a user types.
			ALERT_FORM_ANSWERS.forEach((answer, index) => fields.append(`field-${index}`, answer));
			expect(form.parameters.formFields.values).toHaveLength(ALERT_FORM_ANSWERS.length);
			return fields;
		};
		const postForm = (authorization?: string) =>
			fetch(formUrl(), {
				method: 'POST',
				headers: authorization ? { authorization } : {},
				body: formFields(),
			});
		const postErp = (body: unknown, headers: Record<string, string> = {}) =>
			request(`${server.url}/webhook/erp-event`, { method: 'POST', headers, body });
		const sendsSince = (count: number) =>
			sandbox
				.requestLog()
				.slice(count)
				.filter((entry) => entry.endpoint === SEND);
		/** The executions a call started (the alert ladder's polls start others, mode "trigger"). */
		const calledExecutions = async (workflowId: string) =>
			(await server.rest.listExecutions(workflowId)).filter(
				(execution) => execution.mode === 'webhook',
			);
		const finishedExecutions = (workflowId: string, count: number) =>
			waitFor(
				`${count} finished execution(s) of ${workflowId}`,
				async () => {
					const list = await calledExecutions(workflowId);
					return list.length === count && list.every(hasFinished) && list;
				},
				60_000,
				500,
			);

		beforeAll(async () => {
			// The same user folder: the examples and their credentials are there already; the alert's
			// mails go to a local mail server.
			smtp = await startSmtpSink();
			await home.importCredentials([smtpCredentialEntry(smtp.port)]);
			server = await N8nServer.start(home);
			for (const id of [ERP, ALERT]) {
				const status = await publish(server.rest, id);
				expect([id, status.status]).toEqual([id, 'published']);
			}
		});

		afterAll(async () => {
			await server?.stop();
			await smtp?.stop();
		});

		test('without the credential: the ERP webhook answers 403, the alert form 401; nothing is sent, nothing runs', async () => {
			const before = sandbox.requestLog().length;
			const event = { orderId: '2001', status: 'shipped', userId: employee };
			expect((await postErp(event)).status).toBe(403);
			expect((await postErp(event, { [ERP_WEBHOOK_HEADER]: 'guessed' })).status).toBe(403);
			expect((await fetch(formUrl())).status).toBe(401); // the form's page
			expect((await postForm()).status).toBe(401);
			const wrongLogin = `Basic ${Buffer.from('safety:guessed').toString('base64')}`;
			expect((await postForm(wrongLogin)).status).toBe(401);
			expect(await server.rest.listExecutions(ERP)).toEqual([]);
			expect(await calledExecutions(ALERT)).toEqual([]);
			expect(sendsSince(before)).toEqual([]);
		});

		test('with it: the ERP event notifies its user once; the form sends the alert to everyone', async () => {
			const before = sandbox.requestLog().length;
			const answer = await postErp(
				{ orderId: '2001', status: 'shipped', userId: employee },
				ERP_HEADERS,
			);
			expect([answer.status, answer.json]).toEqual([200, { message: 'Workflow was started' }]);
			const [execution] = await finishedExecutions(ERP, 1); // the refused calls made none
			expect([execution.mode, execution.status]).toEqual(['webhook', 'success']);
			const erpSends = sendsSince(before);
			expect(
				erpSends.map((entry) => [entry.status, (entry.body as { title: string }).title]),
			).toEqual([[202, 'Order 2001: shipped']]);

			const submitted = await postForm(alertFormAuthorization(EXAMPLE_SECRETS));
			expect(submitted.status).toBe(200);
			const [alertRun] = await finishedExecutions(ALERT, 1);
			expect(alertRun.status).toBe('success');
			const alerts = sendsSince(before)
				.slice(erpSends.length)
				.map((entry) => entry.body as { title: string; target_user_ids: string[] });
			expect(new Set(alerts.map((alert) => alert.title))).toEqual(
				new Set(['Safety alert: leave building B']),
			);
			expect(alerts.flatMap((alert) => alert.target_user_ids).sort()).toEqual(
				[...sandbox.orgs.primary.userIds].sort(),
			);
		});

		test('an event with order_id instead of orderId: the ERP is told orderId is missing (422), nothing is sent', async () => {
			const before = sandbox.requestLog().length;
			const answer = await postErp(
				{ order_id: '2002', status: 'shipped', userId: employee },
				ERP_HEADERS,
			);
			expect(answer.status).toBe(422);
			expect(answer.json.missing).toEqual(['orderId']);
			expect(answer.json.error).toContain('orderId');
			// Its execution ended (the refusal shows in Executions) without a send.
			const [newest] = await finishedExecutions(ERP, 2);
			expect(newest.status).toBe('success');
			expect(sendsSince(before)).toEqual([]);
		});
		test('the alert ladder follows only the alerts sent here: another system\'s "Safety alert" stops at Only Alerts Sent Here', async () => {
			const ours = sandbox
				.notifications('primary')
				.filter((record) => record.title === 'Safety alert: leave building B')
				.map((record) => record.id);
			expect(ours.length).toBeGreaterThan(0);
			// A send of another system of the organization, with the alert's title, to people no phone
			// reaches: the trigger reports them Not Reached, as it does for the alert's own.
			const stranger = sandbox.orgs.primary.usersOfKind('noPhone', 2);
			const foreign = await sendFromOutside(
				sandbox,
				'Safety alert: sign in at https://example.com/reset',
				stranger,
			);
			/** The notifications each step of the ladder's executions got, over all of them. */
			const seen = async () => {
				const runs = (await server.rest.listExecutions(ALERT)).filter(
					(execution) => execution.mode === 'trigger' && hasFinished(execution),
				);
				const at = { ladder: new Set<string>(), kept: new Set<string>() };
				for (const { id } of runs) {
					const { runData } = (await server.rest.getExecution(id)).data.resultData;
					const ids = (node: string) =>
						(runData[node]?.[0]?.data?.main?.[0] ?? []).map(
							(item: { json: { notificationId: string } }) => item.json.notificationId,
						);
					ids('Alert Ladder').forEach((notificationId: string) => at.ladder.add(notificationId));
					ids('Only Alerts Sent Here').forEach((notificationId: string) =>
						at.kept.add(notificationId),
					);
				}
				return at;
			};
			const at = await waitFor(
				'the ladder to report the foreign send and the alert (the next polls)',
				async () => {
					const now = await seen();
					return now.ladder.has(foreign) && ours.some((id) => now.kept.has(id)) && now;
				},
				180_000,
				2000,
			);
			expect(at.kept.has(foreign)).toBe(false);
			expect([...at.kept].every((id) => ours.includes(id))).toBe(true);
			// Its people got no mail; the alert's own did.
			expect(smtp.mails.filter((mail) => mail.subject.includes('sign in'))).toEqual([]);
			expect(smtp.mails.some((mail) => mail.subject === 'Safety alert: leave building B')).toBe(
				true,
			);
		});
	});
});
