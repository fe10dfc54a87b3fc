// What `npm start` and the end-to-end tests put into a real n8n (dev tooling, never shipped):
// the Companion Push API credential, workflows (imported with n8n's own CLI), and a small client
// of n8n's REST API (log in as the owner, read workflows and executions, publish a workflow).
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const { OWNER_EMAIL, OWNER_PASSWORD, runN8nCli } = require('./n8n-runtime');

const EXAMPLES_DIR = path.resolve(__dirname, '..', 'examples');
/** The credential every example uses. */
const CREDENTIAL_ID = 'cpSandboxCredential';
const CREDENTIAL_NAME = 'Companion Push sandbox';
const CREDENTIAL_TYPE = 'companionPushApi';
const NODE_TYPE = 'n8n-nodes-companion-push.companionPush';
const TRIGGER_TYPE = 'n8n-nodes-companion-push.companionPushTrigger';

/**
 * An entry for `n8n import:credentials` (plain data: n8n encrypts it on import). The access
 * token starts empty, so n8n renews it with the refresh token on the first call.
 */
function credentialEntry({ baseUrl, clientId, clientSecret, refreshToken }, { id = CREDENTIAL_ID, name = CREDENTIAL_NAME } = {}) {
	return {
		id,
		name,
		type: CREDENTIAL_TYPE,
		data: { baseUrl, clientId, clientSecret, refreshToken, accessToken: '', accessTokenRenewAfter: 0 },
	};
}

function assertCliSucceeded(result, what) {
	if (result.code === 0 && !result.timedOut && /Successfully imported/.test(result.stdout + result.stderr)) return;
	const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n');
	throw new Error(`n8n ${what} failed (exit ${result.code}${result.timedOut ? ', timed out' : ''}):\n${output}`);
}

