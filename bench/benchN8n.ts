/**
 * The real n8n 2.41.1 the benchmark's real-n8n cases run in (scripts/n8n-runtime, cached under
 * ~/.cache/n8n-nodes-companion-push): this checkout built and packed, installed as n8n installs a
 * community package into a fresh user folder, credentials and workflows imported with n8n's CLI,
 * runs with `n8n execute --id --rawOutput`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { RunResult } from '../devkit/n8nWorkflow';
import { createN8nHome, ensureRuntime, executeWorkflow, findFreePort, installPackageTarball, packPackage, type N8nRuntime } from '../scripts/n8n-runtime';
import { importCredentials, importWorkflows } from '../scripts/n8n-preload';

const ROOT = path.resolve(__dirname, '..');

/** `npm run build` (unless `build` is false: the dist/ there is packed), then `npm pack`; the tarball's path. */
export function packCheckout({ build = true, log = () => undefined }: { build?: boolean; log?: (line: string) => void } = {}): string {
	if (build) {
		log('npm run build');
		const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
		if (built.status !== 0) throw new Error('npm run build failed');
	}
	const tarball = packPackage();
	log(`packed ${path.basename(tarball)}`);
	return tarball;
}

/** A fresh n8n user folder with the package installed. */
export class BenchN8n {
	private constructor(
		readonly userFolder: string,
		readonly env: Record<string, string>,
		private readonly runtime: N8nRuntime,
	) {}

	/** Installs the runtime first if it is not cached yet (4 to 7 minutes, once). `extraEnv`: e.g. a database, NODE_EXTRA_CA_CERTS. */
	static async create({ tarball, extraEnv = {}, log = () => undefined }: { tarball: string; extraEnv?: Record<string, string>; log?: (line: string) => void }): Promise<BenchN8n> {
		const runtime = await ensureRuntime({ log });
		const port = await findFreePort();
		const brokerPort = await findFreePort();
		const { userFolder, env } = createN8nHome({ port, brokerPort, runtime, extraEnv });
		installPackageTarball(userFolder, tarball);
		return new BenchN8n(userFolder, env, runtime);
	}

	importCredentials = (entries: object[]) => importCredentials(this.env, entries, { runtime: this.runtime, timeoutMs: 180_000 });
	importWorkflows = (workflows: IDataObject[]) => importWorkflows(this.env, workflows, { runtime: this.runtime, timeoutMs: 180_000 });

	/** `n8n execute --id=<id> --rawOutput`, parsed; `durationMs` is the CLI's whole time. */
	async execute(workflowId: string, { timeoutMs = 600_000, onSpawn }: { timeoutMs?: number; onSpawn?: (pid: number) => void } = {}): Promise<RunResult> {
		const { result, run } = await executeWorkflow(this.env, workflowId, timeoutMs, { runtime: this.runtime, onSpawn });
		return new RunResult(result.code, run as IDataObject, result.stdout, result.durationMs);
	}

	remove(): void {
		fs.rmSync(this.userFolder, { recursive: true, force: true });
	}
}
