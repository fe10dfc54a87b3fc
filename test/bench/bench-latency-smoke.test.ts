/**
 * The latency suite (rows 6-10) at a very small scale, without the real n8n (its peer is covered by
 * the workflow and run-data checks below): proves `npm run bench -- --only latency` still works.
 * Asserts call counts, structure and that the report renders; never times.
 */
import type { LoggedRequest } from '../../sandbox';
import { latencyFiguresOf } from '../../bench/latencyReport';
import { LATENCY_GROUPS, runLatencySuite } from '../../bench/latencySuite';
import type { LatencyResults, LatencyScale } from '../../bench/latencySuite';
import { DETAIL, REFRESH, SEND, SEND_LIST, useSandbox } from '../harness';
import { httpNodeName, httpRequestWorkflow, peerRunOf } from '../../bench/n8nPeer';
import { resultsMarkdown } from '../../bench/report';
import { parseBenchArgs } from '../../bench/run';
import { RunResult } from '../../devkit/n8nWorkflow';

const SMALL: LatencyScale = {
	users: 2000,
	latencies: [5],
	itemCounts: [10],
	recipients: 2000,
	batchSize: 100,
	waitSends: 4,
	deliveryMs: 200,
	waitBoundMs: 30_000,
	rateLimitItems: 30,
	rateLimitPerSecond: 20,
	rateLimitBoundMs: 30_000,
	triggerReads: 5,
	triggerPolls: 2,
	reps: 1,
	peer: false,
	groups: [...LATENCY_GROUPS],
};

describe('latency bench at a small scale (no real n8n)', () => {
	const sandbox = useSandbox({ port: 0, seedUsers: SMALL.users, clock: 'real' });
	let results: LatencyResults;
	beforeAll(async () => {
		results = await runLatencySuite(sandbox, SMALL);
	}, 120_000);

	test("raw undici runs at the node's default parallelism, read from its description", () => {
		expect(results.parallel.value).toBeGreaterThanOrEqual(1);
		expect(results.peerSkipped).toMatch(/not asked/);
	});

	test('10 items, one send each: 10 sends and 1 refresh on every side', () => {
		const [at] = results.atLatency;
		const [run] = at.items[0].runs;
		expect(run.node.error).toBeUndefined();
		expect(run.node.outputItems).toBe(10);
		for (const side of [run.node, run.rawParallel, run.rawAll]) expect(side.counts).toEqual({ [REFRESH]: 1, [SEND]: 10 });
		expect(run.rawAll.connections).toBe(10); // every request at once, one connection each
		expect(run.peer).toBeUndefined();
	});

	test('2,000 recipients in batches of 100: 20 sends on every side', () => {
		const [run] = results.atLatency[0].batches;
		for (const side of [run.node, run.rawParallel, run.rawAll]) expect(side.counts).toEqual({ [REFRESH]: 1, [SEND]: 20 });
	});

	test('Wait for Final Status: every send followed to its final status', () => {
		const { one, many } = results.atLatency[0].wait!;
		expect(one.sends).toBe(1);
		expect(many.sends).toBe(4);
		expect(many.boundHit).toBe(false);
		expect(many.finalReached).toBe(4);
		expect(many.counts[SEND]).toBe(4);
		// Followed in the list of sends (status and counters), no detail read.
		expect(many.counts[SEND_LIST]).toBeGreaterThanOrEqual(1);
		expect(many.counts[DETAIL] ?? 0).toBe(0);
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
		for (const poll of t.polls) expect(poll.counts).toEqual({ [SEND_LIST]: 1, [DETAIL]: 5 });
		expect(t.raw.counts).toEqual({ [SEND_LIST]: 1, [DETAIL]: 5 });
	});

	test('the report renders rows 6 to 10; below 40 ms the peer goals are context', () => {
		const { figures } = latencyFiguresOf(results);
		expect(new Set(figures.map((figure) => figure.row))).toEqual(new Set(['6', '7', '8', '9', '10']));
		const calls = figures.find((f) => f.row === '6' && f.figure.endsWith('API calls of the node'));
		expect(calls?.verdict).toBe('pass');
		expect(figures.find((f) => f.row === '6' && f.figure.includes('HTTP Request'))?.measured).toMatch(/not measured/);
		expect(figures.filter((f) => f.row === '6' || f.row === '7').every((f) => f.figure.endsWith('API calls of the node') || f.verdict === '—')).toBe(true);
		const markdown = resultsMarkdown({ latency: results }, { date: 'today', node: process.version, machine: 'test', versions: {} });
		expect(markdown).toContain('rows 6-10');
		expect(markdown).toContain('## Goals missed, and why');
	});
});

