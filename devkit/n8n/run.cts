// n8n's CLI and `n8n start` under the runtime's Node (dev tooling, never shipped), each in its own
// process group so that its task runners end with it; free ports.
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import getPort from 'get-port';

import { locateRuntime, type N8nRuntime } from './install.cts';

type Env = Record<string, string>;
export type CliResult = Awaited<ReturnType<typeof runN8nCli>>;
export type RunningN8n = Awaited<ReturnType<typeof startN8n>>;

/** A free TCP port on 127.0.0.1 (`wanted` when it is free); never the same one twice within 15 s. */
export const findFreePort = (wanted?: number): Promise<number> =>
	getPort({ host: '127.0.0.1', port: wanted });

/** Signals a process group (n8n and its task runners), or one process when `group` is false; false
 * when nothing of it is left. */
export function kill(pid: number, signal: NodeJS.Signals | 0, group = true): boolean {
	try {
		return process.kill(group ? -pid : pid, signal);
	} catch {
		return false;
	}
}

/** `n8n <args>` under the runtime's Node 24, in its own process group, killed if this process exits first. */
function spawnN8n(runtime: N8nRuntime, env: Env, args: string[]) {
	const child = spawn(runtime.nodeBin, [runtime.n8nBin, ...args], {
		cwd: env.N8N_USER_FOLDER ?? os.tmpdir(),
		env,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	const pid = child.pid as number;
	child.stdout.setEncoding('utf8');
	child.stderr.setEncoding('utf8');
	const killOnExit = () => kill(pid, 'SIGKILL');
	process.on('exit', killOnExit);
	const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
		(resolve, reject) => {
			child.on('error', reject).on('close', (code, signal) => {
				process.removeListener('exit', killOnExit);
				resolve({ code, signal });
			});
		},
	);
	return { child, pid, closed };
}

/** Runs `n8n <args>` to its end (SIGKILL after timeoutMs), then kills what is left of its group (task
 * runners). `onSpawn` gets n8n's process id as it starts (to watch the process meanwhile). */
export async function runN8nCli(
	env: Env,
	args: string[],
	{
		timeoutMs = 180_000,
		runtime = locateRuntime(),
		onSpawn,
	}: { timeoutMs?: number; runtime?: N8nRuntime; onSpawn?: (pid: number) => void } = {},
) {
	const started = Date.now();
	const { child, pid, closed } = spawnN8n(runtime, env, args);
	onSpawn?.(pid);
	const output = { stdout: '', stderr: '', timedOut: false };
	child.stdout.on('data', (chunk) => (output.stdout += chunk));
	child.stderr.on('data', (chunk) => (output.stderr += chunk));
	const timer = setTimeout(() => {
		output.timedOut = true;
		kill(pid, 'SIGKILL');
	}, timeoutMs);
	const { code, signal } = await closed.finally(() => clearTimeout(timer));
	kill(pid, 'SIGKILL');
	return { code, signal, ...output, durationMs: Date.now() - started };
}

/** The run printed by `n8n execute --rawOutput`: the JSON from the line that is exactly `{` to the last `}` (log lines come first). */
export function parseRawOutput(stdout: string): any {
	const lines = stdout.split('\n');
	const first = lines.findIndex((line) => line.replace(/\r$/, '') === '{');
	if (first === -1) throw new Error(`No JSON result in n8n's output:\n${stdout.slice(-2000)}`);
	const text = lines.slice(first).join('\n');
	return JSON.parse(text.slice(0, text.lastIndexOf('}') + 1));
}

/** `n8n execute --id=<id> --rawOutput`: the CLI's result and the run it printed (an error that shows
 * the output when it printed none). */
export async function executeWorkflow(
	env: Env,
	workflowId: string,
	timeoutMs: number,
	{
		runtime = locateRuntime(),
		onSpawn,
	}: { runtime?: N8nRuntime; onSpawn?: (pid: number) => void } = {},
) {
	const result = await runN8nCli(env, ['execute', `--id=${workflowId}`, '--rawOutput'], {
		timeoutMs,
		runtime,
		onSpawn,
	});
	try {
		return { result, run: parseRawOutput(result.stdout) };
	} catch {
		throw new Error(
			`n8n execute --id=${workflowId} printed no result (exit ${result.code}${result.timedOut ? ', timed out' : ''}):\n` +
				`${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`,
		);
	}
}

/** The HTTP status of a GET, or 0 when nothing answers. */
const statusOf = (url: string) =>
	fetch(url, { signal: AbortSignal.timeout(2000) }).then(
		(response) => response.body?.cancel().then(() => response.status) ?? response.status,
		() => 0,
	);

/** Spawns `n8n start` and resolves once GET /healthz/readiness answers 200. */
export async function startN8n(
	env: Env,
	{
		readyTimeoutMs = 120_000,
		runtime = locateRuntime(),
		onOutput,
	}: { readyTimeoutMs?: number; runtime?: N8nRuntime; onOutput?: (chunk: string) => void } = {},
) {
	const port = Number(env.N8N_PORT || 5678);
	const url = `http://127.0.0.1:${port}`;
	if ((await statusOf(`${url}/healthz`)) !== 0)
		throw new Error(`Port ${port} on 127.0.0.1 is already in use.`);

	const { child, pid, closed } = spawnN8n(runtime, env, ['start']);
	let output = '';
	const collect = (chunk: string) => {
		output = output.length > 2_000_000 ? output.slice(-1_000_000) + chunk : output + chunk;
		onOutput?.(chunk);
	};
	child.stdout.on('data', collect);
	child.stderr.on('data', collect);
	let exit: string | undefined;
	closed.then(
		({ code, signal }) => (exit = String(code ?? signal)),
		(error) => (exit = error.message),
	);

	let stopping: Promise<void> | undefined;
	const stop = ({ timeoutMs = 30_000 } = {}): Promise<void> =>
		(stopping ??= (async () => {
			kill(pid, 'SIGTERM');
			const timer = setTimeout(() => kill(pid, 'SIGKILL'), timeoutMs);
			await closed.finally(() => clearTimeout(timer));
			// Task runners left in the group go too; wait (a while: this VM leaves zombies) until they are gone.
			kill(pid, 'SIGKILL');
			for (let i = 0; i < 40 && kill(pid, 0); i++) await sleep(100);
		})());

	const deadline = Date.now() + readyTimeoutMs;
	while ((await statusOf(`${url}/healthz/readiness`)) !== 200) {
		if (exit !== undefined)
			throw new Error(`n8n start exited (${exit}) before it was ready:\n${output.slice(-4000)}`);
		if (Date.now() > deadline) {
			await stop();
			throw new Error(
				`n8n start was not ready within ${readyTimeoutMs} ms:\n${output.slice(-4000)}`,
			);
		}
		await sleep(250);
	}
	return { process: child, url, port, output: () => output, stop };
}
