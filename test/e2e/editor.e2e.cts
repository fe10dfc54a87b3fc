/**
 * The n8n editor in headless Chromium (Debian's chromium driven by playwright-core), on a real
 * n8n 2.41.1 with the packed package installed: sign in, the nodes in the node panel with their
 * icons, the credential test, and a Send node run with "Execute step" showing its output.
 * Screenshots go to test-results/screenshots/ (UPDATE_SCREENSHOTS=1: to docs/screenshots/, the
 * ones the README shows).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { Page } from 'playwright-core';

import {
	brief,
	exampleWorkflows,
	launchBrowser,
	manualWorkflow,
	N8nHome,
	N8nServer,
	OWNER_EMAIL,
	OWNER_PASSWORD,
	push,
	settled,
} from './support/index.cts';
import { startSandbox, type Sandbox } from '../../sandbox/index.cts';

const ROOT = path.resolve(__dirname, '..', '..');
const SCREENSHOTS =
	process.env.UPDATE_SCREENSHOTS === '1'
		? path.join(ROOT, 'docs', 'screenshots')
		: path.join(ROOT, 'test-results', 'screenshots');

describe('the n8n editor in headless Chromium', () => {
	let sandbox: Sandbox;
	let home: N8nHome;
	let server: N8nServer;
	let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
	let page: Page;
	let recipient: string;

	const screenshot = async (name: string) => {
		fs.mkdirSync(SCREENSHOTS, { recursive: true });
		await settled(page); // panels slid in
		await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
	};

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0, deliveryMs: 1500 });
		recipient = sandbox.orgs.primary.usersOfKind('twoPhones', 1)[0];
		home = await N8nHome.create();
		await home.useSandbox(sandbox);
		const workflows = [
			...exampleWorkflows().map((entry) => entry.workflow),
			manualWorkflow('e2eEditor', 'Send from the editor', [
				[
					push('Send a Notification', {
						resource: 'notification',
						operation: 'send',
						title: 'Hello from the n8n editor',
						body: 'Sent with Execute step',
						audience: 'userIds',
						userIds: recipient,
						additionalFields: { deeplink: 'home' },
						options: {},
					}),
				],
			]),
		];
		// n8n starts while Chromium launches.
		const [started, launched] = await Promise.allSettled([
			N8nServer.start(home, { workflows }),
			launchBrowser(),
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
		await screenshot('workflows');
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
		// The trigger's five events: settled, failed, opened, no device, not opened in time.
		await panel.getByText('Triggers (5)').waitFor();
		await expectLoadedImages(panel.locator('img[src*="companionPush"]'), actions.length);
		await screenshot('node-panel');
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

	test('a Send node run with "Execute step" shows its output, and the sandbox got exactly that send', async () => {
		await page.goto(`${server.url}/workflow/e2eEditor`);
		await page
			.locator('[data-test-id="canvas-node"]', { hasText: 'Send a Notification' })
			.dblclick();
		const ndv = page.locator('[data-test-id="ndv"]');
		await ndv.waitFor();
		await ndv.locator('[data-test-id="node-execute-button"]').click();
		const output = ndv.locator('[data-test-id="output-panel"]');
		await output.locator('[data-test-id="node-run-status-success"]').waitFor();
		await output.getByText('sending', { exact: true }).waitFor();
		await output.getByText('Hello from the n8n editor', { exact: true }).waitFor();
		await ndv.getByRole('button', { name: 'Execute step' }).waitFor(); // done running
		await output.locator('[data-test-id="radio-button-json"]').click();
		await output.getByText('"sending"').waitFor();
		await screenshot('execute-step');

		const sends = sandbox
			.notifications()
			.filter((send) => send.title === 'Hello from the n8n editor');
		expect(sends.map((send) => [send.title, send.target_user_ids])).toEqual([
			['Hello from the n8n editor', [recipient]],
		]);
		await expect(output.innerText()).resolves.toContain(sends[0].id);
	});
});

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
