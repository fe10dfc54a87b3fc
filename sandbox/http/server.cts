import {
	createServer,
	type IncomingMessage,
	type RequestListener,
	type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ApiError } from '../apiError.cts';
import type { BearerCheck } from '../auth.cts';
import type { SandboxState } from '../state.cts';
import type { FaultSpec, SandboxTls } from '../types.cts';
import { ADMIN_PREFIX, handleAdmin } from './adminApi.cts';
import { renderError, type RenderedBody } from './errorShapes.cts';
import { faultError } from './faultAnswers.cts';
import { processesTheRequest } from './faults.cts';
import { ANONYMOUS_CALLER } from './limits.cts';
import { matchRoute, REFRESH_ENDPOINT, unknownRoute, type RequestContext } from './publicApi.cts';
import { redactBody } from './requestLog.cts';

/** node's own http (or, given certificates, https) server, bound to 127.0.0.1 only. */

const MAX_BODY_BYTES = 10 * 1024 * 1024;
const HOST = '127.0.0.1';

export interface RunningServer {
	baseUrl: string;
	close(): Promise<void>;
}

interface Answer {
	status: number;
	rendered: RenderedBody;
	headers?: Record<string, string>;
}

export async function startHttpServer(
	state: SandboxState,
	port: number,
	tls?: SandboxTls,
): Promise<RunningServer> {
	const heldAnswers = new Set<NodeJS.Timeout>();
	/** Answers a trickle fault is still writing, stopped when the server closes. */
	const trickles = new Set<NodeJS.Timeout>();
	let baseUrl = '';
	const listener: RequestListener = (req, res) => {
		handle(req, res).catch((error) => {
			if (!res.headersSent && !res.destroyed) write(res, internalError(state, error));
		});
	};
	// Only the server's own certificate is sent: a client finds the authority in its trust store.
	const server = tls
		? createHttpsServer({ cert: tls.cert, key: tls.key }, listener)
		: createServer(listener);

	/**
	 * Every answer, public or admin, carries a Date header on the API's clock (the sandbox clock plus
	 * clockOffsetMs) at the moment it is written, as a real server's tells its own clock: clients
	 * compare created_at and Retry-After dates with it. (node adds its own, from the host clock, only
	 * when none is set.)
	 */
	function write(res: ServerResponse, answer: Answer): void {
		const date = new Date(state.apiNow()).toUTCString();
		res.writeHead(answer.status, {
			'content-type': answer.rendered.contentType,
			date,
			...answer.headers,
		});
		res.end(answer.rendered.text);
	}

	/**
	 * The trickle fault: the status and headers at once, then the body one byte every `intervalMs`
	 * (real time), so an idle-socket timeout never fires. Stops when the client goes away.
	 */
	function trickle(res: ServerResponse, answer: Answer, fault: FaultSpec): void {
		const date = new Date(state.apiNow()).toUTCString();
		res.writeHead(answer.status, {
			'content-type': answer.rendered.contentType,
			date,
			...answer.headers,
		});
		res.flushHeaders();
		const bytes = Buffer.from(' '.repeat(fault.padBytes ?? 0) + answer.rendered.text, 'utf8');
		let sent = 0;
		const timer = setInterval(() => {
			if (res.destroyed) return stop();
			res.write(bytes.subarray(sent, sent + 1));
			if (++sent >= bytes.length) {
				stop();
				res.end();
			}
		}, fault.intervalMs ?? 1000);
		const stop = () => {
			clearInterval(timer);
			trickles.delete(timer);
		};
		trickles.add(timer);
		res.once('close', stop);
	}

	async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const url = new URL(req.url ?? '/', `http://${HOST}`);
		const method = (req.method ?? 'GET').toUpperCase();
		const rawBody = await readBody(req);
		if (rawBody === undefined) {
			write(
				res,
				errorAnswer(
					state,
					new ApiError(
						413,
						'payload_too_large',
						`The request body exceeds ${MAX_BODY_BYTES} bytes`,
					),
				),
			);
			return;
		}
		if (url.pathname === ADMIN_PREFIX || url.pathname.startsWith(`${ADMIN_PREFIX}/`)) {
			const parsed = parseJson(rawBody);
			const reply = parsed.ok
				? handleAdmin(method, url.pathname, {
						state,
						body: parsed.value,
						query: url.searchParams,
						baseUrl,
					})
				: {
						status: 400,
						body: {
							ok: false,
							error: { code: 'invalid_json', message: 'The admin request body is not valid JSON' },
						},
					};
			write(res, jsonAnswer(reply.status, reply.body));
			return;
		}
		handlePublic(req, res, method, url, rawBody);
	}

	function handlePublic(
		req: IncomingMessage,
		res: ServerResponse,
		method: string,
		url: URL,
		rawBody: string,
	): void {
		// The log and the rate limits follow the sandbox clock; what the API shows and decides, its own.
		const now = state.clock.now();
		const apiNow = state.apiNow();
		const { route, params, endpoint } = matchRoute(method, url.pathname);
		const bearer = state.auth.check(req.headers.authorization, apiNow);
		const parsed = parseJson(rawBody);
		const latency = state.latencyFor(state.log.size);
		const entry = state.log.add({
			method,
			path: url.pathname,
			query: Object.fromEntries(url.searchParams),
			body: redactBody(parsed.ok ? parsed.value : rawBody),
			time: now,
			endpoint,
			status: 0,
			authorization: bearer.state,
			orgId: bearer.credential?.orgId,
		});
		if (latency > 0) entry.latencyMs = latency;

		// Limits first: a refused request has no effect, takes no fault and is not in flight.
		const admission = state.limiter.admit(callerOf(bearer, endpoint, parsed), now, state.settings);
		const release = 'release' in admission ? admission.release : () => undefined;
		res.once('close', release);
		// The request is processed now; its outcome (an answer or a reset) comes `latency` ms later.
		const later = (extraMs: number, outcome: () => void) => {
			const run = () => {
				release();
				if (!res.destroyed) outcome();
			};
			const ms = latency + extraMs;
			if (ms <= 0) return run();
			const timer = setTimeout(() => {
				heldAnswers.delete(timer);
				run();
			}, ms);
			heldAnswers.add(timer);
		};
		const send = (answer: Answer, extraMs = 0) => {
			entry.status = answer.status;
			later(extraMs, () => write(res, answer));
		};
		const reset = () => {
			entry.status = 0;
			later(0, () => req.socket.destroy());
		};

		if ('refusal' in admission) {
			const { limitedBy, retryAfterSeconds, message } = admission.refusal;
			entry.limitedBy = limitedBy;
			return send(
				errorAnswer(
					state,
					new ApiError(429, 'rate_limited', message, undefined, [], {
						'retry-after': String(retryAfterSeconds),
					}),
				),
			);
		}

		const fault = state.faults.take(endpoint);
		if (fault) entry.fault = fault.kind;
		if (fault && !processesTheRequest(fault)) {
			// Nothing is processed, so nothing is registered.
			return fault.kind === 'resetBefore'
				? reset()
				: send(errorAnswer(state, faultError(fault, apiNow)));
		}

		const context: RequestContext = {
			state,
			query: url.searchParams,
			json: () => {
				if (rawBody.trim() === '') return {};
				if (!parsed.ok)
					throw new ApiError(400, 'invalid_json', 'The request body is not valid JSON');
				return parsed.value;
			},
			bearer,
			now: apiNow,
			fault,
		};
		const answer = runHandler(context, () =>
			route ? route.handle(context, params) : unknownRoute(method, url.pathname),
		);
		entry.notificationId = context.registeredId;

		// Faults that strike after the request was processed: a send IS registered (maybe later, registerAfterMs).
		switch (fault?.kind) {
			case 'resetAfter':
				return reset();
			case 'status5xx':
				return send(errorAnswer(state, faultError(fault, apiNow)));
			case 'malformedJson':
				return send({
					...answer,
					rendered: {
						contentType: 'application/json; charset=utf-8',
						text: truncate(answer.rendered.text),
					},
				});
			case 'delay':
				return send(answer, fault.delayMs ?? 30_000);
			case 'trickle':
				entry.status = answer.status;
				return later(0, () => trickle(res, answer, fault));
			case 'oversized':
				return send({
					...answer,
					rendered: {
						...answer.rendered,
						text: padded(answer.rendered.text, fault.sizeBytes ?? 64 * 1024 * 1024),
					},
				});
			default:
				return send(answer);
		}
	}

	function runHandler(
		context: RequestContext,
		run: () => { status: number; body: unknown },
	): Answer {
		try {
			const reply = run();
			return jsonAnswer(reply.status, reply.body);
		} catch (error) {
			if (error instanceof ApiError) return errorAnswer(context.state, error);
			return internalError(context.state, error);
		}
	}

	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, HOST, () => resolve());
	});
	baseUrl = `${tls ? 'https' : 'http'}://${HOST}:${(server.address() as AddressInfo).port}`;

	return {
		baseUrl,
		close: async () => {
			for (const timer of heldAnswers) clearTimeout(timer);
			heldAnswers.clear();
			for (const timer of trickles) clearInterval(timer);
			trickles.clear();
			await new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			});
		},
	};
}

