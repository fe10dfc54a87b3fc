/**
 * The benchmark's ladder suite (row 5) at a small scale, so `npm test` proves it still runs and
 * counts right. Asserts counts, never times (timing is the bench's job).
 */
import { useSandbox } from '../harness/index.cts';
import { ladderFiguresOf, runLadderSuite } from '../../bench/ladderSuite.cts';
import type { LadderResults, LadderScale } from '../../bench/ladderSuite.cts';
import { totalCalls } from '../../bench/measure.cts';

const SMALL: LadderScale = { users: 3000, sends: 10, peoplePerSend: 100, minutes: 50 };

describe('bench: the alert ladder at a small scale', () => {
	const sandbox = useSandbox({ port: 0, seedUsers: SMALL.users, clock: 'manual' });
	let results: LadderResults;
	beforeAll(async () => {
		results = await runLadderSuite(sandbox, SMALL);
	}, 240_000);

	test('1,000 people: each event told to exactly those the opens say, none twice, every send still watched', () => {
		expect(results.people).toBe(1000);
		// 70% open early, 20% never, 6% from minute 20 to 40 (half of them after 30), 4% no phone.
		expect(results.expected).toEqual({
			noDevice: 40,
			'level 1': 260,
			'level 2': 230,
			'level 3': 200,
			openedAfterEscalation: 60,
		});
		expect(results.told).toEqual(results.expected);
		expect(results.twice).toBe(0);
		expect(results.watched).toBe(10);
	});

	test('every poll within the cost bound, the static data measured at each, the report renders', () => {
		expect(results.polls).toHaveLength(50);
		for (const poll of results.polls) expect(totalCalls(poll.calls)).toBeLessThanOrEqual(12);
		expect(Math.max(...results.polls.map((poll) => poll.staticChars))).toBeGreaterThan(300 * 24);
		expect(results.memory.samples).toBeGreaterThan(0);
		const { figures } = ladderFiguresOf(results);
		expect(figures.map((figure) => [figure.row, figure.verdict])).toEqual([
			['5', 'pass'],
			['5', 'pass'],
			['5', 'pass'],
		]);
	});
});
