/** What every suite's report is made of: a figure with its goal and verdict, how numbers and call
 * counts are worded, and the tables of the terminal and of RESULTS.md. */
import { DETAIL, REFRESH, SEND, SEND_LIST, USER_LIST } from '../devkit/endpoints.cts';
import { totalCalls } from './measure.cts';
import type { Counts } from './measure.cts';

export type Verdict = 'pass' | 'FAIL' | '—';

export interface Figure {
	row: string;
	figure: string;
	measured: string;
	goal: string;
	verdict: Verdict;
	/** How it was measured, one sentence. */
	how: string;
}

/** A suite's figures, the causes of its missed goals, and the lines RESULTS.md gives its setup. */
export interface SuiteReport {
	figures: Figure[];
	misses: string[];
	setup: string[];
}

export const verdictOf = (ok: boolean): Verdict => (ok ? 'pass' : 'FAIL');

/** 10000 -> "10,000". */
export const fmtK = (value: number) => value.toLocaleString('en-US');

/** The calls `counts` holds for one endpoint. */
export const count = (counts: Counts, endpoint: string) => counts[endpoint] ?? 0;

/** The same number in every run, or the runs' values listed. */
export const constant = (values: number[]) =>
	new Set(values).size === 1 ? String(values[0]) : values.join('/');

const CALL_NAMES: Record<string, string> = {
	[REFRESH]: 'refresh',
	[SEND]: 'send',
	[USER_LIST]: 'user-list',
	[SEND_LIST]: 'list',
	[DETAIL]: 'detail',
};

/** "5 send + 1 refresh", or "none". */
export const describeCalls = (counts: Counts) =>
	Object.entries(counts)
		.map(([endpoint, value]) => `${value} ${CALL_NAMES[endpoint] ?? endpoint}`)
		.join(' + ') || 'none';

/** The node's calls in the runs of a send case, "N sends + N refresh [+ N other] [(errors)]", and
 * whether they are exactly `expectedSends` sends, at most one refresh, nothing else and no error. */
export function sendCalls(
	runs: Array<{ counts: Counts; error?: string }>,
	expectedSends: number,
): { measured: string; verdict: Verdict } {
	const sends = runs.map((run) => count(run.counts, SEND));
	const refresh = runs.map((run) => count(run.counts, REFRESH));
	const other = runs.map((run, index) => totalCalls(run.counts) - sends[index] - refresh[index]);
	const errors = runs.map((run) => run.error).filter(Boolean);
	const ok =
		sends.every((n) => n === expectedSends) &&
		refresh.every((n) => n <= 1) &&
		other.every((n) => n === 0) &&
		errors.length === 0;
	return {
		measured: `${constant(sends)} sends + ${constant(refresh)} refresh${other.some((n) => n > 0) ? ` + ${constant(other)} other` : ''}${errors.length ? ` (errors: ${errors.join('; ')})` : ''}`,
		verdict: verdictOf(ok),
	};
}

const escapeCell = (text: string) => text.replace(/\|/g, '\\|');

export function markdownTable(figures: Figure[]): string {
	const lines = [
		'| Row | Figure | Measured (median, min–max) | Goal | Result |',
		'|---|---|---|---|---|',
	];
	for (const f of figures)
		lines.push(
			`| ${f.row} | ${escapeCell(f.figure)} | ${escapeCell(f.measured)} | ${escapeCell(f.goal)} | ${f.verdict} |`,
		);
	return lines.join('\n');
}

/** The figures for the terminal, one a line: row, verdict, figure, measured, goal. */
export const consoleLines = (figures: Figure[]) =>
	figures
		.map(
			(f) =>
				`${f.row.padStart(2)} ${f.verdict.padEnd(4)} ${f.figure}: ${f.measured}${f.goal.startsWith('—') ? '' : ` (goal ${f.goal})`}`,
		)
		.join('\n');
