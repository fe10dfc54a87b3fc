// A fresh n8n user folder (dev tooling, never shipped): the environment to run n8n in it, and
// N8nHome, that folder with this package installed as a community package, credentials and
// workflows imported with n8n's CLI, and workflows run with `n8n execute` or `n8n start`.
// Also where `npm start` keeps its own user folder (startHomeFolder), and carrying over the one an
// earlier version kept in the runtime cache (carryOverStartHome).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { parse as parseFlatted } from 'flatted';

import { cleanEnv, withPathFirst } from './childEnv.cts';
import { installPackageTarball } from './communityPackage.cts';
import { importCredentials, importWorkflows } from './imports.cts';
import {
	ensureRuntime,
	locateRuntime,
	runtimeCacheFolder,
	type N8nRuntime,
	type RuntimeLine,
} from './install.cts';
import type { RunningPostgres } from './postgres.cts';
import { executeWorkflow, findFreePort, runN8nCli, startN8n, type RunningN8n } from './run.cts';
import { RunResult, type Json } from './workflow.cts';

export const OWNER_EMAIL = 'owner@companion-push.example.com';
/** The owner's password of the tests' throwaway homes. `npm start`'s kept home has its own, made for it. */
export const OWNER_PASSWORD = 'CompanionPush-Owner-1';
/** bcrypt hashes made so far, by password (hashing takes a moment). */
const ownerPasswordHashes = new Map<string, string>();

/**
 * `npm start`'s n8n user folder: the builder's owner, credentials, workflows, executions and mails.
 * A data folder, not the runtime's cache folder, so that clearing the cache or a new runtime keeps
 * them: $XDG_DATA_HOME/n8n-nodes-companion-push/n8n-home, by default under ~/.local/share.
 */
export function startHomeFolder(): string {
	const dataHome = process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
	return path.join(dataHome, 'n8n-nodes-companion-push', 'n8n-home');
}

/**
 * `npm start -- --fresh`: removes a user folder that `npm start` made (it holds the owner's password
 * file), or an empty one. Any other folder given with `--home` (a typo, a home directory, a project)
 * is left as it is, with an error that names it: --fresh deletes everything in it.
 */
export function removeStartHome(home: string): void {
	if (!fs.existsSync(home)) return;
	const madeByStart = fs.existsSync(path.join(home, 'owner-password'));
	if (!madeByStart && fs.readdirSync(home).length > 0)
		throw new Error(
			`--fresh: ${home} is not a user folder npm start made (it has no owner-password file), so it was not removed. Give --home a folder of its own, or remove it yourself.`,
		);
	fs.rmSync(home, { recursive: true, force: true });
}

/** When a user folder was last used: its database's change, else the folder's own. */
function lastUsed(folder: string): number {
	for (const file of [path.join(folder, '.n8n', 'database.sqlite'), folder]) {
		try {
			return fs.statSync(file).mtimeMs;
		} catch {
			// not there: the next one
		}
	}
	return 0;
}

/**
 * Earlier versions of `npm start` kept the user folder inside a runtime folder of the cache
 * (<cache>/runtime-<key>/n8n-home), where a new runtime or a cleared cache lost it. When `home` does
 * not exist yet, moves the most recently used of those there (across file systems: copied under a
 * temporary name, renamed, then the old one removed, so an interrupted copy is never taken for the
 * folder). Returns where it came from and the older ones left in place, or undefined.
 */
export function carryOverStartHome(home: string): { from: string; leftOver: string[] } | undefined {
	if (fs.existsSync(home)) return undefined;
	const cache = runtimeCacheFolder();
	let runtimes: string[] = [];
	try {
		runtimes = fs.readdirSync(cache).filter((name) => name.startsWith('runtime-'));
	} catch {
		return undefined;
	}
	const homes = runtimes
		.map((name) => path.join(cache, name, 'n8n-home'))
		.filter((folder) => fs.existsSync(folder))
		.sort((a, b) => lastUsed(b) - lastUsed(a));
	if (homes.length === 0) return undefined;
	const [from, ...leftOver] = homes;
	fs.mkdirSync(path.dirname(home), { recursive: true });
	try {
		fs.renameSync(from, home);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
		const partial = `${home}.partial`;
		fs.rmSync(partial, { recursive: true, force: true });
		fs.cpSync(from, partial, { recursive: true, preserveTimestamps: true });
		fs.renameSync(partial, home);
		fs.rmSync(from, { recursive: true, force: true });
	}
	return { from, leftOver };
}

