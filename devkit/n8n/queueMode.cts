// n8n in queue mode on this machine (dev tooling, never shipped), all on 127.0.0.1: a fresh Postgres 15
// (Debian's, run as the postgres user), a Redis, `n8n start` (main) and N `n8n worker`s of the cached
// runtime, each in its own user folder with this package installed as a community package, the same
// encryption key, the credentials and workflows imported before start. Used by test/e2e/queue-mode.e2e.cts
// and `npm start -- --queue`. Measured recipe and traps: N8N-RUNTIME.md, "Queue mode".
//
// stop() ends everything it started (process groups, pg_ctl stop, Redis, temp folders); so does this
// process's exit (synchronously: a SIGKILL of each group, Postgres and Redis, the folders removed).
// Which worker ran an execution is read off the workers' logs ("Worker started/finished execution N").
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

import { aptGet, isExecutable, onPath } from '../aptGet.cts';
import { installPackageTarball } from './communityPackage.cts';
import { createN8nHome } from './home.cts';
import { importCredentials, importWorkflows } from './imports.cts';
import { locateRuntime, type N8nRuntime } from './install.cts';
import { checkPostgres, startPostgres, type RunningPostgres } from './postgres.cts';
import { N8nRestClient, publish } from './rest.cts';
import { findFreePort, kill, runN8nCli, startN8n, type RunningN8n } from './run.cts';

type Log = (line: string) => void;
type Env = Record<string, string>;

const run = promisify(execFile);

/** `redis-server`'s path, installed with apt-get when missing (as devkit/chromium.cts installs Chromium); throws the reason when it cannot. */
export async function ensureRedis({ log = console.log }: { log?: Log } = {}): Promise<string> {
	const found = onPath('redis-server');
	if (found) return path.join(found, 'redis-server');
	const manual =
		'Queue mode needs Redis: install it with `sudo apt-get update && sudo apt-get install -y redis-server`, then run again.';
	if (!onPath('apt-get'))
		throw new Error(`redis-server is missing and this machine has no apt-get. ${manual}`);
	if (process.getuid?.() !== 0)
		throw new Error(
			`redis-server is missing and this process is not root, so it cannot install it. ${manual}`,
		);
	log(
		"[queue] redis-server is missing: installing Debian's redis-server with apt-get (about 10 s)",
	);
	try {
		await aptGet('-y', 'install', 'redis-server').catch(async () => {
			await aptGet('update');
			await aptGet('-y', 'install', 'redis-server');
		});
	} catch (error) {
		throw new Error(`Installing redis-server failed. ${manual}\n${error.message}`);
	}
	const installed =
		onPath('redis-server') ?? (isExecutable('/usr/bin/redis-server') ? '/usr/bin' : undefined);
	if (!installed)
		throw new Error(`apt-get installed redis-server but it is not on PATH. ${manual}`);
	return path.join(installed, 'redis-server');
}

export interface QueueClusterOptions {
	/** The `npm pack` tarball of this package, installed into every user folder. */
	tarball: string;
	/** Entries for `n8n import:credentials` (see imports.ts credentialEntry). */
	credentials?: object[];
	workflows?: object[];
	/** Workflow ids published through main's REST API once it is ready. */
	publish?: string[];
	workers?: number;
	/** Jobs each worker runs at once (`n8n worker --concurrency`). */
	concurrency?: number;
	/** Main's port (default: a free one). */
	port?: number;
	runtime?: N8nRuntime;
	log?: Log;
	/** Called with every chunk of output of a process ('main', 'worker-1', ...). */
	onOutput?: (name: string, chunk: string) => void;
	/** End the cluster on SIGINT/SIGTERM (default true); false when the caller handles them and calls stop(). */
	handleSignals?: boolean;
	/** Where the processes' logs go (default: the cluster's temp folder, removed on stop). */
	logDir?: string;
	/** More environment for every n8n process (e.g. NODE_EXTRA_CA_CERTS for an https sandbox). */
	extraEnv?: Env;
}

export interface ExecutionRow {
	id: string;
	workflowId: string;
	status: string;
	mode: string;
	finished: boolean;
	startedAt: string | null;
	stoppedAt: string | null;
}

interface WorkerProcess {
	name: string;
	child: ChildProcess;
	pid: number;
	healthPort: number;
	closed: Promise<void>;
	output: () => string;
}

export type QueueCluster = Awaited<ReturnType<typeof startQueueCluster>>;

