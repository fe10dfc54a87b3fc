/**
 * `npm run bench`: runs the suites, prints the figures and writes bench/RESULTS.md. A file per suite
 * (its opening comment says what it measures; docs/development.md lists them), row numbers those the
 * docs cite. The n8n and queue suites wait first (checking every minute) while other n8n runs use
 * the machine.
 *
 * Options (after `npm run bench --`):
 *   --only SUITES      comma-separated: core, ladder, latency, n8n, queue, keys. Default: every suite.
 *   --reps N           runs of the core cases (default 3).
 *   --n8n-reps N       repetitions of the real-n8n cases, per round trip and on Postgres (default 3).
 *   --queue-reps N     passes of each workflow in queue mode (default 2).
 *   --no-build         pack the dist/ there is instead of running `npm run build` first.
 *   --no-wait          start the n8n and queue suites even while other n8n runs use the machine.
 *   --out FILE         where to write the results. Default: bench/RESULTS.md after a run of every
 *                      suite at full scale; otherwise a file in the temp folder (a partial run never
 *                      replaces RESULTS.md unless --out says so).
 */
import '../devkit/env.cts';

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import { startSandbox } from '../sandbox/index.cts';
import { packCheckout } from '../devkit/n8n/index.cts';
import { coreFiguresOf, FULL_SCALE, runCoreSuite } from './coreSuite.cts';
import { FULL_LADDER_SCALE, ladderFiguresOf, runLadderSuite } from './ladderSuite.cts';
import { FULL_LATENCY_SCALE, latencyFiguresOf, runLatencySuite } from './latencySuite.cts';
import { FULL_N8N_SCALE, n8nFiguresOf, runN8nSuite } from './n8nSuite.cts';
import { FULL_QUEUE_SCALE, queueFiguresOf, runQueueSuite } from './queueSuite.cts';
import { FULL_KEY_SCALE, keyFiguresOf, runKeySuite } from './keyCost.cts';
import { consoleLines, markdownTable } from './report.cts';
import type { SuiteReport } from './report.cts';

/** Each suite's figures from its results, in row order. */
const FIGURES_OF = {
	core: coreFiguresOf,
	ladder: ladderFiguresOf,
	latency: latencyFiguresOf,
	n8n: n8nFiguresOf,
	queue: queueFiguresOf,
	keys: keyFiguresOf,
};
type SuiteName = keyof typeof FIGURES_OF;
const SUITES = Object.keys(FIGURES_OF) as SuiteName[];

/** What one `npm run bench` ran: some or all of the suites. */
export type BenchRuns = { [Suite in SuiteName]?: Parameters<(typeof FIGURES_OF)[Suite]>[0] };

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

/** Reads the command line. */
export function parseBenchArgs(argv: string[]) {
	const text = { type: 'string' } as const;
	const flag = { type: 'boolean', default: false } as const;
	const { values } = parseArgs({
		args: argv,
		strict: true,
		options: {
			only: text,
			reps: text,
			'n8n-reps': text,
			'queue-reps': text,
			'no-build': flag,
			'no-wait': flag,
			out: text,
		},
	});
	const count = (name: string, full: number) => {
		const given = values[name as 'reps'];
		if (given === undefined) return full;
		if (!/^[1-9]\d*$/.test(given))
			throw new Error(`--${name} must be a whole number >= 1 (got ${given})`);
		return Number(given);
	};
	const only = values.only?.split(',').map((suite) => suite.trim());
	const unknown = (only ?? []).filter((suite) => !(SUITES as string[]).includes(suite));
	if (unknown.length)
		throw new Error(`--only: unknown ${unknown.join(', ')} (choose from ${SUITES.join(', ')})`);
	const wanted = new Set(only ?? SUITES);
	const picked = Object.fromEntries(SUITES.map((name) => [name, wanted.has(name)]));
	const options = {
		reps: count('reps', FULL_SCALE.reps),
		n8nReps: count('n8n-reps', FULL_N8N_SCALE.reps),
		queueReps: count('queue-reps', FULL_QUEUE_SCALE.reps),
		...(picked as Record<SuiteName, boolean>),
		/** `npm run build` before packing the package for the real n8n; wait while other n8n runs use the machine. */
		build: !values['no-build'],
		wait: !values['no-wait'],
		out: values.out,
	};
	const fullScale =
		options.reps === FULL_SCALE.reps &&
		options.n8nReps === FULL_N8N_SCALE.reps &&
		options.queueReps === FULL_QUEUE_SCALE.reps;
	/** Every suite at its full scale: only such a run writes bench/RESULTS.md by default. */
	const complete = !only && options.build && fullScale;
	return { ...options, complete };
}

/** Every figure, miss and setup line of the runs, in row order. */
export function allFiguresOf(runs: BenchRuns): SuiteReport {
	const parts = SUITES.flatMap((name) =>
		runs[name] ? [(FIGURES_OF[name] as (results: unknown) => SuiteReport)(runs[name])] : [],
	);
	return {
		figures: parts.flatMap((part) => part.figures),
		misses: parts.flatMap((part) => part.misses),
		setup: parts.flatMap((part) => part.setup),
	};
}

