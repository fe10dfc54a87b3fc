import { spawn, type ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import getPort from 'get-port';

import { locateRuntime, type N8nRuntime } from './install';

type Env = Record<string, string>;

export interface CliResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	timedOut: boolean;
	durationMs: number;
}

export interface RunningN8n {
	process: ChildProcess;
	url: string;
	port: number;
	output(): string;
	stop(options?: { timeoutMs?: number }): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (`wanted` when it is free); never the same one twice within 15 s. */
export const findFreePort = (wanted?: number): Promise<number> => getPort({ host: '127.0.0.1', port: wanted });

/** Signals n8n's process group (n8n and its task runners); false when none of it is left. */
function killGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
	try {
		process.kill(-pid, signal);
		return true;
	} catch {
		return false;
	}
}

/** `n8n <args>` under the runtime's Node 24, in its own process group, killed if this process exits first. */
function spawnN8n(runtime: N8nRuntime, env: Env, args: string[], cwd = env.N8N_USER_FOLDER ?? os.tmpdir()) {
	const child = spawn(runtime.nodeBin, [runtime.n8nBin, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
	const pid = child.pid as number;
	const killOnExit = () => killGroup(pid, 'SIGKILL');
	process.on('exit', killOnExit);
	child.on('close', () => process.removeListener('exit', killOnExit));
	return { child, pid };
}

/** Runs `n8n <args>` to its end, then kills what is left of its group (task runners). */
export function runN8nCli(env: Env, args: string[], { timeoutMs = 180_000, cwd, runtime = locateRuntime() }: { timeoutMs?: number; cwd?: string; runtime?: N8nRuntime } = {}): Promise<CliResult> {
	const started = Date.now();
	const { child, pid } = spawnN8n(runtime, env, args, cwd);
	const result = { stdout: '', stderr: '', timedOut: false };
	child.stdout?.setEncoding('utf8').on('data', (chunk) => (result.stdout += chunk));
	child.stderr?.setEncoding('utf8').on('data', (chunk) => (result.stderr += chunk));
	const timer = setTimeout(() => {
		result.timedOut = true;
		killGroup(pid, 'SIGTERM');
		setTimeout(() => killGroup(pid, 'SIGKILL'), 5000).unref();
	}, timeoutMs);
	return new Promise((resolve, reject) => {
		child.on('error', (error) => {
			clearTimeout(timer);
			reject(error);
		});
		child.on('close', (code, signal) => {
			clearTimeout(timer);
			killGroup(pid, 'SIGKILL');
			resolve({ code, signal, ...result, durationMs: Date.now() - started });
		});
	});
}

/** The run printed by `n8n execute --rawOutput`: the JSON from the line that is exactly `{` to the last `}` (log lines come first). */
export function parseRawOutput(stdout: string): any {
	const lines = stdout.split('\n');
	const first = lines.findIndex((line) => line.replace(/\r$/, '') === '{');
	if (first === -1) throw new Error(`No JSON result in n8n's output:\n${stdout.slice(-2000)}`);
	const text = lines.slice(first).join('\n');
	return JSON.parse(text.slice(0, text.lastIndexOf('}') + 1));
}

/** The HTTP status of a GET, or 0 when nothing answers. */
const statusOf = (url: string) =>
	fetch(url, { signal: AbortSignal.timeout(2000) }).then(
		async (response) => {
			await response.body?.cancel();
			return response.status;
		},
		() => 0,
	);

/** Spawns `n8n start` and resolves once GET /healthz/readiness answers 200. */
export async function startN8n(
	env: Env,
	{ readyTimeoutMs = 120_000, runtime = locateRuntime(), onOutput }: { readyTimeoutMs?: number; runtime?: N8nRuntime; onOutput?: (chunk: string) => void } = {},
): Promise<RunningN8n> {
	const port = Number(env.N8N_PORT || 5678);
	const url = `http://127.0.0.1:${port}`;
	if ((await statusOf(`${url}/healthz`)) !== 0) throw new Error(`Port ${port} on 127.0.0.1 is already in use.`);

	const { child, pid } = spawnN8n(runtime, env, ['start']);
	let output = '';
	const collect = (chunk: string) => {
		output += chunk;
		if (output.length > 2_000_000) output = output.slice(-1_000_000);
		onOutput?.(chunk);
	};
	child.stdout?.setEncoding('utf8').on('data', collect);
	child.stderr?.setEncoding('utf8').on('data', collect);
	let exit: string | undefined;
	const closed = new Promise<void>((resolve) =>
		child.on('close', (code, signal) => {
			exit = String(code ?? signal);
			resolve();
		}),
	);

	let stopping: Promise<void> | undefined;
	const stop = ({ timeoutMs = 30_000 } = {}) =>
		(stopping ??= (async () => {
			killGroup(pid, 'SIGTERM');
			const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), timeoutMs);
			await closed;
			clearTimeout(timer);
			// Whatever is left in the group (task runners) goes too.
			for (let i = 0; i < 50 && killGroup(pid, 0); i++) {
				if (i === 10) killGroup(pid, 'SIGKILL');
				await sleep(100);
			}
		})());

	const deadline = Date.now() + readyTimeoutMs;
	while ((await statusOf(`${url}/healthz/readiness`)) !== 200) {
		if (exit !== undefined) throw new Error(`n8n start exited (${exit}) before it was ready:\n${output.slice(-4000)}`);
		if (Date.now() > deadline) {
			await stop();
			throw new Error(`n8n start was not ready within ${readyTimeoutMs} ms:\n${output.slice(-4000)}`);
		}
		await sleep(250);
	}
	return { process: child, url, port, output: () => output, stop };
}