/**
 * Makes a fresh temp N8N_USER_FOLDER and the full environment to run n8n in it: isolated, quiet,
 * offline, bound to 127.0.0.1, sqlite, the owner set from the environment, Node 24 first on PATH.
 */
export function createN8nHome({
	port = 5678,
	brokerPort = port + 1,
	runtime = locateRuntime(),
	extraEnv = {},
	ownerPassword = OWNER_PASSWORD,
}: {
	port?: number;
	brokerPort?: number;
	runtime?: N8nRuntime;
	extraEnv?: Record<string, string>;
	ownerPassword?: string;
} = {}): {
	userFolder: string;
	env: Record<string, string>;
} {
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-n8n-'));
	// A bcrypt hash made with n8n's own bcryptjs.
	let ownerPasswordHash = ownerPasswordHashes.get(ownerPassword);
	if (!ownerPasswordHash) {
		ownerPasswordHash = createRequire(path.join(runtime.n8nBin, '..', '..', 'package.json'))(
			'bcryptjs',
		).hashSync(ownerPassword, 10) as string;
		ownerPasswordHashes.set(ownerPassword, ownerPasswordHash);
	}
	const loopback = `http://127.0.0.1:${port}/`;
	const env = {
		...withPathFirst(cleanEnv(), path.dirname(runtime.nodeBin)),
		N8N_USER_FOLDER: userFolder,
		N8N_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
		DB_TYPE: 'sqlite',
		// Loopback only.
		N8N_HOST: '127.0.0.1',
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_PORT: String(port),
		N8N_PROTOCOL: 'http',
		N8N_SECURE_COOKIE: 'false',
		N8N_WEBHOOK_URL: loopback,
		N8N_EDITOR_BASE_URL: loopback,
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		// Today's defaults, set explicitly so that n8n does not print deprecation notices about them.
		N8N_RUNNERS_TASK_TIMEOUT: '300',
		N8N_COMPRESSION_NODE_MAX_DECOMPRESSED_SIZE_BYTES: String(2 * 1024 ** 3),
		N8N_COMPRESSION_NODE_MAX_ZIP_ENTRIES: '5000',
		// Quiet and offline.
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
		N8N_AI_ENABLED: 'false',
		EXTERNAL_FRONTEND_HOOKS_URLS: '',
		// n8n 1.x refuses to start on a module name it does not know ('Unknown module "mcp-registry"').
		...(runtime.line === '1.x' ? {} : { N8N_DISABLED_MODULES: 'mcp-registry' }),
		// This package is an unverified community package, installed by hand.
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
		N8N_REINSTALL_MISSING_PACKAGES: 'false',
		// `n8n execute --rawOutput` prints its result at info level; warn would hide it.
		N8N_LOG_LEVEL: 'info',
		N8N_LOG_OUTPUT: 'console',
		// Owner without a setup screen.
		N8N_INSTANCE_OWNER_MANAGED_BY_ENV: 'true',
		N8N_INSTANCE_OWNER_EMAIL: OWNER_EMAIL,
		N8N_INSTANCE_OWNER_PASSWORD_HASH: ownerPasswordHash,
		N8N_INSTANCE_OWNER_FIRST_NAME: 'Companion',
		N8N_INSTANCE_OWNER_LAST_NAME: 'Owner',
		...extraEnv,
	};
	return { userFolder, env };
}

export interface N8nHomeOptions {
	/** The `npm pack` tarball of this package, installed as n8n installs a community package. */
	tarball: string;
	/** The n8n release line (default 2.x); its runtime is installed first when not cached yet (4 to 7 minutes, once). */
	line?: RuntimeLine;
	/** More environment for n8n (e.g. NODE_EXTRA_CA_CERTS for an https sandbox). */
	extraEnv?: Record<string, string>;
	/** A Postgres for n8n's database instead of its own SQLite. */
	postgres?: RunningPostgres;
	/**
	 * Where execute() reads a run: 'database' (default), the run n8n saved (the CLI prints a run through
	 * its logger and exits, and under load the end of a large run, several MB, can be lost on the way);
	 * 'output', the run `n8n execute --rawOutput` printed, with that output kept in the result.
	 */
	runsFrom?: 'database' | 'output';
	/** How long a run of execute() may take (default 10 minutes). */
	runTimeoutMs?: number;
	log?: (line: string) => void;
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

/** A fresh, isolated n8n user folder with the package installed, on SQLite or on a given Postgres. */
export class N8nHome {
	/** Use N8nHome.create(). */
	constructor(
		readonly userFolder: string,
		readonly env: Record<string, string>,
		readonly port: number,
		readonly runtime: N8nRuntime,
		protected readonly options: N8nHomeOptions,
	) {}

