// A scripted, offline stand-in for an OpenAI-compatible chat model (dev tooling, never shipped): what
// n8n's OpenAI Chat Model node talks to in the AI Agent example of `npm start` and in
// test/e2e/ai-agent.e2e.cts. It binds to 127.0.0.1 and answers:
//   POST /v1/chat/completions  (Chat Completions, plain or streamed as server-sent events)
//   POST /v1/responses         (the Responses API, the node's default from version 1.3; not streamed)
//   GET  /v1/models            (the credential test and the model list)
//   GET  /__fake/log           (every request it received, as JSON; the Authorization header is left out)
//
// The script, the same for every conversation:
//   1. When the conversation holds no tool result yet and the request offers tools: call the first
//      tool, filling each of its arguments from a line "<argument>: <value>" of the last user
//      message (a missing line gives an empty string; "[]"/"{}"/numbers/true/false are parsed as JSON).
//   2. Once a tool result is there: a final answer that quotes what it found in the result: the
//      `id` of the first object that has one ("Done: the notification was sent, its send ID is X."),
//      or the error text ("The tool failed: ...").
//   3. No tools offered: a plain answer ("No tool to call.").
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeModelRequest {
	time: number;
	method: string;
	path: string;
	headers: Record<string, string>;
	body: any;
	/** What the fake answered: a tool call (with its arguments) or a final text. */
	answer?: { toolCall?: { name: string; arguments: Record<string, unknown> }; text?: string };
}

export interface FakeModel {
	/** e.g. http://127.0.0.1:41234/v1 (the OpenAI credential's Base URL). */
	baseUrl: string;
	port: number;
	requests(): FakeModelRequest[];
	stop(): Promise<void>;
}

export const FAKE_MODEL_NAME = 'fake-scripted-model';

/** The OpenAI credential the AI Agent example uses (examples/ai-agent-notify.json). */
export const FAKE_MODEL_CREDENTIAL = {
	id: 'cpFakeModelCredential',
	name: 'Local scripted model (offline)',
};

/** An `n8n import:credentials` entry of an OpenAI credential pointing at the fake model (no real key: it is never checked). */
export function fakeModelCredentialEntry(baseUrl: string, { id, name } = FAKE_MODEL_CREDENTIAL) {
	return { id, name, type: 'openAiApi', data: { apiKey: 'offline-fake-model', url: baseUrl } };
}

/** A tool the request offers: its name and the names of its arguments. */
interface OfferedTool {
	name: string;
	argumentNames: string[];
}

/** The conversation, reduced to what the script looks at (the same for both APIs). */
interface Conversation {
	lastUserText: string;
	/** The content of the last tool result, when there is one after the last user message. */
	toolResult?: string;
	tools: OfferedTool[];
}

type Answer = NonNullable<FakeModelRequest['answer']>;

function textOf(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content))
		return content
			.map((part) => (typeof part === 'string' ? part : (part?.text ?? part?.content ?? '')))
			.join('');
	return '';
}

/** The value of "<name>: <value>" in the prompt ("" when there is no such line). */
function argumentFromPrompt(prompt: string, name: string): unknown {
	const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
	const match = new RegExp(`^\\s*${escaped}\\s*:[ \\t]*(.*)$`, 'im').exec(prompt);
	const value = match ? match[1].trim() : '';
	if (/^(\[.*\]|\{.*\}|-?\d+(\.\d+)?|true|false)$/.test(value)) {
		try {
			return JSON.parse(value);
		} catch {
			return value;
		}
	}
	return value;
}

/** The `id` of the first object in a tool result that has one (depth first). */
function findId(value: unknown): string | undefined {
	if (Array.isArray(value)) {
		for (const entry of value) {
			const id = findId(entry);
			if (id) return id;
		}
	} else if (value && typeof value === 'object') {
		const record = value as Record<string, unknown>;
		if (typeof record.id === 'string' && record.id) return record.id;
		for (const entry of Object.values(record)) {
			const id = findId(entry);
			if (id) return id;
		}
	}
	return undefined;
}

function findError(value: unknown): string | undefined {
	if (Array.isArray(value)) return value.map(findError).find(Boolean);
	if (value && typeof value === 'object') {
		const record = value as Record<string, unknown>;
		if (typeof record.error === 'string') return record.error;
		if (record.error && typeof record.error === 'object')
			return findError(record.error) ?? JSON.stringify(record.error);
		if (typeof record.message === 'string' && Object.keys(record).length <= 3)
			return record.message;
	}
	return undefined;
}

