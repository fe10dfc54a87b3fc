/**
 * The latency suite (row 9): Send under the API's rate limit, on a second sandbox in this process,
 * on the real clock (its rate-limit buckets follow it), holding every answer `latencyMs` (0 and
 * 40 ms, real time), so what the node does while it waits decides. The node runs in-process as in
 * the core suite (bench/coreSuite.cts).
 */
import type { Sandbox } from '../sandbox/index.cts';
import { SEND } from '../devkit/endpoints.cts';
import { nodeSend } from './coreSuite.cts';
import { ms, ratio } from './measure.cts';
import { describeCalls, fmtK, verdictOf } from './report.cts';
import type { Figure, SuiteReport } from './report.cts';

export const FULL_LATENCY_SCALE = {
	/** Users of the sandbox's primary organization (at least the items). */
	users: 1000,
	latencies: [0, 40],
	/** Row 9: items under the sandbox's rate limit, and the bound of the run. */
	rateLimitItems: 500,
	rateLimitPerSecond: 50,
	rateLimitBoundMs: 90_000,
};
export type LatencyScale = typeof FULL_LATENCY_SCALE;

/** Row 9's goal: the run's time over the time the limit itself imposes. */
const RATE_LIMIT_GOAL = 1.1;

/**
 * Runs `body`; if it lasts longer than `boundMs`, the sandbox starts refusing `endpoint` with 400,
 * which makes the node end its run soon (what it waits for fails at once): a slow node does not
 * take the bench's whole time, and the result says it happened.
 */
async function bounded<T>(
	sandbox: Sandbox,
	boundMs: number,
	endpoint: string,
	body: () => Promise<T>,
) {
	let boundHit = false;
	const timer = setTimeout(() => {
		boundHit = true;
		sandbox.addFault({ endpoint, kind: 'status4xx', status: 400, share: 1 });
	}, boundMs);
	try {
		return { value: await body(), boundHit };
	} finally {
		clearTimeout(timer);
		sandbox.clearFaults();
	}
}

let rateLimitedRuns = 0;

/**
 * Row 9: `items` items, one send each, under the sandbox's rate limit (the node at its defaults). The
 * node's pace after a 429 lives in process memory per credential id: an id of its own per run keeps
 * the other cases unaffected. The bucket starts full (max(1, rate) requests) and refills at `rate`
 * per second, so `n` requests need (n - burst) / rate seconds at least, plus the latency of the last answer.
 */
async function underRateLimit(sandbox: Sandbox, scale: LatencyScale, latencyMs: number) {
	const { rateLimitItems: items, rateLimitPerSecond: ratePerSecond } = scale;
	const userIds = sandbox.orgs.primary.userIds.slice(0, items);
	const side = {
		settings: { latencyMs, rateLimitPerSecond: ratePerSecond },
		credentialId: `bench-rate-limited-${++rateLimitedRuns}`,
	};
	const { value, boundHit } = await bounded(sandbox, scale.rateLimitBoundMs, SEND, () =>
		nodeSend(
			sandbox,
			userIds.map((id) => ({ id })),
			'={{ $json.id }}',
			{},
			side,
		),
	);
	const { items: output, ...timed } = value;
	const log = sandbox.requestLog();
	const sendsPerUser = new Map<string, number>();
	for (const entry of log.filter((entry) => entry.endpoint === SEND && entry.notificationId)) {
		const key = JSON.stringify((entry.body as { target_user_ids?: unknown }).target_user_ids);
		sendsPerUser.set(key, (sendsPerUser.get(key) ?? 0) + 1);
	}
	const registered = [...sendsPerUser.values()].reduce((sum, n) => sum + n, 0);
	const withId = new Set(
		output
			.filter((json) => typeof json.id === 'string' && json.error === undefined)
			.map((json) => JSON.stringify(json.targetUserIds)),
	);
	return {
		...timed,
		items,
		ratePerSecond,
		latencyMs,
		/** Input items that did not end with a send id; sends registered beyond one per recipient. */
		failedItems: items - withId.size,
		duplicates: registered - sendsPerUser.size,
		registered,
		refused: log.filter((entry) => entry.limitedBy === 'rateLimitPerSecond').length,
		allowedMs:
			(Math.max(0, items + 1 - Math.max(1, ratePerSecond)) / ratePerSecond) * 1000 + latencyMs,
		boundHit,
	};
}

export type LatencyResults = Awaited<ReturnType<typeof runLatencySuite>>;

