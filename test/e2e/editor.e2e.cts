/**
 * The n8n editor in headless Chromium (Debian's chromium driven by playwright-core), on a real
 * n8n 2.41.1 with the packed package installed: sign in, the nodes in the node panel with their
 * icons, the credential test, every example opened as a new user opens it (no node name hidden by
 * the Execute button; the safety alert's Execute button sends the alert through its form), and a
 * Send node of an example run with "Execute step" showing its output. No test-only workflow (what
 * the screenshots show is what a new user gets), but two, made last (no example has their options):
 * a Send with a Digest Key run twice (the second cancels the first send and schedules its
 * replacement), and a Send with Cap per Person, its two outputs on the canvas and its Capped output
 * after two runs.
 * Screenshots go to test-results/screenshots/; the ones the README and docs show are written back to
 * docs/screenshots/ when what they show changed (support/screenshots.cts).
 */
import type { Page } from 'playwright-core';

import {
	ALERT_FORM_ANSWERS,
	ALERT_FORM_USER,
	brief,
	CANCEL,
	EXAMPLE_SECRETS,
	exampleWorkflows,
	hasFinished,
	keepScreenshot,
	launchBrowser,
	manualWorkflow,
	N8nHome,
	N8nServer,
	OWNER_EMAIL,
	OWNER_PASSWORD,
	publish,
	push,
	SEND,
	settled,
	smtpCredentialEntry,
	startSmtpSink,
	waitFor,
	type Json,
	type SmtpSink,
} from './support/index.cts';
import { startSandbox, type LoggedRequest, type Sandbox } from '../../sandbox/index.cts';

/** The examples `npm start` publishes when it runs the sandbox (scripts/start.cts). */
const PUBLISHED_BY_NPM_START = ['cpExampleErpEvent', 'cpExampleFollowUp'];

/** The screenshots the README and docs show (docs/screenshots/). */
const README_SHOTS = [
	'workflows',
	'node-panel',
	'credential-test',
	'safety-alert-form',
	'safety-alert-sent',
	'example-follow-up-report',
	'execute-step',
	'cap-per-person-capped',
	'digest-second-run',
];

