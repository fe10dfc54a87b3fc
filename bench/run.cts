/**
 * `npm run bench`: runs the suites, prints the figures and writes bench/RESULTS.md.
 *
 * - core (rows 1-4, bench/coreSuite.cts): the node in-process against raw undici and n8n's HTTP
 *   helper floor, on a sandbox with 100,000 users. About a minute.
 * - latency (rows 6-10, bench/latencySuite.cts): the same at a sandbox latency of 0 and 40 ms, a rate
 *   limit, the trigger with reads due. About 2 minutes.
 * - n8n (rows 11-16, bench/n8nSuite.cts): the node and n8n's HTTP Request node in the same real n8n
 *   2.41.1, over http and https at a 0 and 40 ms round trip, also on Postgres. About 8 minutes.
 * - queue (row 17, bench/queueSuite.cts): the ERP webhook example and the same workflow built with the
 *   HTTP Request node in a real queue-mode cluster. About 6 minutes.
 * The n8n and queue groups wait first (checking every minute) while other n8n runs use the machine.
 *
 * Options (after `npm run bench --`):
 *   --only GROUPS      comma-separated: core, latency (all of: send, batches, ratelimit, trigger),
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
import '../devkit/env.cts';

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import { startSandbox } from '../sandbox/index.cts';
import type { Sandbox } from '../sandbox/index.cts';
import { packCheckout } from '../devkit/n8n/index.cts';
import { coreFiguresOf, FULL_SCALE, runCoreSuite } from './coreSuite.cts';
import type { CoreResults } from './coreSuite.cts';
import {
	FULL_LATENCY_SCALE,
	LATENCY_GROUPS,
	latencyFiguresOf,
	runLatencySuite,
} from './latencySuite.cts';
import type { LatencyResults } from './latencySuite.cts';
import { FULL_N8N_SCALE, n8nFiguresOf, runN8nSuite } from './n8nSuite.cts';
import type { N8nResults } from './n8nSuite.cts';
import { FULL_QUEUE_SCALE, queueFiguresOf, runQueueSuite } from './queueSuite.cts';
import type { QueueResults } from './queueSuite.cts';
import { consoleLines, markdownTable } from './report.cts';
import type { SuiteReport } from './report.cts';

/** What one `npm run bench` ran: some or all of the suites. */
export interface BenchRuns {
	core?: CoreResults;
	latency?: LatencyResults;
	n8n?: N8nResults;
	queue?: QueueResults;
}

export interface Environment {
	date: string;
	node: string;
	machine: string;
	versions: Record<string, string>;
	/** What code was measured: the commit, and uncommitted changes in the shipped code, if any. */
	source?: string;
	/** Wall time of the whole bench run (ms). */
	totalMs?: number;
}

const wholeNumber = (name: string, text: string | undefined, min: number): number => {
	const value = Number(text);
	if (text === undefined || text === '' || !Number.isInteger(value) || value < min)
		throw new Error(`${name} must be a whole number >= ${min} (got ${text})`);
	return value;
};

/** Reads the command line (and BENCH_REPS, BENCH_LATENCY_REPS). */
export function parseBenchArgs(argv: string[], env: NodeJS.ProcessEnv = process.env) {
	const text = { type: 'string' } as const;
	const flag = { type: 'boolean', default: false } as const;
	const { values } = parseArgs({
		args: argv,
		strict: true,
		options: {
			only: { type: 'string', multiple: true },
			latencies: text,
			reps: text,
			'latency-reps': text,
			'n8n-reps': text,
			'queue-reps': text,
			'no-n8n': flag,
			'no-build': flag,
			'no-wait': flag,
			out: text,
			json: text,
			'from-json': text,
		},
	});
	/** The first of the sources that is given (an option, then its environment variable), or the full scale's. */
	const count = (full: number, ...sources: Array<[string, string | undefined]>) => {
		const given = sources.find(([, value]) => value !== undefined);
		return given ? wholeNumber(given[0], given[1], 1) : full;
	};
	const only = values.only?.flatMap((list) =>
		list
			.split(',')
			.map((group) => group.trim())
			.filter(Boolean),
	);
	const known = ['core', 'latency', ...LATENCY_GROUPS, 'n8n', 'queue'];
	const unknown = (only ?? []).filter((group) => !known.includes(group));
	if (unknown.length)
		throw new Error(`--only: unknown ${unknown.join(', ')} (choose from ${known.join(', ')})`);
	const wanted = only ?? ['core', 'latency', 'n8n', 'queue'];
	const realN8n = !values['no-n8n'];
	const options = {
		latencies:
			values.latencies
				?.split(',')
				.map((latency) => wholeNumber('--latencies', latency.trim(), 0)) ??
			FULL_LATENCY_SCALE.latencies,
		reps: count(FULL_SCALE.reps, ['--reps', values.reps], ['BENCH_REPS', env.BENCH_REPS]),
		latencyReps: count(
			FULL_LATENCY_SCALE.reps,
			['--latency-reps', values['latency-reps']],
			['BENCH_LATENCY_REPS', env.BENCH_LATENCY_REPS],
		),
		n8nReps: count(FULL_N8N_SCALE.reps, ['--n8n-reps', values['n8n-reps']]),
		queueReps: count(FULL_QUEUE_SCALE.reps, ['--queue-reps', values['queue-reps']]),
		core: wanted.includes('core'),
		groups: LATENCY_GROUPS.filter((group) => wanted.includes('latency') || wanted.includes(group)),
		/** The real-n8n suite (rows 11-16) and the queue-mode suite (row 17). */
		n8n: realN8n && wanted.includes('n8n'),
		queue: realN8n && wanted.includes('queue'),
		/** `npm run build` before packing the package for the real n8n; wait while other n8n runs use the machine. */
		build: !values['no-build'],
		wait: !values['no-wait'],
		out: values.out,
		json: values.json,
		fromJson: values['from-json'],
	};
	const fullScale = [
		options.reps === FULL_SCALE.reps,
		options.latencyReps === FULL_LATENCY_SCALE.reps,
		options.n8nReps === FULL_N8N_SCALE.reps,
		options.queueReps === FULL_QUEUE_SCALE.reps,
		options.latencies.join() === FULL_LATENCY_SCALE.latencies.join(),
	];
	/** Every case at its full scale: only such a run writes bench/RESULTS.md by default. */
	return {
		...options,
		complete:
			options.fromJson === undefined &&
			only === undefined &&
			realN8n &&
			options.build &&
			fullScale.every(Boolean),
	};
}

