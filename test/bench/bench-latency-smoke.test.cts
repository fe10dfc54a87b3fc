/**
 * The latency suite (row 9) at a very small scale: proves `npm run bench -- --only latency` still
 * works, and the command line. Asserts call counts, structure and that the report renders; never
 * times. (The real-n8n suites: bench-n8n-smoke.test.cts.)
 */
import { latencyFiguresOf, runLatencySuite } from '../../bench/latencySuite.cts';
import type { LatencyResults, LatencyScale } from '../../bench/latencySuite.cts';
import { REFRESH, SEND, useSandbox } from '../harness/index.cts';
import { parseBenchArgs, resultsMarkdown } from '../../bench/run.cts';

const SMALL: LatencyScale = {
	users: 100,
	latencies: [5],
	rateLimitItems: 30,
	rateLimitPerSecond: 20,
	rateLimitBoundMs: 30_000,
};

describe('latency bench at a small scale', () => {
	const sandbox = useSandbox({ port: 0, seedUsers: SMALL.users, clock: 'real' });
	let results: LatencyResults;
	beforeAll(async () => {
		results = await runLatencySuite(sandbox, SMALL);
	}, 120_000);

	test('rate limit: every send the sandbox saw was either registered or refused, and counted', () => {
		const [r] = results.rateLimited;
		expect(r.items).toBe(30);
		expect(r.error).toBeUndefined();
		expect(r.counts[REFRESH]).toBe(1);
		expect(r.counts[SEND]).toBe(r.registered + r.refused);
		expect(r.allowedMs).toBeCloseTo(((31 - 20) / 20) * 1000 + 5);
	});

	test('the report renders row 9: no item failed, none sent twice', () => {
		const { figures } = latencyFiguresOf(results);
		expect(figures.map((figure) => figure.row)).toEqual(['9', '9']);
		expect(figures[0]).toMatchObject({
			measured: expect.stringMatching(/^0 failed, 0 duplicates/),
			verdict: 'pass',
		});
		const markdown = resultsMarkdown(
			{ latency: results },
			{ date: 'today', node: process.version, machine: 'test', versions: {} },
		);
		expect(markdown).toContain('- Sandbox (row 9)');
		expect(markdown).toContain('## Goals missed, and why');
	});

	test('a duplicate fails the goal and is explained', () => {
		const [r] = results.rateLimited;
		const { figures, misses } = latencyFiguresOf({
			...results,
			rateLimited: [{ ...r, duplicates: 1 }],
		});
		expect(figures[0].verdict).toBe('FAIL');
		expect(misses[0]).toMatch(/^Row 9 at 5 ms \(0 failed, 1 duplicates/);
	});
});

describe('bench command line', () => {
	test('every suite by default; --only picks suites; partial runs are flagged', () => {
		expect(parseBenchArgs([])).toMatchObject({
			core: true,
			latency: true,
			n8n: true,
			queue: true,
			build: true,
			wait: true,
			complete: true,
		});
		expect(parseBenchArgs(['--only', 'core,latency'])).toMatchObject({
			core: true,
			latency: true,
			n8n: false,
			queue: false,
			complete: false,
		});
		expect(
			parseBenchArgs([
				'--only=n8n,queue',
				'--n8n-reps',
				'1',
				'--queue-reps',
				'1',
				'--no-build',
				'--no-wait',
			]),
		).toMatchObject({
			core: false,
			latency: false,
			n8n: true,
			queue: true,
			n8nReps: 1,
			queueReps: 1,
			build: false,
			wait: false,
			complete: false,
		});
		expect(parseBenchArgs(['--reps', '2'])).toMatchObject({ reps: 2, complete: false });
		expect(parseBenchArgs(['--no-build'])).toMatchObject({ complete: false });
		expect(() => parseBenchArgs(['--only', 'nothing'])).toThrow(/unknown nothing/);
		expect(() => parseBenchArgs(['--n8n-reps', '0'])).toThrow(/--n8n-reps must be a whole number/);
		expect(() => parseBenchArgs(['--reps', 'many'])).toThrow(/--reps must be a whole number/);
		expect(() => parseBenchArgs(['--reps'])).toThrow(/--reps/);
		expect(() => parseBenchArgs(['--fast'])).toThrow(/--fast/);
	});
});
