/**
 * The latency suite (rows 6-10) at a very small scale: proves `npm run bench -- --only latency`
 * still works, and the command line. Asserts call counts, structure and that the report renders;
 * never times. (The real-n8n suites: bench-n8n-smoke.test.ts.)
 */
import { LATENCY_GROUPS, latencyFiguresOf, runLatencySuite } from '../../bench/latencySuite.cts';
import type { LatencyResults, LatencyScale } from '../../bench/latencySuite.cts';
import { DETAIL, REFRESH, SEND, SEND_LIST, useSandbox } from '../harness/index.cts';
import { parseBenchArgs, resultsMarkdown } from '../../bench/run.cts';

const SMALL: LatencyScale = {
	users: 2000,
	latencies: [5],
	itemCounts: [10],
	recipients: 2000,
	batchSize: 100,
	rateLimitItems: 30,
	rateLimitPerSecond: 20,
	rateLimitBoundMs: 30_000,
	triggerReads: 5,
	triggerPolls: 2,
	reps: 1,
	groups: [...LATENCY_GROUPS],
};

describe('latency bench at a small scale', () => {
	const sandbox = useSandbox({ port: 0, seedUsers: SMALL.users, clock: 'real' });
	let results: LatencyResults;
	beforeAll(async () => {
		results = await runLatencySuite(sandbox, SMALL);
	}, 120_000);

	test("raw undici runs at the node's default parallelism, read from its description", () => {
		// Send's default Max Parallel Requests.
		expect(results.parallel).toBe(100);
	});

	test('10 items, one send each: 10 sends and 1 refresh on every side', () => {
		const [at] = results.atLatency;
		const [run] = at.items[0].runs;
		expect(run.node.error).toBeUndefined();
		expect(run.node.outputItems).toBe(10);
		for (const side of [run.node, run.rawParallel, run.rawAll])
			expect(side.counts).toEqual({ [REFRESH]: 1, [SEND]: 10 });
		expect(run.rawAll.connections).toBe(10); // every request at once, one connection each
	});

	test('2,000 recipients in batches of 100: 20 sends on every side', () => {
		const [run] = results.atLatency[0].batches;
		for (const side of [run.node, run.rawParallel, run.rawAll])
			expect(side.counts).toEqual({ [REFRESH]: 1, [SEND]: 20 });
	});

	test('rate limit: every send the sandbox saw was either registered or refused, and counted', () => {
		const r = results.atLatency[0].rateLimited!;
		expect(r.items).toBe(30);
		expect(r.counts[SEND]).toBe(r.registered + r.refused);
		expect(r.allowedMs).toBeCloseTo(((31 - 20) / 20) * 1000 + 5);
	});

	test('trigger: each timed poll lists once and reads every send due', () => {
		const t = results.atLatency[0].trigger!;
		expect(t.activation).toEqual({ [REFRESH]: 1, [SEND_LIST]: 1 });
		expect(t.polls).toHaveLength(2);
		for (const poll of t.polls) expect(poll.counts).toEqual({ [SEND_LIST]: 1, [DETAIL]: 5 });
	});

	test('the report renders rows 6, 7, 9 and 10; against raw undici the wall times are context, the call counts goals', () => {
		const { figures } = latencyFiguresOf(results);
		expect(new Set(figures.map((figure) => figure.row))).toEqual(new Set(['6', '7', '9', '10']));
		const calls = figures.find((f) => f.row === '6' && f.figure.endsWith('API calls of the node'));
		expect(calls?.verdict).toBe('pass');
		expect(figures.some((f) => f.figure.includes('HTTP Request'))).toBe(false);
		expect(
			figures
				.filter((f) => f.row === '6' || f.row === '7')
				.every((f) => f.figure.endsWith('API calls of the node') || f.verdict === '—'),
		).toBe(true);
		expect(
			figures.find((f) => f.row === '9' && f.figure.endsWith('failed items, duplicates'))?.verdict,
		).toBe('pass');
		const markdown = resultsMarkdown(
			{ latency: results },
			{ date: 'today', node: process.version, machine: 'test', versions: {} },
		);
		expect(markdown).toContain('rows 6-10');
		expect(markdown).toContain('## Goals missed, and why');
	});
});

describe('bench command line', () => {
	test('everything by default; --only picks groups; partial runs are flagged', () => {
		expect(parseBenchArgs([], {})).toMatchObject({
			core: true,
			groups: [...LATENCY_GROUPS],
			latencies: [0, 40],
			n8n: true,
			queue: true,
			build: true,
			wait: true,
			complete: true,
		});
		expect(parseBenchArgs(['--no-n8n'], {})).toMatchObject({
			core: true,
			groups: [...LATENCY_GROUPS],
			n8n: false,
			queue: false,
			complete: false,
		});
		expect(parseBenchArgs(['--only', 'latency'], {})).toMatchObject({
			core: false,
			groups: [...LATENCY_GROUPS],
			n8n: false,
			queue: false,
			complete: false,
		});
		expect(parseBenchArgs(['--only=ratelimit,trigger', '--latencies', '40'], {})).toMatchObject({
			core: false,
			groups: ['ratelimit', 'trigger'],
			latencies: [40],
		});
		expect(parseBenchArgs(['--only', 'core'], { BENCH_REPS: '2' })).toMatchObject({
			core: true,
			groups: [],
			reps: 2,
			n8n: false,
		});
		expect(
			parseBenchArgs(
				['--only', 'n8n,queue', '--n8n-reps', '1', '--queue-reps', '1', '--no-build', '--no-wait'],
				{},
			),
		).toMatchObject({
			core: false,
			groups: [],
			n8n: true,
			queue: true,
			n8nReps: 1,
			queueReps: 1,
			build: false,
			wait: false,
			complete: false,
		});
		expect(parseBenchArgs(['--from-json', 'saved.json'], {})).toMatchObject({
			fromJson: 'saved.json',
			complete: false,
		});
		expect(() => parseBenchArgs(['--only', 'nothing'], {})).toThrow(/unknown nothing/);
		expect(() => parseBenchArgs(['--latency-reps', '0'], {})).toThrow(
			/--latency-reps must be a whole number/,
		);
		expect(() => parseBenchArgs([], { BENCH_REPS: 'many' })).toThrow(
			/BENCH_REPS must be a whole number/,
		);
		expect(() => parseBenchArgs(['--reps'], {})).toThrow(/--reps/);
		expect(() => parseBenchArgs(['--fast'], {})).toThrow(/--fast/);
	});
});