describe('the n8n editor in headless Chromium', () => {
	let sandbox: Sandbox;
	let smtp: SmtpSink;
	let home: N8nHome;
	let server: N8nServer;
	let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
	let page: Page;

	const screenshot = async (name: string, shown: Page = page) => {
		await settled(shown); // panels slid in
		keepScreenshot(name, await shown.screenshot(), { readme: README_SHOTS.includes(name) });
	};

	/** Runs a node whose panel is open with "Execute step"; returns its outputs as n8n saved them,
	 * the panel's output shown as JSON. */
	const executeStepOf = async (workflowId: string, nodeName: string): Promise<Json[][]> => {
		const ndv = page.locator('[data-test-id="ndv"]');
		const runsBefore = (await server.rest.listExecutions(workflowId)).length;
		await ndv.locator('[data-test-id="node-execute-button"]').click();
		const [execution] = await waitFor(
			'the run of "Execute step"',
			async () => {
				const runs = await server.rest.listExecutions(workflowId);
				return runs.length > runsBefore && runs.every(hasFinished) && runs;
			},
			120_000,
			250,
		);
		// Done running in the editor too (n8n's answer may reach the page later than the REST API).
		await ndv.locator('[data-test-id="node-execute-button"]:not([aria-busy="true"])').waitFor();
		await ndv.locator('[data-test-id="output-panel"] [data-test-id="radio-button-json"]').click();
		const { runData } = (await server.rest.getExecution(execution.id)).data.resultData;
		return (runData[nodeName][0].data.main as Json[][]).map((items) =>
			(items ?? []).map((item) => item.json),
		);
	};

	/** A shot of the open node panel with an option (its label matching `label`) in view beside the
	 * output, without the runs' toasts over them; the option's row, for what the test does next. */
	const screenshotBesideOption = async (label: RegExp, name: string) => {
		const option = page
			.locator('[data-test-id="ndv"] [data-test-id="parameter-item"]')
			.filter({ hasText: label });
		await option.scrollIntoViewIfNeeded();
		const toasts = page.locator('.el-notification');
		await toasts
			.locator('.el-notification__closeBtn')
			.evaluateAll((buttons) =>
				buttons.forEach((button) => (button as unknown as { click(): void }).click()),
			);
		await waitFor('the toasts closed', async () => (await toasts.count()) === 0, 15_000, 100);
		await screenshot(name);
		return option;
	};

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0, deliveryMs: 1500 });
		smtp = await startSmtpSink();
		home = await N8nHome.create();
		// As `npm start` sets it up: the sandbox's credential and the safety alert's mail server.
		await home.useSandbox(sandbox, { more: [smtpCredentialEntry(smtp.port)] });
		const workflows = exampleWorkflows().map((entry) => entry.workflow);
		// n8n starts while Chromium launches.
		const [started, launched] = await Promise.allSettled([
			N8nServer.start(home, { workflows }),
			// The safety alert's form asks for its login: typed in as the ready block of npm start says.
			launchBrowser({
				httpCredentials: {
					username: ALERT_FORM_USER,
					password: EXAMPLE_SECRETS.alertFormPassword,
				},
			}),
		]);
		if (started.status === 'fulfilled') server = started.value;
		if (launched.status === 'fulfilled') browser = launched.value;
		for (const outcome of [started, launched])
			if (outcome.status === 'rejected') throw outcome.reason;
		page = browser!.page;
	});

	afterAll(async () => {
		await browser?.close();
		await server?.stop();
		await sandbox?.stop();
		await smtp?.stop();
		home?.remove();
	});

	test('sign in as the owner set from the environment: the example workflows are listed', async () => {
		await page.goto(`${server.url}/signin`);
		await page.fill('input[name="emailOrLdapLoginId"]', OWNER_EMAIL);
		await page.fill('input[name="password"]', OWNER_PASSWORD);
		await page.click('button:has-text("Sign in")');
		await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
		for (const { workflow } of exampleWorkflows()) {
			await page.getByText(workflow.name, { exact: true }).first().waitFor();
		}
	});

	test('an example workflow on the canvas, then the node panel: Companion Push with its icon, its actions and triggers', async () => {
		await page.goto(`${server.url}/workflow/cpExampleFollowUp`);
		await page.locator('[data-test-id="canvas-node"]').first().waitFor();
		const canvasIcons = page.locator('[data-test-id="canvas-node"] img[src*="companionPush"]');
		await expectLoadedImages(canvasIcons, 2); // the trigger and the Send node
		await screenshot('example-follow-up-report');

		await page.click('[data-test-id="node-creator-plus-button"]');
		await page.keyboard.type('Companion Push');
		const item = page
			.locator('[data-test-id="node-creator-item-name"]', { hasText: 'Companion Push' })
			.first();
		await item.waitFor();
		await expectLoadedImages(
			page.locator('[data-test-id="node-creator"] img[src*="companionPush"]'),
			1,
		);
		await item.click();
		const panel = page.locator('[data-test-id="node-creator"]');
		const actions = [
			'Send a notification',
			'Schedule a notification',
			'Cancel a scheduled notification',
			'Get the status of a notification',
			'Get many notifications',
			'Get a delivery report for notifications',
			'Get many users',
			'Get users with an active app',
		];
		for (const action of actions) await panel.getByText(action, { exact: true }).waitFor();
		// One entry for the action node and the trigger, with the trigger's description: it says both.
		await page
			.locator('[data-test-id="node-creator"]')
			.getByText(
				'Send push notifications to the companion app, and start workflows when they settle, fail on a phone, are opened, reach no phone of a person, are not opened in time, or are opened after an escalation',
			)
			.first()
			.waitFor();
		// The trigger's seven events, each named by its action (not "On no device").
		await panel.getByText('Triggers (7)').click();
		const triggerActions = [
			'On notification settled',
			'On delivery failed on a phone',
			'On notification opened',
			'On person with no active app',
			'On person not opening in time',
			'On person not reached on any phone',
			'On person opening after escalation',
		];
		for (const action of triggerActions) await panel.getByText(action, { exact: true }).waitFor();
		await expectLoadedImages(
			panel.locator('img[src*="companionPush"]'),
			actions.length + triggerActions.length,
		);
		// Tall enough to show the eight actions and the seven trigger events together.
		await page.setViewportSize({ width: 1280, height: 1200 });
		await screenshot('node-panel');
		await page.setViewportSize({ width: 1280, height: 800 });
		const icon = await fetch(
			`${server.url}${await panel.locator('img[src*="companionPush"]').first().getAttribute('src')}`,
		);
		expect(icon.status).toBe(200);
		expect(await icon.text()).toMatch(/^<svg|^<\?xml/);
		await page.keyboard.press('Escape');
	});

	test('the credential: opening it tests it (a token renewal and a read), and the test button (Retry) passes again', async () => {
		await page.goto(`${server.url}/home/credentials`);
		const before = sandbox.requestLog().length;
		const opened = waitForCredentialTest(page);
		await page.getByText('Companion Push sandbox', { exact: true }).first().click();
		const modal = page.locator('[data-test-id="editCredential-modal"]');
		await modal.waitFor();
		expect(await opened).toMatchObject({ status: 'OK' });
		const success = modal.locator('[data-test-id="credentials-config-container-test-success"]');
		await success.getByText('Connection tested successfully').waitFor();
		// The first test renews the (empty) token with the three secrets, then reads the active users.
		expect(sandbox.requestLog().slice(before).map(brief)).toEqual([
			'POST /auth/oauth/v2/refresh 200',
			'GET /user-device/users 200',
		]);

		const retried = waitForCredentialTest(page);
		await success.getByRole('button', { name: 'Retry' }).click();
		expect(await retried).toMatchObject({ status: 'OK' });
		await success.getByText('Connection tested successfully').waitFor();
		await success.getByRole('button', { name: 'Retry' }).waitFor(); // done loading
		await screenshot('credential-test');
	});

	test('the credential: after the Client Secret is edited to a wrong one, the test fails (renewed with it, refused); restored, it passes', async () => {
		const modal = page.locator('[data-test-id="editCredential-modal"]');
		const secret = modal
			.locator('[data-test-id="credential-connection-parameter"]', { hasText: 'Client Secret' })
			.locator('input');
		// Save is clicked once its button reads "Save" (not "Saved" or "Saving"): clicked at once after a
		// fill, on a loaded machine, it made no credential test.
		const save = async () => {
			const saveButton = modal.locator('[data-test-id="credential-save-button"]');
			await saveButton.filter({ hasText: /^\s*Save\s*$/ }).waitFor();
			await saveButton.click();
		};
		try {
			const before = sandbox.requestLog().length;
			const tested = waitForCredentialTest(page);
			await secret.fill('a-wrong-client-secret');
			await save();
			expect(await tested).toMatchObject({ status: 'Error' });
			// The editor shows the failed test before the field is edited again.
			await modal.getByText(/Couldn.t connect with these settings/).waitFor();
			// The token issued for the old secret is not used: a renewal with the new one is refused.
			const requests = sandbox.requestLog().slice(before);
			expect(
				requests
					.filter((entry) => entry.endpoint === 'POST /auth/oauth/v2/refresh')
					.map((entry) => entry.status),
			).toContain(401);
			expect(
				requests.filter(
					(entry) =>
						entry.status >= 200 &&
						entry.status < 300 &&
						entry.endpoint !== 'POST /auth/oauth/v2/refresh',
				),
			).toEqual([]);
		} finally {
			const restored = waitForCredentialTest(page);
			await secret.fill(sandbox.orgs.primary.clientSecret);
			await save();
			expect(await restored).toMatchObject({ status: 'OK' });
			await page.keyboard.press('Escape');
		}
	});

	test('every example as a new user opens it: every node named in full, none behind the Execute button', async () => {
		for (const { workflow } of exampleWorkflows()) {
			await page.goto(`${server.url}/workflow/${workflow.id}`);
			const button = page.locator('[data-test-id="execute-workflow-button"]');
			await button.waitFor();
			await settled(page); // zoomed to fit
			// The button, and its menu of triggers when the workflow has several.
			const buttonParts = [
				button,
				...(await page.getByRole('button', { name: 'Select trigger node' }).all()),
			];
			const buttonBoxes = (await Promise.all(buttonParts.map((part) => part.boundingBox()))).filter(
				(box) => box !== null,
			);
			const named = workflow.nodes.filter(
				(node: { type: string }) => node.type !== 'n8n-nodes-base.stickyNote',
			);
			for (const { name } of named) {
				const label = page
					.locator('[data-test-id="canvas-node"]')
					.getByText(name, { exact: true })
					.first();
				const box = await label.boundingBox();
				if (!box) throw new Error(`"${name}" of "${workflow.name}" is not on the canvas`);
				const hiddenBy = buttonBoxes.find((buttonBox) => overlap(box, buttonBox));
				expect([workflow.name, name, hiddenBy]).toEqual([workflow.name, name, undefined]);
			}
			if (workflow.id === 'cpExampleEscalation') await screenshot('example-safety-alert');
		}
	});

	test('every example at the default zoom: node names and output labels whole, each note readable, within its bounds and over no node', async () => {
		for (const { workflow } of exampleWorkflows()) {
			await page.goto(`${server.url}/workflow/${workflow.id}`);
			await page.locator('[data-test-id="canvas-node"]').first().waitFor();
			await settled(page); // zoomed to fit
			const canvas = await page.evaluate(readCanvas);
			const named = workflow.nodes.filter(
				(node: { type: string }) => node.type !== 'n8n-nodes-base.stickyNote',
			);
			expect(canvas.nodeNames.map((label) => label.text).sort()).toEqual(
				named.map((node: { name: string }) => node.name).sort(),
			);
			const cut = [...canvas.nodeNames, ...canvas.outputLabels].filter((label) => label.cut);
			expect([workflow.name, cut]).toEqual([workflow.name, []]);
			expect(canvas.notes.length).toBe(1);
			for (const note of canvas.notes) {
				// 10 px at the 1280 x 800 window these tests use; more on a larger screen.
				expect([workflow.name, note.fontPx >= 10]).toEqual([workflow.name, true]);
				expect([workflow.name, note.textOverflows, note.overNodes]).toEqual([
					workflow.name,
					false,
					[],
				]);
			}
			await screenshot(`example-${workflow.id}`);
		}
	});

	test("the alert ladder's trigger shows one deadline field, the one its Deadline names", async () => {
		await page.goto(`${server.url}/workflow/cpExampleEscalation`);
		await page.locator('[data-test-id="canvas-node"]', { hasText: 'Alert Ladder' }).dblclick();
		const ndv = page.locator('[data-test-id="ndv"]');
		await ndv.getByText('Escalation Deadlines (Minutes)', { exact: true }).waitFor();
		expect(await ndv.getByText('Not Opened Within (Minutes)', { exact: true }).count()).toBe(0);
		await screenshot('example-safety-alert-trigger');
		await page.keyboard.press('Escape');
	});

	test('the safety alert as its note says: Execute workflow opens its form, and submitting it sends the alert to everyone', async () => {
		await page.goto(`${server.url}/workflow/cpExampleEscalation`);
		const button = page.locator('[data-test-id="execute-workflow-button"]');
		await button.waitFor();
		// The note says "Execute workflow" sends the alert: the button runs Send the Alert, not the trigger.
		expect((await button.innerText()).replace(/\s+/g, ' ')).toContain(
			'Execute workflow from Send the Alert',
		);
		const before = sandbox.notifications('primary').length;
		const popup = page.waitForEvent('popup');
		await button.click();
		const form = await popup;
		await form.getByText('Send a safety alert').first().waitFor();
		// The form comes empty (nothing prefilled goes to everyone): the user types the alert.
		const [headline, instructions] = ALERT_FORM_ANSWERS;
		await expect(form.locator('input[type="text"]').first().inputValue()).resolves.toBe('');
		await form.locator('input[type="text"]').first().fill(headline);
		await form.locator('textarea').first().fill(instructions);
		await screenshot('safety-alert-form', form);
		await form.getByRole('button', { name: 'Send the Alert to Everyone' }).click();

		const [alert] = await waitFor(
			'the alert in the sandbox',
			() => {
				const sends = sandbox.notifications('primary').slice(before);
				return sends.length > 0 && sends;
			},
			60_000,
			250,
		);
		expect(sandbox.notifications('primary').slice(before)).toHaveLength(1);
		expect([alert.title, alert.body]).toEqual([`Safety alert: ${headline}`, instructions]);
		expect([...alert.target_user_ids].sort()).toEqual([...sandbox.orgs.primary.userIds].sort());
		await form.close();
		// The run ends on the canvas with the send's node done; nobody got an e-mail (no trigger ran).
		await page
			.locator('[data-test-id="canvas-node"]', { hasText: 'Safety Alert to Everyone' })
			.locator('[data-test-id="canvas-node-status-success"]')
			.waitFor();
		await button.getByText('Execute workflow').waitFor(); // done running
		expect(smtp.mails).toEqual([]);
		await screenshot('safety-alert-sent');
	});

	test('an example\'s Send node run with "Execute step" shows its output, and the sandbox got exactly those sends', async () => {
		// The morning announcement's Send: its Schedule Trigger gives one item, the Send goes to every
		// user with an active app (batches of 500).
		await page.goto(`${server.url}/workflow/cpExampleDigest`);
		await page
			.locator('[data-test-id="canvas-node"]', { hasText: 'Morning Push to Active Users' })
			.dblclick();
		const ndv = page.locator('[data-test-id="ndv"]');
		await ndv.waitFor();
		const before = sandbox.notifications('primary').length;
		await ndv.locator('[data-test-id="node-execute-button"]').click();
		const output = ndv.locator('[data-test-id="output-panel"]');
		await output.locator('[data-test-id="node-run-status-success"]').waitFor();
		await output.getByText('sending', { exact: true }).first().waitFor();
		await output.getByText('Your morning update', { exact: true }).first().waitFor();
		await ndv.getByRole('button', { name: 'Execute step' }).waitFor(); // done running
		await output.locator('[data-test-id="radio-button-json"]').click();
		await output.getByText('"sending"').first().waitFor();
		await screenshot('execute-step');

		const { primary } = sandbox.orgs;
		const active = primary.userIds.filter((id) =>
			primary.devicesOf(id).some((device) => device.session === 'active'),
		);
		const sends = sandbox.notifications('primary').slice(before);
		expect(sends.map((send) => send.title)).toEqual(
			Array(Math.ceil(active.length / 500)).fill('Your morning update'),
		);
		expect(sends.flatMap((send) => send.target_user_ids).sort()).toEqual([...active].sort());
		await expect(output.innerText()).resolves.toContain(sends[0].id);
	});

	test('Send with a Digest Key: run twice, the second run cancels the first send and schedules "2 order updates" in its place', async () => {
		// Made for this test too (no example uses a digest): a Manual Trigger into a Send to one person.
		const [person] = sandbox.orgs.primary.usersOfKind('onePhone', 3).slice(2);
		const workflow = manualWorkflow('cpEditorDigest', 'Digest', [
			[
				push(DIGEST_SEND, {
					resource: 'notification',
					operation: 'send',
					title: 'Order update',
					body: 'Order 1042 shipped',
					audience: 'userIds',
					userIds: person,
					options: { digestKey: 'order-updates', digestTitle: '{count} order updates' },
				}),
			],
		]);
		await server.rest.call('POST', '/workflows', workflow);
		await page.goto(`${server.url}/workflow/${workflow.id}`);
		await page.locator('[data-test-id="canvas-node"]', { hasText: DIGEST_SEND }).dblclick();
		const ndv = page.locator('[data-test-id="ndv"]');
		const output = ndv.locator('[data-test-id="output-panel"]');
		const before = sandbox.requestLog().length;

		const [[first]] = await executeStepOf(workflow.id, DIGEST_SEND);
		const [[second]] = await executeStepOf(workflow.id, DIGEST_SEND);
		// The sandbox: two scheduled sends and one cancel of the first, answered 200.
		const requests = sandbox.requestLog().slice(before);
		const sends = requests.filter((entry) => entry.endpoint === SEND);
		expect(sends.map((entry) => [entry.status, (entry.body as Json).title])).toEqual([
			[202, 'Order update'],
			[202, '2 order updates'],
		]);
		expect(
			requests
				.filter((entry) => entry.endpoint === CANCEL)
				.map((entry) => [entry.path, entry.status]),
		).toEqual([[`/push-notification/${sends[0].notificationId}/cancel`, 200]]);
		expect(first).toMatchObject({
			id: sends[0].notificationId,
			digestCount: 1,
			status: 'scheduled',
		});
		expect(second).toMatchObject({
			id: sends[1].notificationId,
			digestCount: 2,
			replacedSendId: sends[0].notificationId,
			scheduledAt: first.scheduledAt,
			title: '2 order updates',
		});
		// What the panel shows: the replacement, the one it replaced, the count.
		await output.getByText(`"${sends[1].notificationId}"`).first().waitFor();
		await output.getByText(`"${sends[0].notificationId}"`).first().waitFor();
		await output.getByText('"2 order updates"').first().waitFor();
		await screenshotBesideOption(/^\s*Digest Key/, 'digest-second-run');
		await page.keyboard.press('Escape');
		await ndv.waitFor({ state: 'hidden' });
	});

	test('Send with Cap per Person: two outputs, "Sends" and "Capped"; run twice, the second run caps both people onto Capped; without the option, one output', async () => {
		// The one workflow made for a test (no example uses the cap): a Manual Trigger into a Send to two
		// people, at most one send each per hour. Made last, so the other screenshots do not list it.
		const people = sandbox.orgs.primary.usersOfKind('onePhone', 2);
		const workflow = manualWorkflow('cpEditorCapPerPerson', 'Cap per Person', [
			[
				push(CAPPED_SEND, {
					resource: 'notification',
					operation: 'send',
					title: 'Shift change',
					body: 'Your shift starts at 9:00.',
					audience: 'userIds',
					userIds: people.join(', '),
					options: { capPerPerson: 1 },
				}),
			],
		]);
		await server.rest.call('POST', '/workflows', workflow);
		await page.goto(`${server.url}/workflow/${workflow.id}`);
		const outputHandles = page.locator(
			`[data-test-id="canvas-node-output-handle"][data-node-name="${CAPPED_SEND}"]`,
		);
		await outputHandles.nth(1).waitFor();
		expect(await outputHandles.count()).toBe(2);
		// Each output named beside its handle.
		expect(await outputHandles.allInnerTexts()).toEqual(['Sends', 'Capped']);
		await screenshot('cap-per-person-outputs');

		await page.locator('[data-test-id="canvas-node"]', { hasText: CAPPED_SEND }).dblclick();
		const ndv = page.locator('[data-test-id="ndv"]');
		const output = ndv.locator('[data-test-id="output-panel"]');
		const sendsSince = (before: number) =>
			sandbox
				.requestLog()
				.slice(before)
				.filter((entry) => entry.endpoint === SEND);
		const executeStep = () => executeStepOf(workflow.id, CAPPED_SEND);

		// The first run: one send to both people, nobody capped.
		const beforeFirst = sandbox.requestLog().length;
		const firstRunAt = Date.now();
		const [firstSent, firstCapped] = await executeStep();
		const firstSends = sendsSince(beforeFirst);
		expect(firstSends.map((entry) => [entry.status, sortedTargets(entry)])).toEqual([
			[202, [...people].sort()],
		]);
		expect(firstSent).toMatchObject([{ id: firstSends[0].notificationId }]);
		expect(firstCapped).toEqual([]);
		await output.getByText(firstSends[0].notificationId!).first().waitFor();

		// The second run, within the hour: both people are over the cap, nothing is sent, and each comes
		// out on Capped with when they may be notified next.
		const beforeSecond = sandbox.requestLog().length;
		const [secondSent, secondCapped] = await executeStep();
		expect(sendsSince(beforeSecond)).toEqual([]);
		expect(secondSent).toMatchObject([{ skipped: true, cappedUserIds: people }]);
		expect(secondCapped).toEqual(
			people.map((userId) => ({
				userId,
				capped: true,
				capPerPerson: 1,
				capWindowMinutes: 60,
				notifyAfter: expect.any(String),
				title: 'Shift change',
			})),
		);
		// Free again at the end of the minute the first run took its slots in, plus the hour: after the
		// run started, before the send arrived (n8n's clock and the sandbox's are this machine's).
		for (const { notifyAfter } of secondCapped) {
			const freeAt = Date.parse(notifyAfter);
			expect(freeAt).toBeGreaterThan(firstRunAt + 60 * 60_000);
			expect(freeAt).toBeLessThanOrEqual(firstSends[0].time + 61 * 60_000);
		}
		// What the panel shows: the skipped send on the first output, the people on Capped.
		await output.getByText('"skipped"').first().waitFor();
		const branches = output.locator('[data-test-id="branches"]');
		await branches.getByText('Sends Branch (1 item)', { exact: true }).waitFor();
		await branches.getByText('Capped Branch (2 items)', { exact: true }).click();
		for (const { userId, notifyAfter } of secondCapped) {
			await output.getByText(`"${userId}"`).first().waitFor();
			await output.getByText(`"${notifyAfter}"`).first().waitFor();
		}
		// The shot shows the option beside its output, without the runs' toasts over them.
		const capOption = await screenshotBesideOption(/^\s*Cap per Person/, 'cap-per-person-capped');

		// Back on the canvas after the runs: each output's name beside its items.
		await page.keyboard.press('Escape');
		await ndv.waitFor({ state: 'hidden' });
		await screenshot('cap-per-person-ran');

		// The option removed in the panel: back on the canvas, the node has one output again.
		await page.locator('[data-test-id="canvas-node"]', { hasText: CAPPED_SEND }).dblclick();
		await capOption.hover(); // its Delete button shows on hover
		await capOption.getByTitle('Delete', { exact: true }).click();
		await page.keyboard.press('Escape');
		await ndv.waitFor({ state: 'hidden' });
		await outputHandles.nth(1).waitFor({ state: 'detached' });
		// Unnamed (it may show the last run's item count).
		expect(await outputHandles.allInnerTexts()).toEqual([
			expect.not.stringMatching(/Sends|Capped/),
		]);
	});

	// Last: a published trigger polls the sandbox (its token renewed, reports of later sends).
	test('the workflows list as npm start leaves it: the ERP and follow-up examples Published', async () => {
		for (const id of PUBLISHED_BY_NPM_START) await publish(server.rest, id);
		await page.goto(`${server.url}/home/workflows`);
		await waitFor(
			'the Published badges',
			async () =>
				(await page.getByText('Published', { exact: true }).count()) ===
				PUBLISHED_BY_NPM_START.length,
			30_000,
			250,
		);
		for (const { workflow } of exampleWorkflows())
			await page.getByText(workflow.name, { exact: true }).first().waitFor();
		await screenshot('workflows');
	});
});

