/**
 * `npm run bench`: runs the benchmark cases, prints the table and writes bench/RESULTS.md.
 *
 * - core (rows 1-4, bench/suite.ts): a sandbox with 100,000 users on a manual clock, the node
 *   against raw undici and n8n's HTTP helper floor. About a minute.
 * - latency (rows 6-10, bench/latencySuite.ts): a second sandbox on the real clock holding every
 *   answer 0 and 40 ms; the node (in-process) against raw undici at its parallelism and all at
 *   once; Wait for Final Status, a rate limit, the trigger. About 3 minutes.
 * - n8n (rows 11-16, bench/n8nSuite.ts): both the node and n8n's HTTP Request node in the real
 *   n8n 2.41.1, the package installed as a community package, over http and https behind a link
 *   of 0 and 40 ms round trip; Max Parallel Requests variants; n8n on Postgres; Wait for Final
 *   Status; credential reads. About 8 minutes (the n8n runtime is installed first if missing).
 * - queue (row 17, bench/queueSuite.ts): executions/s of the ERP webhook example and of the same
 *   workflow built with the HTTP Request node in a real queue-mode cluster. About 6 minutes.
 * The n8n and queue groups wait first (checking every minute) while other n8n runs use the machine.
 *
 * Options (after `npm run bench --`):
 *   --only GROUPS      comma-separated: core, latency (all of: send, batches, wait, ratelimit, trigger),
 *                      single latency groups, n8n, queue. Default: everything.
 *   --latencies 0,40   sandbox latencies of the latency cases (ms).
 *   --reps N           repetitions of the core cases (default 7; also BENCH_REPS).
 *   --latency-reps N   repetitions of the latency send cases (default 3; also BENCH_LATENCY_REPS).
 *   --n8n-reps N       repetitions of the real-n8n cases, per round trip and on Postgres (default 3).
 *   --queue-reps N     passes of each workflow in queue mode (default 2).
 *   --no-n8n           skip the groups that need a real n8n (n8n, queue).
 *   --no-build         pack the dist/ there is instead of running `npm run build` first.
 *   --no-wait          start the n8n and queue groups even while other n8n runs use the machine.
 *   --out FILE         where to write the results. Default: bench/RESULTS.md after a run of
 *                      everything at full scale; otherwise a file in the temp folder (a partial run
 *                      never replaces RESULTS.md unless --out says so).
 *   --json FILE        also save the raw results (to render them again later).
 *   --from-json FILE   measure nothing: render saved raw results (with --out, or to the temp folder).
 */
import '../devkit/env';

import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import { startSandbox } from '../sandbox';
import type { Sandbox } from '../sandbox';
import { packCheckout } from './benchN8n';
import { FULL_LATENCY_SCALE, LATENCY_GROUPS, runLatencySuite } from './latencySuite';
import type { LatencyGroup, LatencyScale } from './latencySuite';
import { FULL_N8N_SCALE, runN8nSuite } from './n8nSuite';
import { FULL_QUEUE_SCALE, runQueueSuite } from './queueSuite';
import { waitForQuietMachine } from './quietMachine';
import { allFiguresOf, consoleTable, resultsMarkdown } from './report';
import type { BenchRuns, Environment } from './report';
import { FULL_SCALE, runSuite } from './suite';

function versionOf(name: string): string {
	try {
		return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
	} catch {
		return 'unknown';
	}
}

/** The commit measured, and the shipped code's uncommitted changes (the bench runs the working tree). */
function sourceMeasured(): string {
	// trimEnd: `git status --porcelain` lines start with their status column (' M path').
	const git = (...args: string[]) => execFileSync('git', args, { cwd: join(__dirname, '..'), encoding: 'utf8' }).trimEnd();
	try {
		const commit = git('rev-parse', '--short', 'HEAD');
		const dirty = git('status', '--porcelain', '--', 'nodes', 'credentials')
			.split('\n')
			.filter(Boolean)
			.map((line) => line.slice(3));
		return dirty.length ? `commit ${commit} plus uncommitted changes in ${dirty.join(', ')}` : `commit ${commit} (shipped code unchanged)`;
	} catch {
		return 'unknown (no git)';
	}
}

