/**
 * A tiny HTTP server for the shapes the sandbox never produces (a body like `{foo: 1}`, a list
 * that ignores `skip`). It answers the token refresh like the API, and every other request with
 * what `answer` returns; it records each request. Its secrets carry no mark, so the secret guard
 * is told each one as it is made: the credential's, and every token a refresh answer hands out.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { CredentialStore } from '../../devkit/engine.cts';
import { stoppedAfterEachTest } from './sandboxes.cts';
import { watchSecret } from './secretGuard.cts';

export interface FakeRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	authorization?: string;
	/** The request body as it came (text). */
	body: string;
}

export interface FakeAnswer {
	status?: number;
	body: unknown;
	/** Send `body` as it is (a string), not as JSON. */
	raw?: boolean;
	headers?: Record<string, string>;
}

export interface FakeApi {
	baseUrl: string;
	requests: FakeRequest[];
	accessToken: string;
	stop(): Promise<void>;
}

/** `answer` answers every request but the token refresh, which `refresh` answers when given (the
 * API's own token answer otherwise). */
export async function startFakeApi(
	answer: (request: FakeRequest) => FakeAnswer,
	refresh?: (request: FakeRequest) => FakeAnswer,
): Promise<FakeApi> {
	const requests: FakeRequest[] = [];
	const accessToken = 'fake-access-token-0123456789';
	watchSecret(accessToken, 'access token');
	const server = createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://127.0.0.1');
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const request: FakeRequest = {
				method: req.method ?? 'GET',
				path: url.pathname,
				query: Object.fromEntries(url.searchParams),
				authorization: req.headers.authorization,
				body: Buffer.concat(chunks).toString('utf8'),
			};
			requests.push(request);
			const reply: FakeAnswer =
				request.path !== '/auth/oauth/v2/refresh'
					? answer(request)
					: (refresh?.(request) ?? {
							status: 200,
							body: { access_token: accessToken, token_type: 'Bearer', expires_in: 3600 },
						});
			if (request.path === '/auth/oauth/v2/refresh') watchTokensIn(reply.body);
			const text = reply.raw ? String(reply.body) : JSON.stringify(reply.body);
			res.writeHead(reply.status ?? 200, {
				'content-type': reply.raw ? 'text/plain' : 'application/json',
				...reply.headers,
			});
			res.end(text);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}`,
		requests,
		accessToken,
		stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

/** The tokens a refresh answer hands out (whatever its shape), watched by the secret guard. */
function watchTokensIn(body: unknown): void {
	const parsed = typeof body === 'string' ? parseOrKeep(body) : body;
	if (typeof parsed !== 'object' || parsed === null) return;
	const answer = parsed as Record<string, unknown>;
	for (const tokens of [answer, answer.data]) {
		if (typeof tokens !== 'object' || tokens === null) continue;
		watchSecret((tokens as Record<string, unknown>).access_token, 'access token');
		watchSecret((tokens as Record<string, unknown>).refresh_token, 'refresh token');
	}
}

function parseOrKeep(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return text;
	}
}

/** The credential data for the fake API (any secrets: its refresh endpoint accepts all). */
export function fakeCredential(api: FakeApi) {
	watchSecret('fake-client-secret-0123456789', 'client secret');
	watchSecret('fake-refresh-token-0123456789', 'refresh token');
	return {
		baseUrl: api.baseUrl,
		clientId: 'fake-client',
		clientSecret: 'fake-client-secret-0123456789',
		refreshToken: 'fake-refresh-token-0123456789',
		accessToken: '',
		accessTokenRenewAfter: 0,
	};
}

/** A credential store holding the fake API's credential, as n8n keeps it before its first use. */
export function fakeStore(api: FakeApi): CredentialStore {
	const store = new CredentialStore();
	store.add(fakeCredential(api));
	return store;
}

/** Fake APIs the tests of this describe block start, each answering its own way: each one is
 * stopped once its test ends, also when the test failed. */
export function useFakeApis(): {
	start(
		answer: (request: FakeRequest) => FakeAnswer,
		refresh?: (request: FakeRequest) => FakeAnswer,
	): Promise<FakeApi>;
} {
	const keep = stoppedAfterEachTest<FakeApi>();
	return { start: async (answer, refresh) => keep(await startFakeApi(answer, refresh)) };
}
