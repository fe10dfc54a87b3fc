/** What both reports (report.ts for rows 1-4, latencyReport.ts for rows 6-10) are made of: a
 * figure with its goal and verdict, and how they word numbers and call counts. */
import { DETAIL, REFRESH, SEND, SEND_LIST, USER_LIST } from '../devkit/endpoints';
import { totalCalls } from './measure';
import type { Counts } from './measure';

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

export const verdictOf = (ok: boolean): Verdict => (ok ? 'pass' : 'FAIL');

/** 10000 -> "10,000". */
export const fmtK = (value: number) => value.toLocaleString('en-US');

/** The calls `counts` holds for one endpoint. */
export const count = (counts: Counts, endpoint: string) => counts[endpoint] ?? 0;

/** The same number in every run, or the runs' values listed. */
export function constant(values: number[]): string {
	return new Set(values).size === 1 ? String(values[0]) : values.join('/');
}

const CALL_NAMES: Record<string, string> = {
	[REFRESH]: 'refresh',
	[SEND]: 'send',
	[USER_LIST]: 'user-list',
	[SEND_LIST]: 'list',
	[DETAIL]: 'detail',
};

/** "5 send + 1 refresh", or "none". */
export function describeCalls(counts: Counts): string {
	return (
		Object.entries(counts)
			.map(([endpoint, value]) => `${value} ${CALL_NAMES[endpoint] ?? endpoint}`)
			.join(' + ') || 'none'
	);
}

/** The node's calls in the runs of a send case, "N sends + N refresh [+ N other] [(errors)]", and
 * whether they are exactly `expectedSends` sends, at most one refresh, nothing else and no error. */
export function sendCalls(runs: Array<{ node: { counts: Counts; error?: string } }>, expectedSends: number): { measured: string; verdict: Verdict } {
	const sends = runs.map((run) => count(run.node.counts, SEND));
	const refresh = runs.map((run) => count(run.node.counts, REFRESH));
	const other = runs.map((run) => totalCalls(run.node.counts) - count(run.node.counts, SEND) - count(run.node.counts, REFRESH));
	const errors = runs.map((run) => run.node.error).filter(Boolean);
	const callsOk = sends.every((n) => n === expectedSends) && refresh.every((n) => n <= 1) && other.every((n) => n === 0);
	return {
		measured: `${constant(sends)} sends + ${constant(refresh)} refresh${other.some((n) => n > 0) ? ` + ${constant(other)} other` : ''}${errors.length ? ` (errors: ${errors.join('; ')})` : ''}`,
		verdict: verdictOf(callsOk && errors.length === 0),
	};
}
