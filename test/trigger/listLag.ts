/**
 * A list that shows some sends late, for the trigger's tests: a proxy on 127.0.0.1 in front of the
 * sandbox that passes every request through unchanged (Date header included), except that the
 * sends it is told to hold back are left out of GET /push-notification/list until released. The
 * detail read still shows them, as the API would while its list lags.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Sandbox } from '../../sandbox';

export interface LaggingList {
	/** The proxy's base URL: give it to the credential instead of the sandbox's. */
	baseUrl: string;
	/** Leaves the send out of the list until `release(id)`. */
	holdBack(id: string): void;
	release(id: string): void;
	stop(): Promise<void>;
}

export async function startLaggingList(sandbox: Sandbox): Promise<LaggingList> {
	const heldBack = new Set<string>();
	const server = http.createServer((request, response) => {
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', () => {
			void forward(request, Buffer.concat(chunks)).then(
				({ status, headers, body }) => {
					response.writeHead(status, headers);
					response.end(body);
				},
				(error: Error) => {
					response.writeHead(502, { 'content-type': 'text/plain' });
					response.end(`list lag proxy: ${error.message}`);
				},
			);
		});
	});

	async function forward(request: http.IncomingMessage, body: Buffer) {
		const headers: Record<string, string> = {};
		for (const [name, value] of Object.entries(request.headers)) {
			if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers[name] = value;
		}
		const answer = await fetch(`${sandbox.baseUrl}${request.url}`, {
			method: request.method,
			headers,
			body: body.length > 0 ? body : undefined,
		});
		let text = await answer.text();
		if (request.method === 'GET' && request.url?.startsWith('/push-notification/list') && answer.status === 200) {
			text = JSON.stringify(withoutHeldBack(JSON.parse(text)));
		}
		const answerHeaders: Record<string, string> = {};
		answer.headers.forEach((value, name) => {
			if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) answerHeaders[name] = value;
		});
		return { status: answer.status, headers: answerHeaders, body: text };
	}

	/** The sandbox's default list body ({ ok, data: { notifications, total, skip, limit } }) without
	 * the held-back sends (one page holds every send in these tests). */
	function withoutHeldBack(body: { data: { notifications: Array<{ id: string }>; total: number } }) {
		const shown = body.data.notifications.filter((send) => !heldBack.has(send.id));
		const hidden = body.data.notifications.length - shown.length;
		return { ...body, data: { ...body.data, notifications: shown, total: body.data.total - hidden } };
	}

	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}`,
		holdBack: (id) => heldBack.add(id),
		release: (id) => heldBack.delete(id),
		stop: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