/** The script: a tool call first, then a final answer quoting the tool result. */
function decide(conversation: Conversation): Answer {
	if (conversation.toolResult !== undefined) {
		let parsed: unknown = conversation.toolResult;
		try {
			parsed = JSON.parse(conversation.toolResult);
			if (typeof parsed === 'string') parsed = JSON.parse(parsed); // a result stringified twice
		} catch {
			// plain text
		}
		const error =
			findError(parsed) ??
			(typeof parsed === 'string' && /error/i.test(parsed) ? parsed : undefined);
		if (error) return { text: `The tool failed: ${error}` };
		const id = findId(parsed);
		return {
			text: id
				? `Done: the notification was sent, its send ID is ${id}.`
				: `The tool answered without an ID: ${conversation.toolResult}`,
		};
	}
	const tool = conversation.tools[0];
	if (!tool) return { text: 'No tool to call.' };
	const args = Object.fromEntries(
		tool.argumentNames.map((name) => [name, argumentFromPrompt(conversation.lastUserText, name)]),
	);
	return { toolCall: { name: tool.name, arguments: args } };
}

const argumentNames = (parameters: any): string[] => Object.keys(parameters?.properties ?? {});

function chatConversation(body: any): Conversation {
	const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
	const lastUser = messages
		.map((message, index) => ({ message, index }))
		.filter(({ message }) => message.role === 'user')
		.pop();
	const afterUser = messages.slice((lastUser?.index ?? -1) + 1);
	const toolMessage = afterUser.filter((message) => message.role === 'tool').pop();
	return {
		lastUserText: textOf(lastUser?.message.content),
		toolResult: toolMessage ? textOf(toolMessage.content) : undefined,
		tools: (body?.tools ?? [])
			.filter((tool: any) => tool?.type === 'function')
			.map((tool: any) => ({
				name: tool.function.name,
				argumentNames: argumentNames(tool.function.parameters),
			})),
	};
}

function responsesConversation(body: any): Conversation {
	const input: any[] =
		typeof body?.input === 'string'
			? [{ role: 'user', content: body.input }]
			: Array.isArray(body?.input)
				? body.input
				: [];
	const lastUser = input
		.map((item, index) => ({ item, index }))
		.filter(({ item }) => item.role === 'user')
		.pop();
	const output = input
		.slice((lastUser?.index ?? -1) + 1)
		.filter((item) => item.type === 'function_call_output')
		.pop();
	return {
		lastUserText: textOf(lastUser?.item.content),
		toolResult: output ? textOf(output.output) : undefined,
		tools: (body?.tools ?? [])
			.filter((tool: any) => tool?.type === 'function')
			.map((tool: any) => ({ name: tool.name, argumentNames: argumentNames(tool.parameters) })),
	};
}

let counter = 0;
const nextId = (prefix: string) =>
	`${prefix}_${Date.now().toString(36)}${(++counter).toString(36)}`;
const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };

function chatMessage(answer: Answer) {
	if (answer.toolCall) {
		const call = {
			id: nextId('call'),
			type: 'function',
			function: {
				name: answer.toolCall.name,
				arguments: JSON.stringify(answer.toolCall.arguments),
			},
		};
		return {
			message: { role: 'assistant', content: null, tool_calls: [call] },
			finishReason: 'tool_calls',
		};
	}
	return { message: { role: 'assistant', content: answer.text ?? '' }, finishReason: 'stop' };
}

function answerChat(body: any, answer: Answer, response: http.ServerResponse) {
	const id = nextId('chatcmpl');
	const created = Math.floor(Date.now() / 1000);
	const model = body?.model ?? FAKE_MODEL_NAME;
	const { message, finishReason } = chatMessage(answer);
	if (!body?.stream) {
		sendJson(response, 200, {
			id,
			object: 'chat.completion',
			created,
			model,
			choices: [{ index: 0, message, finish_reason: finishReason }],
			usage,
		});
		return;
	}
	response.writeHead(200, {
		'content-type': 'text/event-stream',
		'cache-control': 'no-cache',
		connection: 'keep-alive',
	});
	const chunk = (delta: object, finish: string | null) => ({
		id,
		object: 'chat.completion.chunk',
		created,
		model,
		choices: [{ index: 0, delta, finish_reason: finish }],
	});
	const events: object[] = [];
	if (message.tool_calls) {
		events.push(
			chunk(
				{
					role: 'assistant',
					content: null,
					tool_calls: message.tool_calls.map((call, index) => ({ index, ...call })),
				},
				null,
			),
		);
	} else {
		events.push(chunk({ role: 'assistant', content: message.content }, null));
	}
	events.push(chunk({}, finishReason));
	if (body?.stream_options?.include_usage)
		events.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
	for (const event of events) response.write(`data: ${JSON.stringify(event)}\n\n`);
	response.end('data: [DONE]\n\n');
}

