/**
 * The benchmark's core suite (rows 1-4) at a very small scale, so `npm test` proves `npm run bench`
 * still works. Asserts call counts and that the report renders; never times (timing is the bench's job).
 */
import { DETAIL, REFRESH, SEND, SEND_LIST, USER_LIST, useSandbox } from '../harness/index.cts';
import { coreFiguresOf, runCoreSuite } from '../../bench/coreSuite.cts';
import type { CoreResults, Scale } from '../../bench/coreSuite.cts';
import { totalCalls } from '../../bench/measure.cts';
import { markdownTable } from '../../bench/report.cts';
import { resultsMarkdown } from '../../bench/run.cts';

const SMALL: Scale = {
	users: 2000,
	recipients: 2000,
	batchSize: 100,
	items: 20,
	pastSends: 200,
	moving: 5,
	movingPolls: 3,
	settledPolls: 4,
	reps: 1,
	triggerReps: 1,
};

describe('bench at a small scale', () => {
	const sandbox = useSandbox({ port: 0, seedUsers: SMALL.users, clock: 'manual' });
	let results: CoreResults;
	beforeAll(async () => {
		results = await runCoreSuite(sandbox, SMALL);
	}, 120_000);

	test('one Send to 2,000 recipients in batches of 100: 20 sends and 1 refresh', () => {
		const [run] = results.audience;
		expect(run.error).toBeUndefined();
		expect(run.outputItems).toBe(20);
		expect(run.counts).toEqual({ [REFRESH]: 1, [SEND]: 20 });
	});

	test('20 items, one send each: 20 sends and 1 refresh', () => {
		const [run] = results.perItem;
		expect(run.error).toBeUndefined();
		expect(run.outputItems).toBe(20);
		expect(run.counts).toEqual({ [REFRESH]: 1, [SEND]: 20 });
	});

	test('get all 2,000 users: 2 full pages and the empty page that ends the list, memory sampled', () => {
		const [run] = results.users;
		expect(run.error).toBeUndefined();
		expect(run.outputItems).toBe(2000);
		expect(run.jsonBytes).toBeGreaterThan(2000 * 50);
		expect(run.counts).toEqual({ [REFRESH]: 1, [USER_LIST]: 3 });
		expect(run.memory.samples).toBeGreaterThan(0);
	});

	test('trigger: the past is never read; 5 moving sends cost 1 list + 5 details per poll (+1 refresh when due)', () => {
		const [run] = results.trigger;
		expect(run.firstPoll).toEqual({ [REFRESH]: 1, [SEND_LIST]: 1 });
		expect(run.perPoll).toEqual([
			{ [SEND_LIST]: 1, [DETAIL]: 5 },
			{ [SEND_LIST]: 1, [DETAIL]: 5 },
			{ [REFRESH]: 1, [SEND_LIST]: 1, [DETAIL]: 5 },
		]);
		expect(run.emitted).toEqual([0, 0, 0]);
		// Settled: every send is read (and its events emitted) once it settles, then with back-off.
		expect(run.settledPerPoll[0]).toEqual({ [SEND_LIST]: 1, [DETAIL]: 5 });
		expect(run.settledEmitted[0]).toBeGreaterThan(0);
		for (const calls of [...run.perPoll, ...run.settledPerPoll])
			expect(totalCalls(calls)).toBeLessThanOrEqual(7);
	});

	test('the report renders every row with its goal, and call-count verdicts follow the counts', () => {
		const { figures, misses } = coreFiguresOf(results);
		expect(new Set(figures.map((figure) => figure.row))).toEqual(new Set(['1', '2', '3', '4']));
		const verdictOf = (row: string, start: string) =>
			figures.find((f) => f.row === row && f.figure.startsWith(start))?.verdict;
		expect(verdictOf('1', '2,000 recipients')).toBe('pass');
		expect(verdictOf('2', '20 input items')).toBe('pass');
		expect(verdictOf('3', 'Get all')).toBe('pass'); // 3 calls for 2 pages: the empty page ends the list
		expect(verdictOf('4', 'Trigger')).toBe('pass');
		expect(misses).toEqual([]);
		// A run with one send too many fails its goal.
		const [first] = results.perItem;
		const extra = { ...first, counts: { ...first.counts, [SEND]: 21 } };
		const failing = coreFiguresOf({ ...results, perItem: [extra] });
		expect(failing.figures.find((f) => f.row === '2')).toMatchObject({
			measured: '21 sends + 1 refresh',
			verdict: 'FAIL',
		});
		expect(markdownTable(figures).split('\n')).toHaveLength(figures.length + 2);
		const markdown = resultsMarkdown(
			{ core: results },
			{ date: 'today', node: process.version, machine: 'test', versions: {} },
		);
		expect(markdown).toContain('## How each figure was measured');
		expect(markdown).toContain('## Goals missed, and why');
	});
});