/** Runs n8n's CLI on a JSON file written into the user folder, removed afterwards (it may hold secrets). */
async function importJson(env, command, value, options) {
	const dir = fs.mkdtempSync(path.join(env.N8N_USER_FOLDER, 'import-'));
	const file = path.join(dir, 'import.json');
	try {
		fs.writeFileSync(file, JSON.stringify(value, null, 2), { mode: 0o600 });
		const result = await runN8nCli(env, [command, `--input=${file}`], options);
		assertCliSucceeded(result, command);
		return result;
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** `n8n import:credentials` of plain entries (see credentialEntry); an existing id is replaced. */
async function importCredentials(env, entries, options) {
	return await importJson(env, 'import:credentials', entries, options);
}

/** `n8n import:workflow` of workflow objects (an array); an existing id is replaced. */
async function importWorkflows(env, workflows, options) {
	return await importJson(env, 'import:workflow', workflows, options);
}

/** `n8n publish:workflow --id=` (for a workflow to be active when n8n starts next). */
async function publishWorkflowCli(env, id, options) {
	const result = await runN8nCli(env, ['publish:workflow', `--id=${id}`], options);
	if (result.code !== 0 || /Error/.test(result.stderr)) {
		throw new Error(`n8n publish:workflow --id=${id} failed:\n${(result.stdout + result.stderr).slice(-3000)}`);
	}
}

/** The example workflows of examples/*.json, by file name, in name order. */
function exampleWorkflows() {
	return fs
		.readdirSync(EXAMPLES_DIR)
		.filter((file) => file.endsWith('.json'))
		.sort()
		.map((file) => ({ file, workflow: JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')) }));
}

function sha(value) {
	return crypto.createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

// ---------------------------------------------------------------------------------------------
// n8n's REST API
// ---------------------------------------------------------------------------------------------

function request(url, { method = 'GET', headers = {}, body, timeoutMs = 30_000 } = {}) {
	return new Promise((resolve, reject) => {
		const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
		const req = http.request(
			url,
			{
				method,
				timeout: timeoutMs,
				headers: {
					accept: 'application/json',
					...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
					...headers,
				},
			},
			(res) => {
				let text = '';
				res.setEncoding('utf8');
				res.on('data', (chunk) => (text += chunk));
				res.on('end', () => {
					let json;
					try {
						json = text ? JSON.parse(text) : undefined;
					} catch {
						json = undefined;
					}
					resolve({ status: res.statusCode, headers: res.headers, text, json });
				});
			},
		);
		req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out after ${timeoutMs} ms`)));
		req.on('error', reject);
		if (payload) req.write(payload);
		req.end();
	});
}

/** A logged-in session of n8n's REST API (as the env-managed owner, by default). */
class N8nRestClient {
	constructor(baseUrl) {
		this.baseUrl = baseUrl.replace(/\/+$/, '');
		// n8n binds its auth cookie to this header (a hash of it is in the token).
		this.browserId = crypto.randomBytes(12).toString('hex');
		this.cookie = undefined;
	}

	/** POST /rest/login; returns the user n8n answers with. */
	async login(email = OWNER_EMAIL, password = OWNER_PASSWORD) {
		const response = await request(`${this.baseUrl}/rest/login`, {
			method: 'POST',
			headers: { 'browser-id': this.browserId },
			body: { emailOrLdapLoginId: email, password },
		});
		if (response.status !== 200) throw new Error(`POST /rest/login answered ${response.status}: ${response.text.slice(0, 500)}`);
		const cookies = [].concat(response.headers['set-cookie'] || []);
		const auth = cookies.map((cookie) => cookie.split(';')[0]).find((cookie) => cookie.startsWith('n8n-auth='));
		if (!auth) throw new Error('POST /rest/login set no n8n-auth cookie');
		this.cookie = auth;
		return response.json && response.json.data;
	}

	/** A REST call; returns the `data` of the answer, or throws with the status and body. */
	async call(method, pathname, body) {
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

	async getWorkflow(id) {
		return await this.call('GET', `/workflows/${encodeURIComponent(id)}`);
	}

	async listWorkflows() {
		return await this.call('GET', '/workflows');
	}

	async listCredentials() {
		return await this.call('GET', '/credentials');
	}

	/** Publishes (activates) the workflow's current version in the running n8n. */
	async activateWorkflow(id) {
		const workflow = await this.getWorkflow(id);
		return await this.call('POST', `/workflows/${encodeURIComponent(id)}/activate`, { versionId: workflow.versionId });
	}

	async deactivateWorkflow(id) {
		return await this.call('POST', `/workflows/${encodeURIComponent(id)}/deactivate`, {});
	}

	/** Executions of a workflow (newest first): [{ id, status, mode, startedAt, stoppedAt, ... }]. */
	async listExecutions(workflowId) {
		const filter = encodeURIComponent(JSON.stringify({ workflowId }));
		const data = await this.call('GET', `/executions?filter=${filter}&limit=100`);
		return Array.isArray(data) ? data : data.results;
	}

	/** One execution with its run data (n8n stores it flattened; `data` is parsed here). */
	async getExecution(id) {
		const execution = await this.call('GET', `/executions/${encodeURIComponent(id)}`);
		if (typeof execution.data === 'string') execution.data = unflattenExecutionData(execution.data);
		return execution;
	}
}

/**
 * n8n stores run data with `flatted` (references as string indexes into one array). Decodes it
 * without the library: each string that is an index of the array is a reference.
 */
function unflattenExecutionData(text) {
	const table = JSON.parse(text);
	const seen = new Map();
	const revive = (index) => {
		if (seen.has(index)) return seen.get(index);
		const value = table[index];
		if (value === null || typeof value !== 'object') {
			seen.set(index, value);
			return value;
		}
		const out = Array.isArray(value) ? [] : {};
		seen.set(index, out);
		for (const [key, entry] of Object.entries(value)) {
			out[key] = typeof entry === 'string' && /^\d+$/.test(entry) ? revive(Number(entry)) : entry;
		}
		return out;
	};
	// Primitive strings are themselves stored as table entries referenced by index.
	const root = revive(0);
	return root;
}

module.exports = {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	CREDENTIAL_TYPE,
	NODE_TYPE,
	TRIGGER_TYPE,
	EXAMPLES_DIR,
	credentialEntry,
	importCredentials,
	importWorkflows,
	publishWorkflowCli,
	exampleWorkflows,
	sha,
	request,
	N8nRestClient,
	unflattenExecutionData,
};
