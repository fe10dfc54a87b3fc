/**
 * The devkit's call to a running n8n (devkit/n8n/rest.cts) while n8n says its database is not ready:
 * n8n answers every request so from a middleware before any route (its database ping failed or was
 * slow), so the call is made again; any other 503 is returned as it is.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { request } from '../../devkit/n8n/rest.cts';

/** A server that answers the first `notReady` requests as n8n does then, and 200 after. */
async function serverNotReadyFor(
	notReady: number,
	body = '{"code":503,"message":"Database is not ready!"}',
): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
	let requests = 0;
	const server = http.createServer((_incoming, response) => {
		requests++;
		if (requests <= notReady) response.writeHead(503).end(body);
		else response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":"ok"}');
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/rest/executions`,
		requests: () => requests,
		close: () => new Promise((resolve) => server.close(() => resolve())),
	};
}

describe('a call to n8n while its database is not ready', () => {
	test('is made again until n8n answers', async () => {
		const server = await serverNotReadyFor(2);
		try {
			const answer = await request(server.url, { method: 'POST', body: {} });
			expect({
				status: answer.status,
				data: answer.json.data,
				requests: server.requests(),
			}).toEqual({ status: 200, data: 'ok', requests: 3 });
		} finally {
			await server.close();
		}
	});

	test("gives n8n's answer back once its timeout is spent", async () => {
		const server = await serverNotReadyFor(1_000);
		try {
			const answer = await request(server.url, { timeoutMs: 1_200 });
			expect(answer.status).toBe(503);
			expect(server.requests()).toBeGreaterThan(1);
		} finally {
			await server.close();
		}
	});

	test('another 503 is returned at once', async () => {
		const server = await serverNotReadyFor(1, '{"code":503,"message":"Service unavailable"}');
		try {
			const answer = await request(server.url);
			expect({ status: answer.status, requests: server.requests() }).toEqual({
				status: 503,
				requests: 1,
			});
		} finally {
			await server.close();
		}
	});
});