/** Every figure, miss and setup line of the runs, in row order. */
export function allFiguresOf(runs: BenchRuns): SuiteReport {
	const parts = [
		runs.core && coreFiguresOf(runs.core),
		runs.latency && latencyFiguresOf(runs.latency),
		runs.n8n && n8nFiguresOf(runs.n8n),
		runs.queue && queueFiguresOf(runs.queue),
	].filter((part) => part !== undefined);
	return {
		figures: parts.flatMap((part) => part.figures),
		misses: parts.flatMap((part) => part.misses),
		setup: parts.flatMap((part) => part.setup),
	};
}

export function resultsMarkdown(runs: BenchRuns, environment: Environment): string {
	const { figures, misses, setup } = allFiguresOf(runs);
	const hows = new Set<string>();
	return [
		'# Benchmark results',
		'',
		'Written by `npm run bench` (bench/run.cts) from a real run; do not edit by hand.',
		'',
		`- Date: ${environment.date}`,
		`- Machine: ${environment.machine}`,
		`- Node ${environment.node}; ${Object.entries(environment.versions)
			.map(([name, version]) => `${name} ${version}`)
			.join(', ')}`,
		...(environment.source ? [`- Code measured: ${environment.source}`] : []),
		...setup,
		...(environment.totalMs !== undefined
			? [`- Whole run: ${(environment.totalMs / 1000).toFixed(0)} s.`]
			: []),
		`- Goals: ${figures.filter((f) => f.verdict === 'pass').length} pass, ${figures.filter((f) => f.verdict === 'FAIL').length} fail.`,
		'',
		markdownTable(figures),
		'',
		'## How each figure was measured',
		'',
		// Each description once (the latency rows repeat theirs at every latency and size).
		...figures
			.filter((f) => !hows.has(f.how) && hows.add(f.how))
			.map((f) => `- Row ${f.row}, ${f.figure}: ${f.how}`),
		'',
		'## Goals missed, and why',
		'',
		...(misses.length ? misses.map((m) => `- ${m}`) : ['None.']),
		'',
	].join('\n');
}

/** n8n processes of this machine that are not ours (this process and its ancestors left out). */
function otherN8nProcesses(): number {
	const read = (file: string) => {
		try {
			return fs.readFileSync(file, 'utf8');
		} catch {
			return ''; // gone meanwhile
		}
	};
	const ours = new Set<number>();
	for (
		let pid = process.pid;
		pid > 1 && !ours.has(pid);
		pid = Number(/^PPid:\s+(\d+)/m.exec(read(`/proc/${pid}/status`))?.[1] ?? 0)
	)
		ours.add(pid);
	return fs
		.readdirSync('/proc')
		.filter(
			(entry) =>
				/^\d+$/.test(entry) &&
				!ours.has(Number(entry)) &&
				/n8n/.test(read(`/proc/${entry}/cmdline`)),
		).length;
}

/** The real-n8n suites share this 2-core machine: wait (checking every minute) while another n8n run
 * uses it (more than 5 n8n processes: n8n, its task runners, Postgres sessions of its user). */
async function waitForQuietMachine(log: (line: string) => void): Promise<void> {
	for (let others = otherN8nProcesses(); others > 5; others = otherN8nProcesses()) {
		log(
			`${others} n8n processes of another run are on this machine: waiting for them to end (checking every minute; --no-wait to start anyway)`,
		);
		await sleep(60_000);
	}
}

const versionOf = (name: string) => {
	try {
		return (
			JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
				version: string;
			}
		).version;
	} catch {
		return 'unknown';
	}
};

