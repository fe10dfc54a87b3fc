/**
 * The scripted OpenAI-compatible model of devkit/fakeModel.cts (what the AI Agent example and
 * test/e2e/ai-agent.e2e.cts talk to), over HTTP: its script in both APIs, streaming, and its log.
 * The e2e test covers it with n8n's own OpenAI client; this covers the streamed answer, which n8n's
 * CLI runs do not ask for.
 */
import { FAKE_MODEL_NAME, startFakeModel, type FakeModel } from '../harness/index.cts';

const TOOL = {
	type: 'function',
	function: {
		name: 'Send_Notification',
		description: 'Sends a push notification',
		parameters: {
			type: 'object',
			properties: {
				title: { type: 'string' },
				userIds: { type: 'string' },
				urgent: { type: 'boolean' },
			},
		},
	},
};
const PROMPT = 'Please notify them.\ntitle: Lunch is ready\nuserIds: 1001, 1002\nurgent: true';

describe('the fake model', () => {
	let fake: FakeModel;
	const post = async (path: string, body: object) => {
		const response = await fetch(`${fake.baseUrl}${path}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', authorization: 'Bearer sk-not-logged' },
			body: JSON.stringify(body),
		});
		return { status: response.status, text: await response.text() };
	};

	beforeAll(async () => {
		fake = await startFakeModel();
	});
	afterAll(async () => {
		await fake.stop();
	});

	test('Chat Completions: first a call of the offered tool with the arguments from the prompt, then an answer quoting the id of the result', async () => {
		const first = JSON.parse(
			(
				await post('/chat/completions', {
					model: 'm',
					messages: [{ role: 'user', content: PROMPT }],
					tools: [TOOL],
				})
			).text,
		);
		expect(first.choices[0].finish_reason).toBe('tool_calls');
		const [call] = first.choices[0].message.tool_calls;
		expect(call.function.name).toBe('Send_Notification');
		expect(JSON.parse(call.function.arguments)).toEqual({
			title: 'Lunch is ready',
			userIds: '1001, 1002',
			urgent: true,
		});

		const messages = [
			{ role: 'user', content: PROMPT },
			{ role: 'assistant', content: null, tool_calls: [call] },
			{
				role: 'tool',
				tool_call_id: call.id,
				content: JSON.stringify([{ id: 'n-777', status: 'sending' }]),
			},
		];
		const second = JSON.parse(
			(await post('/chat/completions', { model: 'm', messages, tools: [TOOL] })).text,
		);
		expect(second.choices[0].message.content).toBe(
			'Done: the notification was sent, its send ID is n-777.',
		);

		const failed = [
			...messages.slice(0, 2),
			{ role: 'tool', tool_call_id: call.id, content: '[{"error":"\\"User IDs\\" is empty"}]' },
		];
		const third = JSON.parse(
			(await post('/chat/completions', { model: 'm', messages: failed, tools: [TOOL] })).text,
		);
		expect(third.choices[0].message.content).toBe('The tool failed: "User IDs" is empty');
	});

	test('Chat Completions streamed: server-sent chunks with the tool call, a finish reason, usage when asked, then [DONE]', async () => {
		const { text } = await post('/chat/completions', {
			model: 'm',
			stream: true,
			stream_options: { include_usage: true },
			messages: [{ role: 'user', content: PROMPT }],
			tools: [TOOL],
		});
		const events = text
			.split('\n\n')
			.filter(Boolean)
			.map((event) => event.replace(/^data: /, ''));
		expect(events.pop()).toBe('[DONE]');
		const chunks = events.map((event) => JSON.parse(event));
		expect(chunks[0].choices[0].delta.tool_calls[0]).toMatchObject({
			index: 0,
			function: { name: 'Send_Notification' },
		});
		expect(chunks[1].choices[0].finish_reason).toBe('tool_calls');
		expect(chunks[2].usage.total_tokens).toBeGreaterThan(0);
	});

	test('Responses API: a function_call, then a message quoting the id of the function_call_output', async () => {
		const tool = {
			type: 'function',
			name: 'Send_Notification',
			parameters: TOOL.function.parameters,
		};
		const first = JSON.parse(
			(
				await post('/responses', {
					model: 'm',
					input: [{ role: 'user', content: PROMPT }],
					tools: [tool],
				})
			).text,
		);
		const [call] = first.output;
		expect(call).toMatchObject({ type: 'function_call', name: 'Send_Notification' });
		expect(JSON.parse(call.arguments)).toEqual({
			title: 'Lunch is ready',
			userIds: '1001, 1002',
			urgent: true,
		});

		const input = [
			{ role: 'user', content: PROMPT },
			call,
			{ type: 'function_call_output', call_id: call.call_id, output: '[{"id":"n-778"}]' },
		];
		const second = JSON.parse(
			(await post('/responses', { model: 'm', input, tools: [tool] })).text,
		);
		expect(second.output[0].content[0].text).toBe(
			'Done: the notification was sent, its send ID is n-778.',
		);
	});

	test('lists its model, answers unknown paths 404, and logs every request without the Authorization header', async () => {
		const models = (await (await fetch(`${fake.baseUrl}/models`)).json()) as {
			data: Array<{ id: string }>;
		};
		expect(models.data.map((model: { id: string }) => model.id)).toEqual([FAKE_MODEL_NAME]);
		expect((await post('/embeddings', {})).status).toBe(404);
		const log = fake.requests();
		expect(log.map((entry) => `${entry.method} ${entry.path}`).slice(-2)).toEqual([
			'GET /v1/models',
			'POST /v1/embeddings',
		]);
		expect(JSON.stringify(log)).not.toContain('sk-not-logged');
		const viaHttp = await (await fetch(`${fake.baseUrl.replace(/\/v1$/, '')}/__fake/log`)).json();
		expect(viaHttp).toHaveLength(log.length);
	});
});
