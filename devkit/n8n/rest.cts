// A small client of a running n8n's REST API (dev tooling, never shipped): log in as the owner, read
// workflows and executions, publish a workflow and wait until n8n says it is published, and the
// owner's set-up on n8n 1.x (which has no owner from the environment).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseFlatted } from 'flatted';

import { waitFor } from '../waitFor.cts';
import { OWNER_EMAIL, OWNER_PASSWORD } from './home.cts';

type RequestOptions = {
	method?: string;
	headers?: Record<string, string>;
	body?: unknown;
	timeoutMs?: number;
};
type Answer = { status: number; headers: Headers; text: string; json: any };

// n8n pings its database every 2 s and, while a ping fails or is slower than its timeout (5 s: a
// busy SQLite on a loaded machine), answers every request with this 503 from a middleware that runs
// before any route, so the request did nothing and may be made again.
const DATABASE_NOT_READY = 'Database is not ready!';

/**
 * An HTTP call with a JSON body and answer (`json` is undefined when the body is not JSON). While
 * n8n answers that its database is not ready, the call is made again until its own timeout is spent;
 * then that answer is returned.
 */
export async function request(url: string, options: RequestOptions = {}): Promise<Answer> {
	const deadline = Date.now() + (options.timeoutMs ?? 30_000);
	for (;;) {
		const answer = await requestOnce(url, options);
		const databaseNotReady = answer.status === 503 && answer.text.includes(DATABASE_NOT_READY);
		if (!databaseNotReady || Date.now() + 500 > deadline) return answer;
		await sleep(500);
	}
}

async function requestOnce(
	url: string,
	{ method = 'GET', headers = {}, body, timeoutMs = 30_000 }: RequestOptions,
): Promise<Answer> {
	const response = await fetch(url, {
		method,
		headers: {
			accept: 'application/json',
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
			...headers,
		},
		body: body === undefined ? undefined : JSON.stringify(body),
		signal: AbortSignal.timeout(timeoutMs),
		redirect: 'manual',
	});
	const text = await response.text();
	let json;
	try {
		json = text ? JSON.parse(text) : undefined;
	} catch {
		json = undefined;
	}
	return { status: response.status, headers: response.headers, text, json };
}

/** A logged-in session of n8n's REST API (as the env-managed owner, by default). */
export class N8nRestClient {
	readonly baseUrl: string;
	// n8n binds its auth cookie to this header (a hash of it is in the token).
	private readonly browserId = randomBytes(12).toString('hex');
	private cookie: string | undefined;

	constructor(baseUrl: string) {
		this.baseUrl = baseUrl.replace(/\/+$/, '');
	}

	/** POST /rest/login; returns the user n8n answers with. */
	async login(email = OWNER_EMAIL, password = OWNER_PASSWORD): Promise<any> {
		const response = await request(`${this.baseUrl}/rest/login`, {
			method: 'POST',
			headers: { 'browser-id': this.browserId },
			body: { emailOrLdapLoginId: email, password },
		});
		if (response.status !== 200)
			throw new Error(
				`POST /rest/login answered ${response.status}: ${response.text.slice(0, 500)}`,
			);
		this.cookie = response.headers
			.getSetCookie()
			.map((cookie) => cookie.split(';')[0])
			.find((cookie) => cookie.startsWith('n8n-auth='));
		if (!this.cookie) throw new Error('POST /rest/login set no n8n-auth cookie');
		return response.json?.data;
	}

	/** A REST call; returns the `data` of the answer, or throws with the status and body. */
	async call(method: string, pathname: string, body?: unknown): Promise<any> {
		const response = await request(`${this.baseUrl}/rest${pathname}`, {
			method,
			body,
			headers: { 'browser-id': this.browserId, ...(this.cookie ? { cookie: this.cookie } : {}) },
		});
		if (response.status < 200 || response.status >= 300) {
			throw new Error(
				`${method} /rest${pathname} answered ${response.status}: ${response.text.slice(0, 1000)}`,
			);
		}
		return response.json && 'data' in response.json ? response.json.data : response.json;
	}