/** Starts Postgres, Redis, main and the workers; see the comment at the top. */
export async function startQueueCluster(options: QueueClusterOptions) {
	const { workers: workerCount = 2, concurrency = 10, log = () => undefined, onOutput } = options;
	const runtime = options.runtime ?? locateRuntime();
	checkPostgres();
	const redisServer = await ensureRedis({ log });

	const root = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-queue-'));
	fs.chmodSync(root, 0o755); // the postgres user must reach its data folder inside
	const logDir = options.logDir ?? root;
	fs.mkdirSync(logDir, { recursive: true });
	const redisDir = path.join(root, 'redis');
	const userFolders: string[] = [];
	const groups: number[] = []; // n8n process groups (main, workers)
	let redisPidFile: string | undefined;
	let postgres: RunningPostgres | undefined;
	let stopped = false;

	/** Everything at once, synchronously: for this process's exit (Ctrl-C, a crashed test). */
	const killAllNow = () => {
		for (const pid of groups) kill(pid, 'SIGKILL');
		const redisPid =
			redisPidFile &&
			Number(fs.existsSync(redisPidFile) ? fs.readFileSync(redisPidFile, 'utf8') : 0);
		if (redisPid) kill(redisPid, 'SIGKILL', false);
		postgres?.killNow();
		for (const folder of [...userFolders, root])
			fs.rmSync(folder, { recursive: true, force: true });
	};
	process.on('exit', killAllNow);
	// Ctrl-C / SIGTERM (unless the caller handles them and calls stop(), as `npm start -- --queue` does):
	// end everything at once and exit as a process killed by the signal would (128 + its number). An
	// exit, not the signal raised again: the 'exit' listeners run, among them the one that kills a main
	// still starting (startN8n's), and a listener such as signal-exit's (proper-lockfile loads it), which
	// re-raises only when it is alone, cannot leave the process running.
	const onSignal = (signal: NodeJS.Signals) => {
		killAllNow();
		process.exit(128 + (os.constants.signals[signal] ?? 0));
	};
	if (options.handleSignals !== false) process.on('SIGINT', onSignal).on('SIGTERM', onSignal);

	const redisPort = await findFreePort();
	// Any local user could reach a Redis without one, and with it every queued execution's data.
	const redisPassword = randomBytes(18).toString('hex');
	const pgPasswordFile = path.join(logDir, 'postgres-password');
	const mainPort = options.port ?? (await findFreePort());
	const encryptionKey = randomBytes(24).toString('hex');
	let shared: Env = {
		N8N_ENCRYPTION_KEY: encryptionKey,
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(redisPort),
		QUEUE_BULL_REDIS_PASSWORD: redisPassword,
		// Manual runs go to the workers too; main then starts no task runner (saves a port and about 130 MB).
		OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
		// Main's public URL for every process (webhook URLs shown in the editor).
		N8N_WEBHOOK_URL: `http://127.0.0.1:${mainPort}/`,
		N8N_EDITOR_BASE_URL: `http://127.0.0.1:${mainPort}/`,
		...options.extraEnv,
	};

	/** A home (user folder + env) with the package installed; removed on stop. */
	const makeHome = async (extraEnv: Env, port = 5678) => {
		const home = createN8nHome({
			port,
			brokerPort: await findFreePort(),
			runtime,
			extraEnv: { ...shared, ...extraEnv },
		});
		userFolders.push(home.userFolder);
		installPackageTarball(home.userFolder, options.tarball);
		return home;
	};

	const startedOn = new Map<string, string>();
	const finishedOn = new Map<string, string>();
	let main: RunningN8n | undefined;
	let mainEnv: Env = {};
	const workers: WorkerProcess[] = [];
	let rest: N8nRestClient;
	const stop = async () => {
		if (stopped) return;
		stopped = true;
		await Promise.all([
			main?.stop(),
			...workers.map(async (worker) => {
				kill(worker.pid, 'SIGTERM');
				const timer = setTimeout(() => kill(worker.pid, 'SIGKILL'), 20_000);
				await worker.closed.finally(() => clearTimeout(timer));
				kill(worker.pid, 'SIGKILL'); // its task runner
			}),
		]);
		for (const pid of groups) kill(pid, 'SIGKILL'); // what is left: task runners, a worker that failed to start
		if (redisPidFile && fs.existsSync(redisPidFile))
			kill(Number(fs.readFileSync(redisPidFile, 'utf8')), 'SIGTERM', false);
		await postgres?.stop();
		// Redis writes nothing (--save ''); give it a moment to exit before its folder goes.
		for (let i = 0; i < 20 && redisPidFile && fs.existsSync(redisPidFile); i++) await sleep(100);
		if (logDir !== root && fs.existsSync(path.join(root, 'postgres.log')))
			fs.copyFileSync(path.join(root, 'postgres.log'), path.join(logDir, 'postgres.log'));
		process
			.removeListener('exit', killAllNow)
			.removeListener('SIGINT', onSignal)
			.removeListener('SIGTERM', onSignal);
		for (const folder of [...userFolders, root])
			fs.rmSync(folder, { recursive: true, force: true });
	};

	try {
		// Postgres: a fresh data folder owned by the postgres user, a password, on loopback only.
		postgres = await startPostgres({
			root,
			log: (line) => log(line.replace('[postgres]', '[queue] Postgres')),
		});
		shared = { ...shared, ...postgres.n8nEnv };
		// For a developer's psql: in the logs folder, readable by this user only.
		fs.writeFileSync(pgPasswordFile, postgres.n8nEnv.DB_POSTGRESDB_PASSWORD, { mode: 0o600 });

		// Redis: nothing written to disk.
		fs.mkdirSync(redisDir);
		redisPidFile = path.join(redisDir, 'redis.pid');
		// The password in a config file only this user reads (a command line is seen by every user).
		const redisConfig = path.join(redisDir, 'redis.conf');
		fs.writeFileSync(redisConfig, `requirepass ${redisPassword}\n`, { mode: 0o600 });
		await run(redisServer, [
			redisConfig,
			'--port',
			String(redisPort),
			'--bind',
			'127.0.0.1',
			'--save',
			'',
			'--appendonly',
			'no',
			'--daemonize',
			'yes',
			'--dir',
			redisDir,
			'--pidfile',
			redisPidFile,
			'--logfile',
			path.join(logDir, 'redis.log'),
		]);
		for (let i = 0; i < 50 && !fs.existsSync(redisPidFile); i++) await sleep(100);
		if (!fs.existsSync(redisPidFile))
			throw new Error(
				`Redis did not start: ${fs.readFileSync(path.join(logDir, 'redis.log'), 'utf8').slice(-2000)}`,
			);
		log(`[queue] Redis on 127.0.0.1:${redisPort}`);

		// The homes, the imports (they create n8n's schema in Postgres), then every n8n process at once.
		const mainHome = await makeHome({}, mainPort);
		mainEnv = mainHome.env;
		const workerHomes = await Promise.all(
			Array.from({ length: workerCount }, async () => {
				const healthPort = await findFreePort();
				const home = await makeHome({
					QUEUE_HEALTH_CHECK_ACTIVE: 'true',
					QUEUE_HEALTH_CHECK_PORT: String(healthPort),
					N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
				});
				return { ...home, healthPort };
			}),
		);
		const importStarted = Date.now();
		if (options.credentials?.length)
			await importCredentials(mainHome.env, options.credentials, { runtime });
		if (options.workflows?.length)
			await importWorkflows(mainHome.env, options.workflows, { runtime });
		log(
			`[queue] imported ${options.credentials?.length ?? 0} credential(s) and ${options.workflows?.length ?? 0} workflow(s) (${Date.now() - importStarted} ms)`,
		);

		const logStream = (name: string) =>
			fs.createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
		const startWorker = async (
			name: string,
			home: (typeof workerHomes)[number],
		): Promise<WorkerProcess> => {
			const child = spawn(
				runtime.nodeBin,
				[runtime.n8nBin, 'worker', `--concurrency=${concurrency}`],
				{
					cwd: home.userFolder,
					env: home.env,
					stdio: ['ignore', 'pipe', 'pipe'],
					detached: true,
				},
			);
			const pid = child.pid as number;
			groups.push(pid);
			const stream = logStream(name);
			let output = '';
			let partialLine = '';
			const collect = (chunk: string) => {
				output = output.length > 4_000_000 ? output.slice(-2_000_000) + chunk : output + chunk;
				stream.write(chunk);
				onOutput?.(name, chunk);
				// Which execution ran where, line by line as it comes (the kept output is cut when long).
				const lines = (partialLine + chunk).split('\n');
				partialLine = lines.pop() ?? '';
				for (const line of lines) {
					const match = /Worker (started|finished) execution (\d+)/.exec(line);
					if (match) (match[1] === 'started' ? startedOn : finishedOn).set(match[2], name);
				}
			};
			child.stdout!.setEncoding('utf8').on('data', collect);
			child.stderr!.setEncoding('utf8').on('data', collect);
			const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
			closed.then(() => stream.end());
			const worker = {
				name,
				child,
				pid,
				healthPort: home.healthPort,
				closed,
				output: () => output,
			};
			const deadline = Date.now() + 120_000;
			while (!/n8n worker is now ready/.test(output)) {
				if (child.exitCode !== null || child.signalCode !== null)
					throw new Error(`${name} exited before it was ready:\n${output.slice(-3000)}`);
				if (Date.now() > deadline)
					throw new Error(`${name} was not ready within 120 s:\n${output.slice(-3000)}`);
				await sleep(200);
			}
			return worker;
		};
		const startsAt = Date.now();
		const mainStream = logStream('main');
		const [startedMain, ...startedWorkers] = await Promise.allSettled([
			startN8n(mainHome.env, {
				runtime,
				onOutput: (chunk) => {
					mainStream.write(chunk);
					onOutput?.('main', chunk);
				},
			}),
			...workerHomes.map((home, index) => startWorker(`worker-${index + 1}`, home)),
		]);
		if (startedMain.status === 'fulfilled') {
			main = startedMain.value;
			groups.push(main.process.pid as number);
			main.process.on('close', () => mainStream.end());
		}
		for (const started of startedWorkers)
			if (started.status === 'fulfilled') workers.push(started.value);
		const failed = [startedMain, ...startedWorkers].find(
			(started) => started.status === 'rejected',
		);
		if (failed) throw (failed as PromiseRejectedResult).reason;
		log(
			`[queue] main on ${main!.url} and ${workers.length} workers ready (${Date.now() - startsAt} ms)`,
		);
		rest = new N8nRestClient(main!.url);
		await rest.login();
		for (const id of options.publish ?? []) await publish(rest, id);
	} catch (error) {
		// The caller gets no cluster to stop, and a jest worker's exit (the hook above) is not reliably reached.
		await stop().catch(() => undefined);
		throw error;
	}

	const running = main!;

	/** A query on n8n's Postgres database; rows of tab-separated fields. */
	const psql = (sql: string) => postgres!.psql(sql);

	/** Rows of execution_entity (of one workflow, when given), oldest first. */
	const executions = async (workflowId?: string): Promise<ExecutionRow[]> => {
		const where =
			workflowId === undefined ? '' : `where "workflowId" = '${workflowId.replace(/'/g, "''")}'`;
		const rows = await psql(
			`select id, "workflowId", status, mode, finished, "startedAt", "stoppedAt" from execution_entity ${where} order by id`,
		);
		return rows.map(([id, wf, status, mode, finished, startedAt, stoppedAt]) => ({
			id,
			workflowId: wf,
			status,
			mode,
			finished: finished === 't',
			startedAt: startedAt || null,
			stoppedAt: stoppedAt || null,
		}));
	};

	/** The highest execution id so far (0 without any): executions after it are the ones still to come. */
	const lastExecutionId = async (): Promise<number> =>
		Number((await psql('select coalesce(max(id), 0) from execution_entity'))[0][0]);

	/**
	 * Waits until the workflow has at least `count` executions (with an id above `afterId`) and none of
	 * them is new, running or waiting; returns them, oldest first. The bound only ends a wait that
	 * would never end: how fast they run is the benchmark's question (`npm run bench`, queue mode),
	 * and on a loaded 2-core machine 300 keyed events took from about 70 s to over 120 s.
	 */
	const waitForExecutions = async (
		workflowId: string,
		count: number,
		{ afterId = 0, timeoutMs = 480_000, everyMs = 500 } = {},
	): Promise<ExecutionRow[]> => {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const rows = (await executions(workflowId)).filter((row) => Number(row.id) > afterId);
			if (
				rows.length >= count &&
				rows.every((row) => !['new', 'running', 'waiting'].includes(row.status))
			)
				return rows;
			if (Date.now() > deadline) {
				const states = rows.reduce<Record<string, number>>(
					(counts, row) => ({ ...counts, [row.status]: (counts[row.status] ?? 0) + 1 }),
					{},
				);
				throw new Error(
					`Timed out after ${timeoutMs / 1000} s waiting for ${count} finished executions of ${workflowId}: ${JSON.stringify(states)}`,
				);
			}
			await sleep(everyMs);
		}
	};

	/** Resident memory (MB) of each n8n process (its own process, not its task runner). */
	const rssMb = (): Record<string, number> => {
		const of = (pid: number) => {
			try {
				const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
				return match ? Math.round(Number(match[1]) / 1024) : 0;
			} catch {
				return 0;
			}
		};
		return Object.fromEntries([
			['main', of(running.process.pid as number)],
			...workers.map((worker) => [worker.name, of(worker.pid)]),
		]);
	};

	return {
		url: running.url,
		port: running.port,
		pgPort: postgres!.port,
		pgPasswordFile,
		redisPort,
		logDir,
		main: running,
		workers: workers.map(({ name, pid, healthPort, output }) => ({
			name,
			pid,
			healthPort,
			output,
		})),
		rest,
		publish: (id: string) => publish(rest, id),
		/** Execution id -> the worker that started it ("Worker started execution N" in its log). */
		workerOfExecutions: () => new Map(startedOn),
		/** Execution id -> the worker that finished it ("Worker finished execution N"). */
		finishedOn: () => new Map(finishedOn),
		lastExecutionId,
		psql,
		executions,
		waitForExecutions,
		rssMb,
		/** Main's environment: n8n's CLI against the same database and Redis. */
		mainEnv,
		/** `n8n <args>` with main's environment. */
		cli: (args: string[]) => runN8nCli(mainEnv, args, { runtime }),
		stop,
	};
}