export interface BenchOptions {
	core: boolean;
	groups: LatencyGroup[];
	latencies: number[];
	reps: number;
	latencyReps: number;
	/** The real-n8n suite (rows 11-16) and the queue-mode suite (row 17). */
	n8n: boolean;
	queue: boolean;
	n8nReps: number;
	queueReps: number;
	/** `npm run build` before packing the package for the real n8n. */
	build: boolean;
	/** Wait while other n8n runs use the machine. */
	wait: boolean;
	out?: string;
	json?: string;
	fromJson?: string;
	/** True when every case runs at its full scale: only such a run writes bench/RESULTS.md by default. */
	complete: boolean;
}

const wholeNumber = (name: string, text: string | undefined, min: number): number => {
	const value = Number(text);
	if (text === undefined || text === '' || !Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number >= ${min} (got ${text})`);
	return value;
};

/** Reads the command line (and BENCH_REPS, BENCH_LATENCY_REPS). */
export function parseBenchArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
	let only: string[] | undefined;
	let latencies = FULL_LATENCY_SCALE.latencies;
	let reps = env.BENCH_REPS !== undefined ? wholeNumber('BENCH_REPS', env.BENCH_REPS, 1) : FULL_SCALE.reps;
	let latencyReps = env.BENCH_LATENCY_REPS !== undefined ? wholeNumber('BENCH_LATENCY_REPS', env.BENCH_LATENCY_REPS, 1) : FULL_LATENCY_SCALE.reps;
	let realN8n = true;
	let n8nReps = FULL_N8N_SCALE.reps;
	let queueReps = FULL_QUEUE_SCALE.reps;
	let build = true;
	let wait = true;
	let out: string | undefined;
	let json: string | undefined;
	let fromJson: string | undefined;
	for (let index = 0; index < argv.length; index++) {
		const [flag, inline] = argv[index].split(/=(.*)/s, 2);
		const value = () => (inline !== undefined ? inline : argv[++index]);
		switch (flag) {
			case '--only':
				only = [...(only ?? []), ...value().split(',').map((group) => group.trim()).filter(Boolean)];
				break;
			case '--latencies':
				latencies = value()
					.split(',')
					.map((text) => wholeNumber('--latencies', text.trim(), 0));
				break;
			case '--reps':
				reps = wholeNumber('--reps', value(), 1);
				break;
			case '--latency-reps':
				latencyReps = wholeNumber('--latency-reps', value(), 1);
				break;
			case '--n8n-reps':
				n8nReps = wholeNumber('--n8n-reps', value(), 1);
				break;
			case '--queue-reps':
				queueReps = wholeNumber('--queue-reps', value(), 1);
				break;
			case '--no-n8n':
				realN8n = false;
				break;
			case '--no-build':
				build = false;
				break;
			case '--no-wait':
				wait = false;
				break;
			case '--out':
				out = value();
				break;
			case '--json':
				json = value();
				break;
			case '--from-json':
				fromJson = value();
				break;
			default:
				throw new Error(`unknown option ${argv[index]} (see bench/run.ts)`);
		}
	}
	const known = ['core', 'latency', ...LATENCY_GROUPS, 'n8n', 'queue'];
	const unknown = (only ?? []).filter((group) => !known.includes(group));
	if (unknown.length) throw new Error(`--only: unknown ${unknown.join(', ')} (choose from ${known.join(', ')})`);
	const wanted = only ?? ['core', 'latency', 'n8n', 'queue'];
	const groups = LATENCY_GROUPS.filter((group) => wanted.includes('latency') || wanted.includes(group));
	const complete =
		fromJson === undefined &&
		only === undefined &&
		realN8n &&
		build &&
		reps === FULL_SCALE.reps &&
		latencyReps === FULL_LATENCY_SCALE.reps &&
		n8nReps === FULL_N8N_SCALE.reps &&
		queueReps === FULL_QUEUE_SCALE.reps &&
		latencies.join() === FULL_LATENCY_SCALE.latencies.join();
	return {
		core: wanted.includes('core'),
		groups,
		latencies,
		reps,
		latencyReps,
		n8n: realN8n && wanted.includes('n8n'),
		queue: realN8n && wanted.includes('queue'),
		n8nReps,
		queueReps,
		build,
		wait,
		out,
		json,
		fromJson,
		complete,
	};
}

async function main() {
	const options = parseBenchArgs(process.argv.slice(2));
	const started = Date.now();
	const stamp = () => `[${Math.round((Date.now() - started) / 1000)} s]`;
	const log = (line: string) => console.log(`${stamp()} ${line}`);
	const saved = options.fromJson ? (JSON.parse(readFileSync(options.fromJson, 'utf8')) as { runs: BenchRuns; environment: Environment }) : undefined;
	const runs: BenchRuns = saved?.runs ?? {};
	// A group that fails is reported and the others still run; the run is then not complete.
	const failures: string[] = [];
	const group = async (name: string, body: () => Promise<void>) => {
		try {
			await body();
		} catch (error) {
			failures.push(`${name}: ${(error as Error).message.split('\n')[0]}`);
			log(`${name} failed: ${(error as Error).stack ?? error}`);
		}
	};
	/** A sandbox for one group, stopped after it. */
	const withSandbox = async (sandboxOptions: Parameters<typeof startSandbox>[0], body: (sandbox: Sandbox) => Promise<void>) => {
		const sandbox = await startSandbox(sandboxOptions);
		try {
			await body(sandbox);
		} finally {
			await sandbox.stop();
		}
	};
	if (!saved && options.core) {
		await group('core', async () => {
			const scale = { ...FULL_SCALE, reps: options.reps };
			await withSandbox({ port: 0, seedUsers: scale.users, clock: 'manual' }, async (sandbox) => {
				log(`core: sandbox on ${sandbox.baseUrl} with ${scale.users} users, manual clock`);
				runs.core = await runSuite(sandbox, scale, log);
			});
		});
	}
	if (!saved && options.groups.length > 0) {
		await group('latency', async () => {
			const scale: LatencyScale = { ...FULL_LATENCY_SCALE, latencies: options.latencies, reps: options.latencyReps, groups: options.groups };
			await withSandbox({ port: 0, seedUsers: scale.users, clock: 'real' }, async (sandbox) => {
				log(`latency: sandbox on ${sandbox.baseUrl} with ${scale.users} users, real clock`);
				runs.latency = await runLatencySuite(sandbox, scale, log);
			});
		});
	}
	if (!saved && (options.n8n || options.queue)) {
		let tarball: string | undefined;
		await group('packing the package', async () => {
			tarball = packCheckout({ build: options.build, log });
		});
		if (tarball) {
			const packed = tarball;
			if (options.n8n) {
				await group('n8n', async () => {
					if (options.wait) await waitForQuietMachine(log);
					runs.n8n = await runN8nSuite({ ...FULL_N8N_SCALE, reps: options.n8nReps, postgresReps: options.n8nReps }, packed, log);
				});
			}
			if (options.queue) {
				await group('queue', async () => {
					if (options.wait) await waitForQuietMachine(log);
					runs.queue = await runQueueSuite({ ...FULL_QUEUE_SCALE, reps: options.queueReps }, packed, log);
				});
			}
			rmSync(dirname(packed), { recursive: true, force: true });
		}
	}
	if (failures.length) {
		console.log(`\nGroups that failed (their rows are missing; RESULTS.md is left as it is unless --out says so):\n${failures.map((failure) => `- ${failure}`).join('\n')}`);
		process.exitCode = 1;
	}

	const { figures, misses } = allFiguresOf(runs);
	console.log('');
	console.log(consoleTable(figures));
	if (misses.length) console.log(`\nGoals missed:\n${misses.map((miss) => `- ${miss}`).join('\n')}`);
	const environment: Environment = saved?.environment ?? {
		date: new Date().toISOString(),
		node: process.version,
		machine: `2 shared cores (${process.platform} ${process.arch}); other work may run at the same time, hence medians and spreads`,
		versions: { 'n8n-core': versionOf('n8n-core'), 'n8n-workflow': versionOf('n8n-workflow'), undici: versionOf('undici') },
		source: sourceMeasured(),
		totalMs: Date.now() - started,
	};
	if (options.json) writeFileSync(options.json, JSON.stringify({ runs, environment }));
	const markdown = resultsMarkdown(runs, environment);
	const file = options.out
		? resolve(options.out)
		: options.complete && failures.length === 0
			? join(__dirname, 'RESULTS.md')
			: join(tmpdir(), `companion-push-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
	writeFileSync(file, markdown);
	console.log(`\nwritten: ${file} (${((Date.now() - started) / 1000).toFixed(0)} s)${(options.complete && failures.length === 0) || options.out ? '' : ' (a partial run: bench/RESULTS.md is left as it is)'}`);
}

if (require.main === module) {
	main().catch((error) => {
		console.error(error);
		process.exitCode = 1;
	});
}