export async function runLatencySuite(
	sandbox: Sandbox,
	scale: LatencyScale,
	log: (line: string) => void = () => {},
) {
	const started = Date.now();
	if (sandbox.orgs.primary.userIds.length < scale.rateLimitItems)
		throw new Error(
			`the sandbox has too few users; the latency scale needs ${scale.rateLimitItems}`,
		);
	// Warm-up (not counted): the send path once.
	await nodeSend(sandbox, [{ id: sandbox.orgs.primary.userIds[0] }], '={{ $json.id }}');
	const rateLimited = [];
	try {
		for (const latencyMs of scale.latencies) {
			log(
				`${latencyMs} ms: ${scale.rateLimitItems} items, a rate limit of ${scale.rateLimitPerSecond}/s`,
			);
			rateLimited.push(await underRateLimit(sandbox, scale, latencyMs));
		}
	} finally {
		await sandbox.reset();
	}
	return { scale, rateLimited, totalMs: Date.now() - started };
}

// ---- the figures ---------------------------------------------------------------------------------------

function rateLimitRows(
	figures: Figure[],
	misses: string[],
	r: LatencyResults['rateLimited'][number],
): void {
	const wallRatio = r.ms / r.allowedMs;
	const burst = Math.max(1, r.ratePerSecond);
	const name = `${fmtK(r.items)} items under a rate limit of ${r.ratePerSecond}/s, at ${r.latencyMs} ms`;
	const cleanOk = r.failedItems === 0 && r.duplicates === 0 && !r.error;
	const timeOk = wallRatio <= RATE_LIMIT_GOAL && !r.boundHit;
	figures.push({
		row: '9',
		figure: `${name}: failed items, duplicates`,
		measured: `${r.failedItems} failed, ${r.duplicates} duplicates; ${r.registered} sends registered, ${r.refused} requests refused with 429${r.error ? `; node error: ${r.error}` : ''}${r.boundHit ? '; stopped by the bench bound' : ''}`,
		goal: '0 failed, 0 duplicates',
		verdict: verdictOf(cleanOk),
		how: `One workflow run (the node at its defaults, one send per item, one recipient each) with the sandbox's rateLimitPerSecond = ${r.ratePerSecond} (token bucket per credential, burst ${burst}, refilled on the real clock; over it: 429 with Retry-After and no effect). Failed = items without a send id in the output; duplicates = sends the sandbox registered beyond one per recipient (its request log).`,
	});
	figures.push({
		row: '9',
		figure: `${name}: wall time / what the limit allows`,
		measured: `${ratio(wallRatio)}: ${ms(r.ms)} vs ${ms(r.allowedMs)}; calls ${describeCalls(r.counts)}${r.latencyMs > 0 ? `; peak in flight ${r.peakInFlight}` : ''}`,
		goal: `<= ${RATE_LIMIT_GOAL}x`,
		verdict: verdictOf(timeOk),
		how: `What the limit allows: the job's ${r.items + 1} requests (the sends and one refresh) through a bucket that starts full (${burst}) and refills ${r.ratePerSecond}/s: (${r.items + 1} - ${burst}) / ${r.ratePerSecond} s, plus one answer's latency.`,
	});
	if (!cleanOk || !timeOk)
		misses.push(
			`Row 9 at ${r.latencyMs} ms (${r.failedItems} failed, ${r.duplicates} duplicates of ${r.registered} sends registered; ${ratio(wallRatio)} of the ${ms(r.allowedMs)} the limit allows${r.error ? `; the node stopped on "${r.error}"` : ''}): ${r.refused} requests were refused with 429. Between refusals the pace leaves the bucket little to spare; the time goes at the start (the requests leave as the process builds them, and those out before the first 429 is heard are refused and wait out its pause) and at the end (Retry-After is in whole seconds, at least 1 s: the last pause waits out a whole second for the few items left).`,
		);
}

export function latencyFiguresOf(results: LatencyResults): SuiteReport {
	const figures: Figure[] = [];
	const misses: string[] = [];
	const { scale } = results;
	for (const run of results.rateLimited) rateLimitRows(figures, misses, run);
	const setup = [
		`- Sandbox (row 9): a second one in the same process, on the real clock, ${fmtK(scale.users)} users, reset before every measured run and then given the case's settings: latencyMs ${scale.latencies.join(' / ')} (every answer held that long, real time), rateLimitPerSecond ${scale.rateLimitPerSecond}. Once per latency, after a warm-up. ${(results.totalMs / 1000).toFixed(0)} s.`,
	];
	return { figures, misses, setup };
}