/** The Send with a Digest Key of the editor's digest test. */
const DIGEST_SEND = 'Gather Order Updates';

/** The Send with Cap per Person of the editor's cap test. */
const CAPPED_SEND = 'Notify Once per Hour';

/** The people a logged send went to, sorted. */
function sortedTargets(entry: LoggedRequest): string[] {
	return [...(entry.body as { target_user_ids: string[] }).target_user_ids].sort();
}

/** Whether two boxes on the page overlap. */
function overlap(
	a: { x: number; y: number; width: number; height: number },
	b: { x: number; y: number; width: number; height: number },
): boolean {
	return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** The answer of the next credential test the editor makes (POST /rest/credentials/test). */
async function waitForCredentialTest(page: Page): Promise<{ status: string; message?: string }> {
	const response = await page.waitForResponse(
		(candidate) =>
			candidate.url().endsWith('/rest/credentials/test') && candidate.request().method() === 'POST',
	);
	expect(response.status()).toBe(200);
	return (await response.json()).data;
}

/** Waits until at least `count` matching images are loaded (a broken icon has no natural width). */
async function expectLoadedImages(
	images: ReturnType<Page['locator']>,
	count: number,
): Promise<void> {
	await images.nth(count - 1).waitFor({ state: 'attached' });
	const deadline = Date.now() + 15_000;
	for (;;) {
		const widths = await images.evaluateAll((elements) =>
			elements.map((element) => (element as unknown as { naturalWidth: number }).naturalWidth),
		);
		if (widths.length >= count && widths.every((width) => width > 0)) return;
		if (Date.now() > deadline)
			throw new Error(`Icons not loaded: natural widths ${JSON.stringify(widths)}`);
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
}

interface CanvasLabel {
	text: string;
	cut: boolean;
}

/**
 * What the canvas shows, read in the page: each node's name and each output's label, and whether
 * the canvas cuts it (an ellipsis or a clamped line); each sticky note with the size its text is
 * drawn at on screen (its font size times the canvas zoom), whether its text runs past its bottom,
 * and the nodes it lies over. Runs in the browser: no imports, plain DOM.
 */
function readCanvas(): {
	nodeNames: CanvasLabel[];
	outputLabels: CanvasLabel[];
	notes: Array<{ fontPx: number; textOverflows: boolean; overNodes: string[] }>;
} {
	const dom = globalThis as any;
	const all = (root: any, selector: string): any[] => [...root.querySelectorAll(selector)];
	const isCut = (element: any) =>
		element.scrollWidth > element.clientWidth + 1 ||
		element.scrollHeight > element.clientHeight + 1;
	const nodes = all(dom.document, '[data-test-id="canvas-node"][data-node-name]').filter(
		(node) => node.querySelector('[data-test-id="sticky"]') === null,
	);
	const nodeNames = nodes.map((node) => {
		const name = node.getAttribute('data-node-name');
		const label = all(node, '*').find(
			(element) => element.childElementCount === 0 && element.textContent.trim() === name,
		);
		return { text: name, cut: label === undefined || isCut(label) };
	});
	const outputLabels = all(
		dom.document,
		'[data-test-id="canvas-node-output-handle"] [class*="outputLabel"]',
	).map((label) => ({ text: label.textContent.trim(), cut: isCut(label) }));
	const overlaps = (a: any, b: any) =>
		a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
	const notes = all(dom.document, '[data-test-id="sticky"]').map((sticky) => {
		const box = sticky.getBoundingClientRect();
		const text = all(sticky, 'p, li').filter((element) => element.offsetHeight > 0);
		const first = text[0];
		const zoom = first.getBoundingClientRect().height / first.offsetHeight;
		const fontPx = parseFloat(dom.getComputedStyle(first).fontSize) * zoom;
		const lastBottom = Math.max(
			...all(sticky, 'h1, h2, h3, p, li').map((element) => element.getBoundingClientRect().bottom),
		);
		const overNodes = nodes
			.filter((node) => overlaps(box, node.getBoundingClientRect()))
			.map((node) => node.getAttribute('data-node-name'));
		return { fontPx, textOverflows: lastBottom > box.bottom + 1, overNodes };
	});
	return { nodeNames, outputLabels, notes };
}
