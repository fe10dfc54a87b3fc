/**
 * An AI Agent uses the Companion Push node as a tool, in a real n8n 2.41.1, offline: n8n's AI Agent
 * with its OpenAI Chat Model pointed at a scripted OpenAI-compatible server (devkit/fakeModel.cts),
 * and the Companion Push node as its tool, its fields filled by the model through $fromAI(). Run in
 * a running n8n through its REST API (devkit/n8n/server.cts); checked in the fake model's request log (what
 * the model was offered and given back), the sandbox's request log (what was sent) and the agent's
 * output. Then the AI Agent example in the n8n editor of the same n8n (headless Chromium): run with
 * "Execute workflow", the screenshot the README shows (docs/screenshots/ai-agent-workflow.png,
 * written back when it changed). One n8n, one sandbox and one scripted model for the file.
 */
import { randomUUID } from 'node:crypto';

import type { Page } from 'playwright-core';

import {
	CREDENTIAL_ID,
	exampleWorkflows,
	FAKE_MODEL_CREDENTIAL,
	FAKE_MODEL_NAME,
	type FakeModel,
	fakeModelCredentialEntry,
	type FakeModelRequest,
	keepScreenshot,
	launchBrowser,
	N8nHome,
	N8nServer,
	NODE_TYPE,
	OWNER_EMAIL,
	OWNER_PASSWORD,
	settled,
	startFakeModel,
	waitFor,
} from './support/index.cts';
import { startSandbox, type Sandbox } from '../../sandbox/index.cts';

const SEND = 'POST /push-notification/send';
const TOOL_TYPE = `${NODE_TYPE}Tool`; // n8n-nodes-companion-push.companionPushTool

/** The Send fields as the model fills them, as the example has them: the keys and descriptions
 * the model is offered. */
function fromAI(): { title: string; body: string; userIds: string } {
	const tool = aiExample().nodes.find(
		(node: { name: string }) => node.name === 'Send Notification',
	);
	const { title, body, userIds } = tool.parameters;
	return { title, body, userIds };
}

/**
 * Start -> AI Agent (its prompt given), with an OpenAI Chat Model and the Companion Push tool
 * (operation Send, fields from $fromAI) attached. `api` picks the model node's API.
 */
function agentWorkflow(id: string, prompt: string, api: 'chatCompletions' | 'responses'): object {
	const node = (
		name: string,
		type: string,
		typeVersion: number,
		position: [number, number],
		parameters: object,
		extra: object = {},
	) => ({
		id: randomUUID(),
		name,
		type,
		typeVersion,
		position,
		parameters,
		...extra,
	});
	return {
		id,
		name: `e2e: AI Agent with the Companion Push tool (${api})`,
		nodes: [
			node('Start', 'n8n-nodes-base.manualTrigger', 1, [0, 0], {}),
			node('AI Agent', '@n8n/n8n-nodes-langchain.agent', 3.1, [260, 0], {
				promptType: 'define',
				text: prompt,
				options: {},
			}),
			node(
				'OpenAI Chat Model',
				'@n8n/n8n-nodes-langchain.lmChatOpenAi',
				1.3,
				[200, 220],
				{
					model: { __rl: true, mode: 'id', value: FAKE_MODEL_NAME },
					responsesApiEnabled: api === 'responses',
					options: {},
				},
				{ credentials: { openAiApi: FAKE_MODEL_CREDENTIAL } },
			),
			node(
				'Send Notification',
				TOOL_TYPE,
				1,
				[420, 220],
				{
					descriptionType: 'manual',
					toolDescription:
						'Sends a push notification now to the phones of the given users. Returns the send with its id and status.',
					resource: 'notification',
					operation: 'send',
					...fromAI(),
					audience: 'userIds',
					additionalFields: {},
					options: {},
				},
				{
					credentials: { companionPushApi: { id: CREDENTIAL_ID, name: 'Companion Push sandbox' } },
				},
			),
		],
		connections: {
			Start: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
			'OpenAI Chat Model': {
				ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]],
			},
			'Send Notification': { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
		active: false,
		pinData: {},
	};
}