	listWorkflows = (): Promise<any[]> => this.call('GET', '/workflows');
	listCredentials = (): Promise<any[]> => this.call('GET', '/credentials');
	deactivateWorkflow = (id: string) =>
		this.call('POST', `/workflows/${encodeURIComponent(id)}/deactivate`, {});

	/** Publishes (activates) the workflow's current version in the running n8n. */
	async activateWorkflow(id: string): Promise<any> {
		const workflow = await this.call('GET', `/workflows/${encodeURIComponent(id)}`);
		return await this.call('POST', `/workflows/${encodeURIComponent(id)}/activate`, {
			versionId: workflow.versionId,
		});
	}

	/** Executions of a workflow (newest first): [{ id, status, mode, startedAt, stoppedAt, ... }]. */
	async listExecutions(workflowId: string): Promise<any[]> {
		const data = await this.call(
			'GET',
			`/executions?filter=${encodeURIComponent(JSON.stringify({ workflowId }))}&limit=100`,
		);
		return Array.isArray(data) ? data : data.results;
	}

	/** One execution with its run data (n8n stores it with `flatted`; `data` is parsed here). */
	async getExecution(id: string): Promise<any> {
		const execution = await this.call('GET', `/executions/${encodeURIComponent(id)}`);
		if (typeof execution.data === 'string') execution.data = parseFlatted(execution.data);
		return execution;
	}
}

/**
 * Publishes a workflow through n8n's REST API and waits until n8n says it is published (an outbox in
 * 2.41); returns that status ({ status: 'published', triggers: [{ status: 'activated', ... }] }).
 * Until then n8n answers in_progress or pending, and, as it completes a first publication, for a
 * moment not_published: it reads the outbox and the trigger statuses in two queries, and on Postgres
 * the first can see the outbox done before the second sees the trigger statuses written with it.
 */
export async function publish(
	rest: N8nRestClient,
	id: string,
	timeoutMs = 60_000,
): Promise<{
	status: string;
	triggers: Array<{ status: string; nodeId: string; errorMessage?: string | null }>;
}> {
	await rest.activateWorkflow(id);
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const status = await rest.call(
			'GET',
			`/workflows/${encodeURIComponent(id)}/publication-status`,
		);
		if (status.status === 'published') return status;
		if (!['in_progress', 'pending', 'not_published'].includes(status.status)) {
			throw new Error(
				`Publishing ${id} ended "${status.status}": ${JSON.stringify(status.triggers ?? [])}`,
			);
		}
		if (Date.now() > deadline)
			throw new Error(
				`${id} was not published within ${timeoutMs / 1000} s (n8n says "${status.status}")`,
			);
		await sleep(250);
	}
}

/** Whether an execution (as n8n lists it) has ended: it is no longer new, running or waiting. */
export const hasFinished = (execution: { status: string }) =>
	!['new', 'running', 'waiting'].includes(execution.status);

/**
 * n8n 1.x answers /healthz/readiness before it has mounted its REST API (Express answers 404 until
 * then), and has no owner from the environment (N8N_INSTANCE_OWNER_MANAGED_BY_ENV is 2.x): once the
 * REST API answers, the owner is set up as the setup screen does it. Returns that session.
 */
export async function setUpOwner1x(url: string): Promise<{ cookie: string; browserId: string }> {
	await waitFor(
		"n8n's REST API",
		async () => (await request(`${url}/rest/settings`)).status === 200,
		60_000,
		250,
	);
	const browserId = 'e2e-1x-owner-setup';
	const setup = await request(`${url}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'browser-id': browserId },
		body: {
			email: OWNER_EMAIL,
			firstName: 'Companion',
			lastName: 'Owner',
			password: OWNER_PASSWORD,
		},
	});
	if (setup.status !== 200)
		throw new Error(`POST /rest/owner/setup answered ${setup.status}: ${setup.text.slice(0, 500)}`);
	const cookie = setup.headers
		.getSetCookie()
		.map((entry) => entry.split(';')[0])
		.find((entry) => entry.startsWith('n8n-auth='));
	return { cookie: cookie ?? '', browserId };
}