describe("the HTTP Request node peer's workflow and run data", () => {
	const chain = { name: '2 items', title: 'Bench 2 items', recipients: [['u1'], ['u2']] };

	test('Manual Trigger -> Code node (the items) -> HTTP Request POST with a bearer header and a JSON body', () => {
		const workflow = httpRequestWorkflow('wf', 'http://127.0.0.1:1', 'TOKEN', [chain]) as any;
		const http = workflow.nodes.find((node: any) => node.name === httpNodeName(chain));
		expect(http.type).toBe('n8n-nodes-base.httpRequest');
		expect(http.parameters).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:1/push-notification/send', sendBody: true, specifyBody: 'json' });
		expect(http.parameters.headerParameters.parameters).toEqual([{ name: 'Authorization', value: 'Bearer TOKEN' }]);
		expect(http.parameters.jsonBody).toContain('"title": "Bench 2 items"');
		const items = workflow.nodes.find((node: any) => node.name === 'Items 2 items');
		expect(items.parameters.jsCode).toContain('"userIds":["u1"]');
		expect(workflow.connections['Items 2 items'].main[0][0].node).toBe(httpNodeName(chain));
	});

	test("a chain's figures come from n8n's run data and the sandbox log entries with its title", () => {
		const run = {
			status: 'success',
			data: { resultData: { runData: { [httpNodeName(chain)]: [{ startTime: 1000, executionTime: 250, data: { main: [[{ json: {} }, { json: {} }]] } }] } } },
		};
		const entry = (title: string, status: number) => ({ endpoint: SEND, body: { title }, status }) as unknown as LoggedRequest;
		const log = [entry('Bench 2 items', 202), entry('Bench 2 items', 202), entry('Bench warm-up', 202)];
		const peer = peerRunOf(new RunResult(0, run, '', 5000), chain, { requestLog: () => log });
		expect(peer).toMatchObject({ ms: 250, outputItems: 2, sends: 2, statuses: { 202: 2 } });
	});
});

describe('bench command line', () => {
	test('everything by default; --only picks groups; partial runs are flagged', () => {
		expect(parseBenchArgs([], {})).toMatchObject({ core: true, groups: [...LATENCY_GROUPS], latencies: [0, 40], peer: true, complete: true });
		expect(parseBenchArgs(['--only', 'latency', '--no-peer'], {})).toMatchObject({ core: false, groups: [...LATENCY_GROUPS], peer: false, complete: false });
		expect(parseBenchArgs(['--only=wait,trigger', '--latencies', '40'], {})).toMatchObject({ core: false, groups: ['wait', 'trigger'], latencies: [40] });
		expect(parseBenchArgs(['--only', 'core'], { BENCH_REPS: '2' })).toMatchObject({ core: true, groups: [], reps: 2 });
		expect(parseBenchArgs(['--from-json', 'saved.json'], {})).toMatchObject({ fromJson: 'saved.json', complete: false });
		expect(() => parseBenchArgs(['--only', 'nothing'], {})).toThrow(/unknown nothing/);
		expect(() => parseBenchArgs(['--latency-reps', '0'], {})).toThrow(/whole number/);
	});
});