/** The commit measured, and the shipped code's uncommitted changes (the bench runs the working tree). */
function sourceMeasured(): string {
	// trimEnd: `git status --porcelain` lines start with their status column (' M path').
	const git = (...args: string[]) =>
		execFileSync('git', args, { cwd: join(__dirname, '..'), encoding: 'utf8' }).trimEnd();
	try {
		const commit = git('rev-parse', '--short', 'HEAD');
		const dirty = git('status', '--porcelain', '--', 'nodes', 'credentials')
			.split('\n')
			.filter(Boolean)
			.map((line) => line.slice(3));
		return dirty.length
			? `commit ${commit} plus uncommitted changes in ${dirty.join(', ')}`
			: `commit ${commit} (shipped code unchanged)`;
	} catch {
		return 'unknown (no git)';
	}
}

async function main() {
	const options = parseBenchArgs(process.argv.slice(2));
	const started = Date.now();
	const log = (line: string) =>
		console.log(`[${Math.round((Date.now() - started) / 1000)} s] ${line}`);
	const saved = options.fromJson
		? (JSON.parse(fs.readFileSync(options.fromJson, 'utf8')) as {
				runs: BenchRuns;
				environment: Environment;
			})
		: undefined;
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
	const withSandbox = async (
		users: number,
		clock: 'manual' | 'real',
		body: (sandbox: Sandbox) => Promise<void>,
	) => {
		const sandbox = await startSandbox({ port: 0, seedUsers: users, clock });
		log(`sandbox on ${sandbox.baseUrl} with ${users} users, ${clock} clock`);
		await body(sandbox).finally(() => sandbox.stop());
	};
	if (!saved && options.core) {
		await group('core', () =>
			withSandbox(
				FULL_SCALE.users,
				'manual',
				async (sandbox) =>
					void (runs.core = await runCoreSuite(
						sandbox,
						{ ...FULL_SCALE, reps: options.reps },
						log,
					)),
			),
		);
	}
	if (!saved && options.groups.length > 0) {
		const scale = {
			...FULL_LATENCY_SCALE,
			latencies: options.latencies,
			reps: options.latencyReps,
			groups: options.groups,
		};
		await group('latency', () =>
			withSandbox(
				scale.users,
				'real',
				async (sandbox) => void (runs.latency = await runLatencySuite(sandbox, scale, log)),
			),
		);
	}
	if (!saved && (options.n8n || options.queue)) {
		let tarball: string | undefined;
		await group(
			'packing the package',
			async () => void (tarball = packCheckout({ build: options.build, log })),
		);
		if (tarball) {
			const packed = tarball;
			const realN8nGroup = (name: string, body: () => Promise<void>) =>
				group(name, async () => {
					if (options.wait) await waitForQuietMachine(log);
					await body();
				});
			if (options.n8n)
				await realN8nGroup(
					'n8n',
					async () =>
						void (runs.n8n = await runN8nSuite(
							{ ...FULL_N8N_SCALE, reps: options.n8nReps, postgresReps: options.n8nReps },
							packed,
							log,
						)),
				);
			if (options.queue)
				await realN8nGroup(
					'queue',
					async () =>
						void (runs.queue = await runQueueSuite(
							{ ...FULL_QUEUE_SCALE, reps: options.queueReps },
							packed,
							log,
						)),
				);
			fs.rmSync(dirname(packed), { recursive: true, force: true });
		}
	}
	if (failures.length) {
		console.log(
			`\nGroups that failed (their rows are missing; RESULTS.md is left as it is unless --out says so):\n${failures.map((failure) => `- ${failure}`).join('\n')}`,
		);
		process.exitCode = 1;
	}

	const { figures, misses } = allFiguresOf(runs);
	console.log(`\n${consoleLines(figures)}`);
	if (misses.length)
		console.log(`\nGoals missed:\n${misses.map((miss) => `- ${miss}`).join('\n')}`);
	const environment: Environment = saved?.environment ?? {
		date: new Date().toISOString(),
		node: process.version,
		machine: `2 shared cores (${process.platform} ${process.arch}); other work may run at the same time, hence medians and spreads`,
		versions: {
			'n8n-core': versionOf('n8n-core'),
			'n8n-workflow': versionOf('n8n-workflow'),
			undici: versionOf('undici'),
		},
		source: sourceMeasured(),
		totalMs: Date.now() - started,
	};
	if (options.json) fs.writeFileSync(options.json, JSON.stringify({ runs, environment }));
	const toResults = options.complete && failures.length === 0;
	const file = options.out
		? resolve(options.out)
		: toResults
			? join(__dirname, 'RESULTS.md')
			: join(tmpdir(), `companion-push-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
	fs.writeFileSync(file, resultsMarkdown(runs, environment));
	console.log(
		`\nwritten: ${file} (${((Date.now() - started) / 1000).toFixed(0)} s)${toResults || options.out ? '' : ' (a partial run: bench/RESULTS.md is left as it is)'}`,
	);
}

if (require.main === module) {
	main().catch((error) => {
		console.error(error);
		process.exitCode = 1;
	});
}