export function resultsMarkdown(runs: BenchRuns, environment: Environment): string {
	const { figures, misses, setup } = allFiguresOf(runs);
	const hows = new Set<string>();
	const verdicts = (verdict: string) => figures.filter((f) => f.verdict === verdict).length;
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
		`- Goals: ${verdicts('pass')} pass, ${verdicts('FAIL')} fail. Figures without a goal (—) are context.`,
		'',
		markdownTable(figures),
		'',
		'## How each figure was measured',
		'',
		// Each description once (rows repeat theirs at every latency and size).
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

function environmentNow(started: number): Environment {
	const versionOf = (name: string) =>
		(
			JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
				version: string;
			}
		).version;
	// The bench runs the working tree: the commit, and the shipped code's uncommitted changes.
	const git = (...args: string[]) =>
		execFileSync('git', args, { cwd: join(__dirname, '..'), encoding: 'utf8' }).trimEnd();
	let source = 'unknown (no git)';
	try {
		const commit = git('rev-parse', '--short', 'HEAD');
		// Porcelain lines start with their status column (' M path').
		const dirty = git('status', '--porcelain', '--', 'nodes', 'credentials')
			.split('\n')
			.filter(Boolean)
			.map((line) => line.slice(3));
		source = dirty.length
			? `commit ${commit} plus uncommitted changes in ${dirty.join(', ')}`
			: `commit ${commit} (shipped code unchanged)`;
	} catch {
		// not a git checkout
	}
	return {
		date: new Date().toISOString(),
		node: process.version,
		machine: `2 shared cores (${process.platform} ${process.arch}); other work may run at the same time, hence medians and spreads`,
		versions: Object.fromEntries(
			['n8n-core', 'n8n-workflow', 'undici'].map((name) => [name, versionOf(name)]),
		),
		source,
		totalMs: Date.now() - started,
	};
}

async function main() {
	const options = parseBenchArgs(process.argv.slice(2));
	const started = Date.now();
	// performance.now, not Date.now: the ladder suite has Date.now follow the sandbox's clock.
	const startedMonotonic = performance.now();
	const log = (line: string) =>
		console.log(`[${Math.round((performance.now() - startedMonotonic) / 1000)} s] ${line}`);
	const runs: BenchRuns = {};
	// A suite that fails is reported and the others still run; the run is then not complete.
	const failures: string[] = [];
	const suite = async (name: string, wanted: boolean, body: () => Promise<void>) => {
		if (!wanted) return;
		try {
			await body();
		} catch (error) {
			failures.push(`${name}: ${(error as Error).message.split('\n')[0]}`);
			log(`${name} failed: ${(error as Error).stack ?? error}`);
		}
	};
	const inSandbox = async <T,>(
		users: number,
		clock: 'manual' | 'real',
		body: (sandbox: Awaited<ReturnType<typeof startSandbox>>) => Promise<T>,
	) => {
		const sandbox = await startSandbox({ port: 0, seedUsers: users, clock });
		return body(sandbox).finally(() => sandbox.stop());
	};
	await suite('core', options.core, async () => {
		const scale = { ...FULL_SCALE, reps: options.reps };
		runs.core = await inSandbox(scale.users, 'manual', (sandbox) =>
			runCoreSuite(sandbox, scale, log),
		);
	});
	await suite('ladder', options.ladder, async () => {
		runs.ladder = await inSandbox(FULL_LADDER_SCALE.users, 'manual', (sandbox) =>
			runLadderSuite(sandbox, FULL_LADDER_SCALE, log),
		);
	});
	await suite('latency', options.latency, async () => {
		runs.latency = await inSandbox(FULL_LATENCY_SCALE.users, 'real', (sandbox) =>
			runLatencySuite(sandbox, FULL_LATENCY_SCALE, log),
		);
	});
	await suite('keys', options.keys, async () => {
		runs.keys = await inSandbox(1_000, 'real', (sandbox) =>
			runKeySuite(sandbox, FULL_KEY_SCALE, log),
		);
	});
	let tarball: string | undefined;
	await suite('packing the package', options.n8n || options.queue, async () => {
		tarball = packCheckout({ build: options.build, log });
	});
	await suite('n8n', options.n8n && tarball !== undefined, async () => {
		if (options.wait) await waitForQuietMachine(log);
		const scale = { ...FULL_N8N_SCALE, reps: options.n8nReps, postgresReps: options.n8nReps };
		runs.n8n = await runN8nSuite(scale, tarball!, log);
	});
	await suite('queue', options.queue && tarball !== undefined, async () => {
		if (options.wait) await waitForQuietMachine(log);
		runs.queue = await runQueueSuite(
			{ ...FULL_QUEUE_SCALE, reps: options.queueReps },
			tarball!,
			log,
		);
	});
	if (tarball) fs.rmSync(dirname(tarball), { recursive: true, force: true });
	if (failures.length) {
		console.log(
			`\nSuites that failed (their rows are missing; RESULTS.md is left as it is unless --out says so):\n${failures.map((failure) => `- ${failure}`).join('\n')}`,
		);
		process.exitCode = 1;
	}

	const { figures, misses } = allFiguresOf(runs);
	console.log(`\n${consoleLines(figures)}`);
	if (misses.length)
		console.log(`\nGoals missed:\n${misses.map((miss) => `- ${miss}`).join('\n')}`);
	const environment = environmentNow(started);
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
