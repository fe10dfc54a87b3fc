// What `npm start` and the end-to-end tests put into a real n8n (dev tooling, never shipped): the
// Companion Push API credential and workflows, imported with n8n's own CLI, and a small client of
// n8n's REST API (log in as the owner, read workflows and executions, publish a workflow).
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseFlatted } from 'flatted';

import { OWNER_EMAIL, OWNER_PASSWORD, runN8nCli, type CliResult, type N8nRuntime } from './n8n-runtime';

const EXAMPLES_DIR = path.resolve(__dirname, '..', 'examples');
/** The credential every example uses. */
export const CREDENTIAL_ID = 'cpSandboxCredential';
export const CREDENTIAL_NAME = 'Companion Push sandbox';
export const NODE_TYPE = 'n8n-nodes-companion-push.companionPush';
export const TRIGGER_TYPE = 'n8n-nodes-companion-push.companionPushTrigger';

type Env = Record<string, string>;
type CliOptions = { timeoutMs?: number; runtime?: N8nRuntime };

export interface CredentialValues {
	baseUrl: string;
	clientId: string;
	clientSecret: string;
	refreshToken: string;
}

/**
 * An entry for `n8n import:credentials` (plain data: n8n encrypts it on import). The access token
 * starts empty, so n8n renews it with the refresh token on the first call.
 */
export function credentialEntry({ baseUrl, clientId, clientSecret, refreshToken }: CredentialValues, { id = CREDENTIAL_ID, name = CREDENTIAL_NAME } = {}) {
	return { id, name, type: 'companionPushApi', data: { baseUrl, clientId, clientSecret, refreshToken, accessToken: '', accessTokenRenewAfter: 0 } };
}

/** Runs n8n's CLI on a JSON file written into the user folder, removed afterwards (it may hold secrets). */
async function importJson(env: Env, command: string, value: unknown, options?: CliOptions): Promise<CliResult> {
	const dir = fs.mkdtempSync(path.join(env.N8N_USER_FOLDER, 'import-'));
	const file = path.join(dir, 'import.json');
	try {
		fs.writeFileSync(file, JSON.stringify(value, null, 2), { mode: 0o600 });
		const result = await runN8nCli(env, [command, `--input=${file}`], options);
		if (result.code === 0 && !result.timedOut && /Successfully imported/.test(result.stdout + result.stderr)) return result;
		const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n');
		throw new Error(`n8n ${command} failed (exit ${result.code}${result.timedOut ? ', timed out' : ''}):\n${output}`);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** `n8n import:credentials` of plain entries (see credentialEntry); an existing id is replaced. */
export const importCredentials = (env: Env, entries: object[], options?: CliOptions) => importJson(env, 'import:credentials', entries, options);

/** `n8n import:workflow` of workflow objects; an existing id is replaced. */
export const importWorkflows = (env: Env, workflows: object[], options?: CliOptions) => importJson(env, 'import:workflow', workflows, options);

/** The example workflows of examples/*.json, by file name, in name order. */
export function exampleWorkflows(): { file: string; workflow: any }[] {
	return fs
		.readdirSync(EXAMPLES_DIR)
		.filter((file) => file.endsWith('.json'))
		.sort()
		.map((file) => ({ file, workflow: JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')) }));
}

/** An HTTP call with a JSON body and answer (`json` is undefined when the body is not JSON). */
export async function request(
	url: string,
	{ method = 'GET', headers = {}, body, timeoutMs = 30_000 }: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<{ status: number; headers: Headers; text: string; json: any }> {
	const response = await fetch(url, {
		method,
		headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
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
		if (response.status !== 200) throw new Error(`POST /rest/login answered ${response.status}: ${response.text.slice(0, 500)}`);
		this.cookie = response.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).find((cookie) => cookie.startsWith('n8n-auth='));
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
			throw new Error(`${method} /rest${pathname} answered ${response.status}: ${response.text.slice(0, 1000)}`);
		}
		return response.json && 'data' in response.json ? response.json.data : response.json;
	}

	listWorkflows = (): Promise<any[]> => this.call('GET', '/workflows');
	listCredentials = (): Promise<any[]> => this.call('GET', '/credentials');
	deactivateWorkflow = (id: string) => this.call('POST', `/workflows/${encodeURIComponent(id)}/deactivate`, {});

	/** Publishes (activates) the workflow's current version in the running n8n. */
	async activateWorkflow(id: string): Promise<any> {
		const workflow = await this.call('GET', `/workflows/${encodeURIComponent(id)}`);
		return await this.call('POST', `/workflows/${encodeURIComponent(id)}/activate`, { versionId: workflow.versionId });
	}

	/** Executions of a workflow (newest first): [{ id, status, mode, startedAt, stoppedAt, ... }]. */
	async listExecutions(workflowId: string): Promise<any[]> {
		const data = await this.call('GET', `/executions?filter=${encodeURIComponent(JSON.stringify({ workflowId }))}&limit=100`);
		return Array.isArray(data) ? data : data.results;
	}

	/** One execution with its run data (n8n stores it with `flatted`; `data` is parsed here). */
	async getExecution(id: string): Promise<any> {
		const execution = await this.call('GET', `/executions/${encodeURIComponent(id)}`);
		if (typeof execution.data === 'string') execution.data = parseFlatted(execution.data);
		return execution;
	}
}
