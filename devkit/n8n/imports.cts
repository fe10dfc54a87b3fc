// What `npm start`, the end-to-end tests and the benchmark put into a real n8n: the Companion Push
// API credential and workflows (the examples of examples/ among them), imported with n8n's own CLI.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { runN8nCli, type CliResult } from './run.cts';
import type { N8nRuntime } from './install.cts';

const EXAMPLES_DIR = path.resolve(__dirname, '..', '..', 'examples');
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
export function credentialEntry(
	{ baseUrl, clientId, clientSecret, refreshToken }: CredentialValues,
	{ id = CREDENTIAL_ID, name = CREDENTIAL_NAME } = {},
) {
	return {
		id,
		name,
		type: 'companionPushApi',
		data: {
			baseUrl,
			clientId,
			clientSecret,
			refreshToken,
			accessToken: '',
			accessTokenRenewAfter: 0,
		},
	};
}

/** Runs n8n's CLI on a JSON file written into the user folder, removed afterwards (it may hold secrets). */
async function importJson(
	env: Env,
	command: string,
	value: unknown,
	options?: CliOptions,
): Promise<CliResult> {
	const dir = fs.mkdtempSync(path.join(env.N8N_USER_FOLDER, 'import-'));
	const file = path.join(dir, 'import.json');
	try {
		fs.writeFileSync(file, JSON.stringify(value, null, 2), { mode: 0o600 });
		const result = await runN8nCli(env, [command, `--input=${file}`], options);
		if (
			result.code === 0 &&
			!result.timedOut &&
			/Successfully imported/.test(result.stdout + result.stderr)
		)
			return result;
		const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n');
		throw new Error(
			`n8n ${command} failed (exit ${result.code}${result.timedOut ? ', timed out' : ''}):\n${output}`,
		);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** `n8n import:credentials` of plain entries (see credentialEntry); an existing id is replaced. */
export const importCredentials = (env: Env, entries: object[], options?: CliOptions) =>
	importJson(env, 'import:credentials', entries, options);

/** `n8n import:workflow` of workflow objects; an existing id is replaced. */
export const importWorkflows = (env: Env, workflows: object[], options?: CliOptions) =>
	importJson(env, 'import:workflow', workflows, options);

/** The example workflows of examples/*.json, by file name, in name order. */
export function exampleWorkflows(): { file: string; workflow: any }[] {
	return fs
		.readdirSync(EXAMPLES_DIR)
		.filter((file) => file.endsWith('.json'))
		.sort()
		.map((file) => ({
			file,
			workflow: JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')),
		}));
}
