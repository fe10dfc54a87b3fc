/**
 * The real n8n 2.41.1 the benchmark's real-n8n cases run in (scripts/n8n-runtime, cached under
 * ~/.cache/n8n-nodes-companion-push): this checkout built and packed, installed as n8n installs a
 * community package into a fresh user folder, credentials and workflows imported with n8n's CLI,
 * runs with `n8n execute --id`. A run's data is read from n8n's database afterwards, not from the
 * CLI's output: n8n prints it through its logger and exits, and under load the end of a large run
 * (several MB) can be lost on the way.
 */
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { parse as parseFlatted } from 'flatted';

import type { IDataObject } from 'n8n-workflow';

import { RunResult } from '../devkit/n8nWorkflow';
import { createN8nHome, ensureRuntime, findFreePort, installPackageTarball, packPackage, runN8nCli, type N8nRuntime } from '../scripts/n8n-runtime';
import { importCredentials, importWorkflows } from '../scripts/n8n-preload';
import type { RunningPostgres } from '../scripts/postgres';

const run = promisify(execFile);

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

/** The newest execution in an n8n's SQLite database (the runtime's own sqlite3 module, under its Node). */
const SQLITE_LAST_EXECUTION = `
const sqlite3 = require('sqlite3');
const db = new sqlite3.Database(process.argv[1], sqlite3.OPEN_READONLY);
db.get('select e.id, e.status, d.data from execution_entity e join execution_data d on d.executionId = e.id order by e.id desc limit 1', (error, row) => {
	if (error) throw error;
	process.stdout.write(JSON.stringify(row ?? null));
	db.close();
});`;

/** A fresh n8n user folder with the package installed, on SQLite or on a given Postgres. */
export class BenchN8n {
	private constructor(
		readonly userFolder: string,
		readonly env: Record<string, string>,
		private readonly runtime: N8nRuntime,
		private readonly postgres?: RunningPostgres,
	) {}

	/** Installs the runtime first if it is not cached yet (4 to 7 minutes, once). `extraEnv`: e.g. NODE_EXTRA_CA_CERTS. */
	static async create({
		tarball,
		extraEnv = {},
		postgres,
		log = () => undefined,
	}: {
		tarball: string;
		extraEnv?: Record<string, string>;
		postgres?: RunningPostgres;
		log?: (line: string) => void;
	}): Promise<BenchN8n> {
		const runtime = await ensureRuntime({ log });
		const port = await findFreePort();
		const brokerPort = await findFreePort();
		const { userFolder, env } = createN8nHome({ port, brokerPort, runtime, extraEnv: { ...extraEnv, ...postgres?.n8nEnv } });
		installPackageTarball(userFolder, tarball);
		return new BenchN8n(userFolder, env, runtime, postgres);
	}

	importCredentials = (entries: object[]) => importCredentials(this.env, entries, { runtime: this.runtime, timeoutMs: 180_000 });
	importWorkflows = (workflows: IDataObject[]) => importWorkflows(this.env, workflows, { runtime: this.runtime, timeoutMs: 180_000 });

	/** `n8n execute --id=<id>`, its run read from the database; `durationMs` is the CLI's whole time. */
	async execute(workflowId: string, { timeoutMs = 600_000, onSpawn }: { timeoutMs?: number; onSpawn?: (pid: number) => void } = {}): Promise<RunResult> {
		const before = await this.lastExecution();
		const result = await runN8nCli(this.env, ['execute', `--id=${workflowId}`], { timeoutMs, runtime: this.runtime, onSpawn });
		const execution = await this.lastExecution();
		if (!execution || execution.id === before?.id) {
			const output = `${result.stdout.slice(-1500)}\n${result.stderr.slice(-1500)}`.trim();
			throw new Error(`n8n execute --id=${workflowId} saved no execution (exit ${result.code}${result.timedOut ? ', timed out' : ''}):\n${output}`);
		}
		const run = { status: execution.status, data: parseFlatted(execution.data) as IDataObject };
		return new RunResult(result.code, run, '', result.durationMs);
	}

	/** The newest execution in this n8n's database: its id, status and data (as n8n stores it, flatted). */
	private async lastExecution(): Promise<{ id: string; status: string; data: string } | undefined> {
		if (this.postgres) {
			const rows = await this.postgres.psql('select e.id, e.status, d.data from execution_entity e join execution_data d on d."executionId" = e.id order by e.id desc limit 1');
			return rows.length ? { id: rows[0][0], status: rows[0][1], data: rows[0][2] } : undefined;
		}
		const database = path.join(this.userFolder, '.n8n', 'database.sqlite');
		if (!fs.existsSync(database)) return undefined;
		const { stdout } = await run(this.runtime.nodeBin, ['-e', SQLITE_LAST_EXECUTION, database], {
			cwd: this.runtime.runtimeDir,
			maxBuffer: 512 * 1024 * 1024,
		});
		const row = JSON.parse(stdout) as { id: number; status: string; data: string } | null;
		return row ? { id: String(row.id), status: row.status, data: row.data } : undefined;
	}

	remove(): void {
		fs.rmSync(this.userFolder, { recursive: true, force: true });
	}
}