	static async create(options: N8nHomeOptions): Promise<N8nHome> {
		const { line = '2.x', extraEnv = {}, postgres, log = () => undefined } = options;
		const runtime = await ensureRuntime({ line, log });
		const port = await findFreePort();
		const brokerPort = await findFreePort();
		const { userFolder, env } = createN8nHome({
			port,
			brokerPort,
			runtime,
			extraEnv: { ...extraEnv, ...postgres?.n8nEnv },
		});
		installPackageTarball(userFolder, options.tarball);
		return new this(userFolder, env, port, runtime, options);
	}

	/** `n8n import:credentials` of plain entries (see credentialEntry); an existing id is replaced. */
	importCredentials = (entries: object[]) =>
		importCredentials(this.env, entries, { runtime: this.runtime });

	/** `n8n import:workflow`; an existing id is replaced. */
	importWorkflows = (workflows: object[]) =>
		importWorkflows(this.env, workflows, { runtime: this.runtime });

	/** `n8n execute --id=<id>`, the run read where the options say; `durationMs` is the CLI's whole time. */
	async execute(
		workflowId: string,
		{
			timeoutMs = this.options.runTimeoutMs ?? 600_000,
			onSpawn,
		}: { timeoutMs?: number; onSpawn?: (pid: number) => void } = {},
	): Promise<RunResult> {
		if (this.options.runsFrom === 'output') {
			const { result, run } = await executeWorkflow(this.env, workflowId, timeoutMs, {
				runtime: this.runtime,
				onSpawn,
			});
			return new RunResult(result.code, run as Json, result.stdout, result.durationMs);
		}
		const before = await this.lastExecution();
		const result = await runN8nCli(this.env, ['execute', `--id=${workflowId}`], {
			timeoutMs,
			runtime: this.runtime,
			onSpawn,
		});
		const execution = await this.lastExecution();
		if (!execution || execution.id === before?.id) {
			const output = `${result.stdout.slice(-1500)}\n${result.stderr.slice(-1500)}`.trim();
			throw new Error(
				`n8n execute --id=${workflowId} saved no execution (exit ${result.code}${result.timedOut ? ', timed out' : ''}):\n${output}`,
			);
		}
		const run = { status: execution.status, data: parseFlatted(execution.data) as Json };
		return new RunResult(result.code, run, '', result.durationMs);
	}

	/** `n8n start` in this folder; resolves once /healthz/readiness answers 200. */
	async start({ onOutput }: { onOutput?: (chunk: string) => void } = {}): Promise<RunningN8n> {
		return await startN8n(this.env, { runtime: this.runtime, onOutput });
	}

	remove(): void {
		fs.rmSync(this.userFolder, { recursive: true, force: true });
	}

	/** The newest execution in this n8n's database: its id, status and data (as n8n stores it, flatted). */
	private async lastExecution(): Promise<{ id: string; status: string; data: string } | undefined> {
		const { postgres } = this.options;
		if (postgres) {
			const rows = await postgres.psql(
				'select e.id, e.status, d.data from execution_entity e join execution_data d on d."executionId" = e.id order by e.id desc limit 1',
			);
			return rows.length ? { id: rows[0][0], status: rows[0][1], data: rows[0][2] } : undefined;
		}
		const database = path.join(this.userFolder, '.n8n', 'database.sqlite');
		if (!fs.existsSync(database)) return undefined;
		const { stdout } = await promisify(execFile)(
			this.runtime.nodeBin,
			['-e', SQLITE_LAST_EXECUTION, database],
			{
				cwd: this.runtime.runtimeDir,
				maxBuffer: 512 * 1024 * 1024,
			},
		);
		const row = JSON.parse(stdout) as { id: number; status: string; data: string } | null;
		return row ? { id: String(row.id), status: row.status, data: row.data } : undefined;
	}
}
