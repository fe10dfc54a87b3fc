/**
 * The raw baseline: a bare undici client on one keep-alive connection, one token, sequential
 * requests, nothing else (no retries, no checks, no n8n). What "the fastest honest client" costs.
 */
import { Pool } from 'undici';

import type { Sandbox } from '../sandbox';

export interface RawClient {
	token(): Promise<string>;
	post(path: string, bearer: string, body: string): Promise<unknown>;
	get(path: string, bearer: string): Promise<unknown>;
	close(): Promise<void>;
}

export interface RawClientOptions {
	/** Where to send (default the sandbox's base URL; e.g. a delayed link in front of it). */
	baseUrl?: string;
	/** The certificate authority to trust for https (default the sandbox's, if it has one). */
	ca?: string;
	/** A new connection for every request (no keep-alive), as n8n's HTTP helper does. */
	newConnectionEach?: boolean;
}

/** One keep-alive connection by default: requests go out one after the other, as a plain loop sends them. */
export function rawClient(sandbox: Sandbox, connections = 1, { baseUrl = sandbox.baseUrl, ca = sandbox.caCertificate, newConnectionEach = false }: RawClientOptions = {}): RawClient {
	const pool = new Pool(baseUrl, { connections, ...(ca ? { connect: { ca } } : {}) });
	const { clientId, clientSecret, refreshToken } = sandbox.orgs.primary;
	const request = async (method: 'GET' | 'POST', path: string, bearer?: string, body?: string): Promise<unknown> => {
		const response = await pool.request({
			method,
			path,
			body,
			reset: newConnectionEach,
			headers: {
				'content-type': 'application/json',
				...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
			},
		});
		const json = await response.body.json();
		if (response.statusCode >= 300) throw new Error(`${method} ${path} answered ${response.statusCode}`);
		return json;
	};
	return {
		async token() {
			const body = JSON.stringify({ client_id: clientId, client_secret: clientSecret, refresh_token: refreshToken });
			const answer = (await request('POST', '/auth/oauth/v2/refresh', undefined, body)) as { access_token: string };
			return answer.access_token;
		},
		post: (path, bearer, body) => request('POST', path, bearer, body),
		get: (path, bearer) => request('GET', path, bearer),
		close: () => pool.close(),
	};
}
