/**
 * `npm start` (plain and --queue) run as a user runs it, for start.e2e.cts and start-queue.e2e.cts:
 * the process and its output, the wait for its ready block, what it imported for the examples, and
 * whether a port it printed is free again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

import {
	ERP_WEBHOOK_HEADER,
	SECRET_FILES,
	keptExampleTriggerSecrets,
	erpWebhookHeaders,
} from '../../../devkit/exampleTriggers.cts';
import { waitFor } from '../../../devkit/waitFor.cts';
import type { N8nRestClient } from '../../../devkit/n8n/index.cts';

const ROOT = path.resolve(__dirname, '..', '..', '..');

export interface Started {
	child: ChildProcess;
	output: () => string;
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `node scripts/start.js <args>`, or with `throughNpm` `npm start -- <args>` (npm's own process). */
export function runStart(
	args: string[],
	env: Record<string, string | undefined> = {},
	{ throughNpm = false } = {},
): Started {
	const [command, commandArgs] = throughNpm
		? ['npm', ['start', '--silent', '--', ...args]]
		: [process.execPath, [path.join(ROOT, 'scripts', 'start.js'), ...args]];
	const child = spawn(command, commandArgs, {
		cwd: ROOT,
		env: { ...process.env, ...env },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
	child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
		child.on('close', (code, signal) => resolve({ code, signal })),
	);
	return { child, output: () => output, exited };
}

/** The editor URL of the ready block ("n8n is ready: ..." or, with `queue`, "n8n is ready (queue
 * mode): ..."), once the whole block is out; throws with the output when the start exits first. */
export async function ready(started: Started, { queue = false } = {}): Promise<string> {
	const heading = queue ? 'n8n is ready \\(queue mode\\): ' : 'n8n is ready: ';
	// The whole ready block, to its last line: it reaches this process in several chunks.
	const pattern = new RegExp(
		`${heading}(http://127\\.0\\.0\\.1:\\d+)[\\s\\S]*\\nCtrl-C to stop\\.`,
	);
	return await waitFor(
		`"n8n is ready" from npm start${queue ? ' -- --queue' : ''}`,
		() => {
			if (started.child.exitCode !== null)
				throw new Error(`npm start exited (${started.child.exitCode}):\n${started.output()}`);
			return pattern.exec(started.output())?.[1];
		},
		180_000,
		250,
	);
}

/** Stops a start a test left running (SIGTERM, SIGKILL after 30 s), so the next finds its ports free. */
export async function stopLeftRunning(started: Started | undefined): Promise<void> {
	if (!started || started.child.exitCode !== null) return;
	started.child.kill('SIGTERM');
	await Promise.race([started.exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
	if (started.child.exitCode === null) started.child.kill('SIGKILL');
	await started.exited;
}

export function portIsFree(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const server = net.createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

/**
 * The credentials npm start imports for the examples (the API's, the scripted model's, the mail
 * server's, the ERP webhook's and the alert form's), checked in n8n: the mail credential points at
 * the mail server the start printed, and that server listens; the trigger secrets are kept in
 * `secretsFolder`. Returns the printed mail port and model URL, and the ERP webhook's header.
 */
export async function expectExampleCredentials(
	rest: N8nRestClient,
	output: string,
	secretsFolder: string,
): Promise<{ mailPort: number; modelUrl: string; erpHeaders: Record<string, string> }> {
	const credentials = await rest.listCredentials();
	expect(credentials.map((credential) => [credential.id, credential.type]).sort()).toEqual([
		['cpExampleAlertFormAuth', 'httpBasicAuth'],
		['cpExampleErpWebhookAuth', 'httpHeaderAuth'],
		['cpExampleSmtp', 'smtp'],
		['cpFakeModelCredential', 'openAiApi'],
		['cpSandboxCredential', 'companionPushApi'],
	]);
	const mailPort = Number(/Mail: +smtp:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1]);
	const mailCredential = await rest.call('GET', '/credentials/cpExampleSmtp?includeData=true');
	expect([mailCredential.data.host, mailCredential.data.port]).toEqual(['127.0.0.1', mailPort]);
	expect(await portIsFree(mailPort)).toBe(false);
	const modelUrl = /AI model: +(http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(output)![1];
	// The secrets of the ERP webhook and the alert form: made for this start's folder, readable by
	// their owner only, never on the console (the printed curl reads the webhook's from its file).
	for (const file of Object.values(SECRET_FILES)) {
		const kept = path.join(secretsFolder, file);
		expect(fs.statSync(kept).mode & 0o777).toBe(0o600);
		const secret = fs.readFileSync(kept, 'utf8').trim();
		expect(secret.length).toBeGreaterThanOrEqual(32);
		expect(output).not.toContain(secret);
	}
	expect(output).toContain(
		`-H "${ERP_WEBHOOK_HEADER}: $(cat '${path.join(secretsFolder, SECRET_FILES.erpWebhookSecret)}')"`,
	);
	const erpHeaders = erpWebhookHeaders(keptExampleTriggerSecrets(secretsFolder));
	return { mailPort, modelUrl, erpHeaders };
}