function answerResponses(body: any, answer: Answer, response: http.ServerResponse) {
	if (body?.stream) {
		sendJson(response, 400, {
			error: {
				message:
					'This fake model does not stream the Responses API: use Chat Completions to stream.',
				type: 'invalid_request_error',
			},
		});
		return;
	}
	const output = answer.toolCall
		? [
				{
					type: 'function_call',
					id: nextId('fc'),
					call_id: nextId('call'),
					name: answer.toolCall.name,
					arguments: JSON.stringify(answer.toolCall.arguments),
					status: 'completed',
				},
			]
		: [
				{
					type: 'message',
					id: nextId('msg'),
					role: 'assistant',
					status: 'completed',
					content: [{ type: 'output_text', text: answer.text ?? '', annotations: [] }],
				},
			];
	sendJson(response, 200, {
		id: nextId('resp'),
		object: 'response',
		created_at: Math.floor(Date.now() / 1000),
		status: 'completed',
		model: body?.model ?? FAKE_MODEL_NAME,
		output,
		parallel_tool_calls: true,
		tool_choice: 'auto',
		tools: body?.tools ?? [],
		usage: { input_tokens: 10, output_tokens: 10, total_tokens: 20 },
	});
}

function sendJson(response: http.ServerResponse, status: number, value: unknown) {
	const text = JSON.stringify(value);
	response.writeHead(status, {
		'content-type': 'application/json',
		'content-length': Buffer.byteLength(text),
	});
	response.end(text);
}

/** Starts the fake model on 127.0.0.1 (port 0 = a free one). */
export async function startFakeModel({ port = 0 }: { port?: number } = {}): Promise<FakeModel> {
	const log: FakeModelRequest[] = [];
	const server = http.createServer((request, response) => {
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', () => {
			const raw = Buffer.concat(chunks).toString('utf8');
			let body: any = raw;
			try {
				body = raw ? JSON.parse(raw) : undefined;
			} catch {
				// kept as text
			}
			const pathname = (request.url ?? '/').split('?')[0].replace(/\/+$/, '');
			const headers = Object.fromEntries(
				Object.entries(request.headers)
					.filter(([name]) => name !== 'authorization')
					.map(([name, value]) => [name, String(value)]),
			);
			const entry: FakeModelRequest = {
				time: Date.now(),
				method: request.method ?? 'GET',
				path: pathname,
				headers,
				body,
			};
			if (pathname !== '/__fake/log') log.push(entry);
			try {
				if (request.method === 'GET' && pathname === '/__fake/log')
					return sendJson(response, 200, log);
				if (request.method === 'GET' && pathname === '/v1/models') {
					return sendJson(response, 200, {
						object: 'list',
						data: [{ id: FAKE_MODEL_NAME, object: 'model', created: 0, owned_by: 'fake' }],
					});
				}
				if (request.method === 'POST' && pathname === '/v1/chat/completions') {
					entry.answer = decide(chatConversation(body));
					return answerChat(body, entry.answer, response);
				}
				if (request.method === 'POST' && pathname === '/v1/responses') {
					entry.answer = decide(responsesConversation(body));
					return answerResponses(body, entry.answer, response);
				}
				sendJson(response, 404, {
					error: {
						message: `The fake model has no ${request.method} ${pathname}`,
						type: 'invalid_request_error',
					},
				});
			} catch (error) {
				sendJson(response, 500, {
					error: { message: `The fake model failed: ${error.message}`, type: 'server_error' },
				});
			}
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, '127.0.0.1', () => resolve());
	});
	const actualPort = (server.address() as AddressInfo).port;
	return {
		baseUrl: `http://127.0.0.1:${actualPort}/v1`,
		port: actualPort,
		requests: () => log.slice(),
		stop: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