/** Whose limits a request counts against: its valid token's credential, or the client_id of a refresh body. */
function callerOf(
	bearer: BearerCheck,
	endpoint: string,
	parsed: ReturnType<typeof parseJson>,
): string {
	if (endpoint === REFRESH_ENDPOINT) {
		const body = parsed.ok ? parsed.value : undefined;
		const clientId =
			typeof body === 'object' && body !== null
				? (body as Record<string, unknown>).client_id
				: undefined;
		return typeof clientId === 'string' ? clientId : ANONYMOUS_CALLER;
	}
	return bearer.credential?.clientId ?? ANONYMOUS_CALLER;
}

function errorAnswer(state: SandboxState, error: ApiError): Answer {
	return {
		status: error.status,
		rendered: renderError(error, state.settings.errorShape),
		headers: error.headers,
	};
}

function internalError(state: SandboxState, error: unknown): Answer {
	const message = `Sandbox internal error: ${(error as Error)?.message ?? String(error)}`;
	return errorAnswer(state, new ApiError(500, 'internal_error', message));
}

function jsonAnswer(status: number, body: unknown): Answer {
	return {
		status,
		rendered: { contentType: 'application/json; charset=utf-8', text: JSON.stringify(body) },
	};
}

/** The body followed by spaces up to `sizeBytes` bytes: JSON whitespace, so it parses as before. */
function padded(text: string, sizeBytes: number): string {
	return text + ' '.repeat(Math.max(0, sizeBytes - Buffer.byteLength(text, 'utf8')));
}

/** Half of the real body: a JSON parser fails on it, as on a body cut by a proxy. */
function truncate(text: string): string {
	return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

function parseJson(raw: string): { ok: true; value: unknown } | { ok: false } {
	if (raw.trim() === '') return { ok: true, value: undefined };
	try {
		return { ok: true, value: JSON.parse(raw) };
	} catch {
		return { ok: false };
	}
}

/** The body as text, or undefined when it is too large. */
function readBody(req: IncomingMessage): Promise<string | undefined> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		req.on('data', (chunk: Buffer) => {
			size += chunk.length;
			if (size <= MAX_BODY_BYTES) chunks.push(chunk);
		});
		req.on('end', () =>
			resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')),
		);
		req.on('error', reject);
	});
}