/** The model requests (Chat Completions or Responses) of the conversation that began with this prompt, in order. */
function modelCalls(fake: FakeModel, prompt: string): FakeModelRequest[] {
	return fake
		.requests()
		.filter(
			(request) =>
				request.method === 'POST' &&
				JSON.stringify(request.body ?? '').includes(JSON.stringify(prompt).slice(1, -1)),
		);
}

/** The tool result the model was given in a Chat Completions request (the last "tool" message). */
function toolMessage(request: FakeModelRequest): string {
	const tool = (request.body.messages as Array<{ role: string; content: string }>)
		.filter((message) => message.role === 'tool')
		.pop();
	if (!tool) throw new Error(`No tool message in ${JSON.stringify(request.body).slice(0, 2000)}`);
	return tool.content;
}

/** The prompts of the agent runs (the scripted model reads title, body and userIds off them). */
const PROMPTS = {
	send: (recipients: string[]) =>
		[
			'Tell the two warehouse leads that the inventory starts at 7 am.',
			'title: Inventory tomorrow',
			'body: The inventory starts at 7 am in hall B.',
			`userIds: ${recipients.join(', ')}`,
		].join('\n'),
	badArgument: [
		'Tell everyone about the fire drill.',
		'title: Fire drill at 11',
		'body: Please leave the building by the nearest exit.',
		'userIds:',
	].join('\n'),
	responses: (recipient: string) =>
		[
			'Remind the lead about the audit.',
			'title: Audit on Monday',
			'body: The audit starts Monday at 9.',
			`userIds: ${recipient}`,
		].join('\n'),
};

const aiExample = () =>
	exampleWorkflows().find((entry) => entry.file === 'ai-agent-notify.json')!.workflow;

// One n8n for the file: the runs of the first describe, then the editor of the second.
let sandbox: Sandbox;
let fake: FakeModel;
let home: N8nHome;
let server: N8nServer;
let recipients: string[];

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, deliveryMs: 1500 });
	fake = await startFakeModel();
	recipients = [
		sandbox.orgs.primary.usersOfKind('onePhone', 1)[0],
		sandbox.orgs.primary.usersOfKind('twoPhones', 1)[0],
	];
	home = await N8nHome.create();
	await home.useSandbox(sandbox, { more: [fakeModelCredentialEntry(fake.baseUrl)] });
	server = await N8nServer.start(home, {
		workflows: [
			agentWorkflow('e2eAgentSend', PROMPTS.send(recipients), 'chatCompletions'),
			agentWorkflow('e2eAgentBadArgument', PROMPTS.badArgument, 'chatCompletions'),
			agentWorkflow('e2eAgentResponses', PROMPTS.responses(recipients[0]), 'responses'),
			aiExample(),
		],
	});
});

afterAll(async () => {
	await server?.stop();
	await fake?.stop();
	await sandbox?.stop();
	home?.remove();
});

const sendsLogged = () => sandbox.requestLog().filter((request) => request.endpoint === SEND);

describe('an AI Agent uses Companion Push as a tool (real n8n, scripted OpenAI-compatible model)', () => {
	test('the model calls the tool: exactly one send goes out with its arguments, and the final answer quotes the real send ID', async () => {
		const prompt = PROMPTS.send(recipients);
		const sendsBefore = sendsLogged().length;

		const result = await server.execute('e2eAgentSend');
		process.stdout.write(
			`[e2e] AI Agent run (tool call + final answer) in ${(result.durationMs / 1000).toFixed(1)} s\n`,
		);
		expect(result.status).toBe('success');

		const calls = modelCalls(fake, prompt);
		expect(calls.map((call) => call.path)).toEqual([
			'/v1/chat/completions',
			'/v1/chat/completions',
		]);
		// What the model was offered: the tool, with the $fromAI keys and descriptions as its arguments.
		const [tool] = calls[0].body.tools;
		expect(tool.function.name).toBe('Send_Notification');
		expect(tool.function.description).toContain('Sends a push notification now');
		expect(Object.keys(tool.function.parameters.properties).sort()).toEqual([
			'body',
			'title',
			'userIds',
		]);
		expect(tool.function.parameters.properties.userIds.description).toMatch(
			/^Comma-separated user IDs/,
		);
		const given = calls[0].answer!.toolCall!.arguments;
		expect(given).toEqual({
			title: 'Inventory tomorrow',
			body: 'The inventory starts at 7 am in hall B.',
			userIds: recipients.join(', '),
		});

		// Exactly one send, with exactly those arguments.
		const sends = sendsLogged();
		expect(sends).toHaveLength(sendsBefore + 1);
		const send = sends[sends.length - 1];
		expect(send.body).toEqual({
			title: given.title,
			body: given.body,
			target_user_ids: recipients,
		});
		const [notification] = sandbox
			.notifications()
			.filter((entry: { title: string }) => entry.title === given.title);
		expect(notification).toBeDefined();

		// The model was given the send back (with its real ID) and quoted it in its final answer.
		expect(toolMessage(calls[1])).toContain(notification.id);
		const [output] = result.items('AI Agent');
		expect(output.output).toBe(
			`Done: the notification was sent, its send ID is ${notification.id}.`,
		);
		// n8n 2.41.1 offers community nodes as tools without N8N_COMMUNITY_PACKAGES_ALLOW_TOOL_USAGE
		// (the opt-in was dropped in n8n 1.85.0): this run had no such variable.
		expect(home.env.N8N_COMMUNITY_PACKAGES_ALLOW_TOOL_USAGE).toBeUndefined();
	});

	test('an empty user list: nothing is sent, and the tool result the model gets is an error naming "User IDs"', async () => {
		const prompt = PROMPTS.badArgument;
		const sendsBefore = sendsLogged().length;

		const result = await server.execute('e2eAgentBadArgument');
		const calls = modelCalls(fake, prompt);
		expect(calls.map((call) => call.path)).toEqual([
			'/v1/chat/completions',
			'/v1/chat/completions',
		]);
		expect(calls[0].answer!.toolCall!.arguments).toEqual({
			title: 'Fire drill at 11',
			body: 'Please leave the building by the nearest exit.',
			userIds: '',
		});

		// What the model read back: an error, naming the field, telling what to give.
		const [toolResult] = JSON.parse(toolMessage(calls[1]));
		expect(toolResult.error).toMatch(/^"User IDs" is empty: give at least one user ID/);
		expect(sendsLogged()).toHaveLength(sendsBefore);
		expect(
			sandbox
				.notifications()
				.filter((entry: { title: string }) => entry.title === 'Fire drill at 11'),
		).toEqual([]);

		// The agent carries on with the model's answer (the tool's failure is the model's to handle).
		expect(result.status).toBe('success');
		expect(result.items('AI Agent')[0].output).toBe(`The tool failed: ${toolResult.error}`);
	});

	test('the same with the Responses API (the OpenAI Chat Model default since version 1.3): one send, its ID in the answer', async () => {
		const prompt = PROMPTS.responses(recipients[0]);
		const sendsBefore = sendsLogged().length;

		const result = await server.execute('e2eAgentResponses');
		expect(result.status).toBe('success');
		const calls = modelCalls(fake, prompt);
		expect(calls.map((call) => call.path)).toEqual(['/v1/responses', '/v1/responses']);
		expect(calls[0].body.tools.map((tool: { name: string }) => tool.name)).toEqual([
			'Send_Notification',
		]);

		const sends = sendsLogged();
		expect(sends).toHaveLength(sendsBefore + 1);
		expect(sends[sends.length - 1].body).toEqual({
			title: 'Audit on Monday',
			body: 'The audit starts Monday at 9.',
			target_user_ids: [recipients[0]],
		});
		const [notification] = sandbox
			.notifications()
			.filter((entry: { title: string }) => entry.title === 'Audit on Monday');
		const output = (calls[1].body.input as Array<{ type?: string; output?: string }>).find(
			(item) => item.type === 'function_call_output',
		);
		expect(output?.output).toContain(notification.id);
		expect(result.items('AI Agent')[0].output).toBe(
			`Done: the notification was sent, its send ID is ${notification.id}.`,
		);
	});

	test('the example examples/ai-agent-notify.json, as it is, runs offline: the ops user is notified and the answer quotes the send ID', async () => {
		const example = aiExample();
		const sendsBefore = sendsLogged().length;

		const result = await server.execute(example.id);
		expect(result.status).toBe('success');
		const sends = sendsLogged();
		expect(sends).toHaveLength(sendsBefore + 1);
		expect(sends[sends.length - 1].body).toEqual({
			title: 'Quarterly report ready',
			body: 'The Q3 delivery report is ready in the shared drive.',
			target_user_ids: ['e533773a0ba45c0000000000'],
		});
		const [notification] = sandbox
			.notifications()
			.filter((entry: { title: string }) => entry.title === 'Quarterly report ready');
		expect(result.items('AI Agent')[0].output).toBe(
			`Done: the notification was sent, its send ID is ${notification.id}.`,
		);
		// The system message of the example reached the model.
		const [first] = modelCalls(fake, 'Tell the operations user that the quarterly report is ready');
		expect(first.body.messages[0]).toMatchObject({
			role: 'system',
			content: expect.stringContaining('Send Notification tool'),
		});
	});
});

describe('the AI Agent example in the n8n editor (n8n start, headless Chromium)', () => {
	let page: Page;

	let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;

	beforeAll(async () => {
		browser = await launchBrowser();
		page = browser.page;
	});

	afterAll(async () => {
		await browser?.close();
	});

	test('"Execute workflow" runs the agent: the tool node shows the Companion Push icon, one send goes out, every node ends green', async () => {
		// The runs above used the same n8n, sandbox and model: what this run did is what came after.
		const sendsBefore = sendsLogged().length;
		const reportsBefore = sandbox
			.notifications()
			.filter((entry) => entry.title === 'Quarterly report ready').length;
		const modelCallsBefore = fake.requests().length;

		await page.goto(`${server.url}/signin`);
		await page.fill('input[name="emailOrLdapLoginId"]', OWNER_EMAIL);
		await page.fill('input[name="password"]', OWNER_PASSWORD);
		await page.click('button:has-text("Sign in")');
		await page.waitForURL((url) => !url.pathname.startsWith('/signin'));

		await page.goto(`${server.url}/workflow/cpExampleAiAgent`);
		const toolNode = page.locator('[data-test-id="canvas-node"]', { hasText: 'Send Notification' });
		await toolNode.waitFor();
		const icon = toolNode.locator('img[src*="companionPush"]');
		await icon.waitFor();
		await waitFor(
			'the Companion Push icon on the tool node to load',
			async () =>
				(await icon.evaluate(
					(image) => (image as unknown as { naturalWidth: number }).naturalWidth,
				)) > 0,
			15_000,
			250,
		);

		await page.locator('[data-test-id="execute-workflow-button"]').first().click();
		await waitFor(
			'the send made by the agent',
			() =>
				sandbox.notifications().filter((entry) => entry.title === 'Quarterly report ready').length >
				reportsBefore,
			60_000,
			250,
		);
		for (const name of ['AI Agent', 'OpenAI Chat Model', 'Send Notification']) {
			await page
				.locator('[data-test-id="canvas-node"]', { hasText: name })
				.locator('[data-test-id="canvas-node-status-success"]')
				.waitFor();
		}
		expect(sendsLogged().slice(sendsBefore)).toHaveLength(1);
		expect(
			fake
				.requests()
				.slice(modelCallsBefore)
				.filter((request) => request.method === 'POST')
				.map((request) => (request.answer?.toolCall ? 'tool call' : 'answer')),
		).toEqual(['tool call', 'answer']);
		await page.keyboard.press('Escape');
		await page.locator('[data-test-id="zoom-to-fit"]').click();
		await settled(page);
		keepScreenshot('ai-agent-workflow', await page.screenshot(), { readme: true });
	});
});
