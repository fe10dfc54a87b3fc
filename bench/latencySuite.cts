/**
 * The latency suite (rows 6-10), on a second sandbox in this process, on the real clock (deliveries
 * and rate-limit buckets follow it), holding every answer `latencyMs` (0 and 40 ms, real time), so
 * what a client does while it waits decides. The node runs in-process as in the core suite
 * (bench/coreSuite.cts), against raw undici at the node's default parallelism and with every
 * request at once; a rate limit; the trigger with reads due. (Wait for Final Status is measured in
 * the real n8n, row 14.) The timed sides
 * of a case are interleaved within each repetition. (The node against n8n's HTTP Request node, both
 * in a real n8n: bench/n8nSuite.cts.)
 */
import { performance } from 'node:perf_hooks';

import type { INodeProperties } from 'n8n-workflow';

import { CompanionPush } from '../nodes/CompanionPush/CompanionPush.node';
import type { Sandbox, SandboxSettings } from '../sandbox/index.cts';
import { SEND } from '../devkit/endpoints.cts';
import { storeFor } from '../devkit/fixtures.cts';
import {
	activeTrigger,
	makeRawSends,
	nodeSend,
	nodeSendAudience,
	nodeSendPerItem,
	oneRecipientSends,
} from './coreSuite.cts';
import type { NodeTimed } from './coreSuite.cts';
import {
	batchesOf,
	clearInFlight,
	countsSince,
	interleaved,
	med,
	ms,
	peakInFlight,
	rawSends,
	ratio,
	spread,
} from './measure.cts';
import type { Timed } from './measure.cts';
import { constant, describeCalls, fmtK, sendCalls, verdictOf } from './report.cts';
import type { Figure, SuiteReport } from './report.cts';

export const LATENCY_GROUPS = ['send', 'batches', 'ratelimit', 'trigger'] as const;
export type LatencyGroup = (typeof LATENCY_GROUPS)[number];

export const FULL_LATENCY_SCALE = {
	/** Users of the sandbox's primary organization (at least `recipients` and every item count). */
	users: 100_000,
	latencies: [0, 40],
	/** Row 6: items of one recipient each, one send per item. Row 7: one Send to `recipients` in batches. */
	itemCounts: [200, 1000],
	recipients: 100_000,
	batchSize: 1000,
	/** Row 9: items under the sandbox's rate limit, and the bound of the run. */
	rateLimitItems: 500,
	rateLimitPerSecond: 50,
	rateLimitBoundMs: 90_000,
	/** Row 10: the trigger with this many reads due, polls timed. */
	triggerReads: 50,
	triggerPolls: 3,
	/** Repetitions of the timed send cases (rows 6, 7). */
	reps: 3,
	groups: [...LATENCY_GROUPS] as LatencyGroup[],
};
export type LatencyScale = typeof FULL_LATENCY_SCALE;

/** The default of Send's option "Max Parallel Requests", read from the node's description as the editor shows it. */
export function nodeDefaultParallel(): number {
	for (const property of new CompanionPush().description.properties) {
		if (
			property.name !== 'options' ||
			!(property.displayOptions?.show?.operation ?? []).includes('send') ||
			!Array.isArray(property.options)
		)
			continue;
		const option = (property.options as INodeProperties[]).find(
			(candidate) => candidate.name === 'maxParallelRequests',
		);
		if (option && typeof option.default === 'number' && option.default >= 1) return option.default;
	}
	throw new Error(
		"Send has no option Max Parallel Requests with a default: raw undici's parallelism is read from it",
	);
}

/**
 * Runs `body`; if it lasts longer than `boundMs`, the sandbox starts refusing `endpoints` with 400,
 * which makes the node end its run soon (what it waits for fails at once): a slow node does not
 * take the bench's whole time, and the result says it happened.
 */
async function bounded<T>(
	sandbox: Sandbox,
	boundMs: number,
	endpoints: string[],
	body: () => Promise<T>,
): Promise<{ value: T; boundHit: boolean }> {
	let boundHit = false;
	const timer = setTimeout(() => {
		boundHit = true;
		for (const endpoint of endpoints)
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
 * Row 9: `items` items, one send each, under `ratePerSecond` (the node at its defaults). The node's
 * pace after a 429 lives in process memory per credential id: an id of its own per run keeps the
 * other cases unaffected. The bucket starts full (max(1, rate) requests) and refills at `rate` per
 * second, so `n` requests need (n - burst) / rate seconds at least, plus the latency of the last answer.
 */
async function nodeUnderRateLimit(
	sandbox: Sandbox,
	items: number,
	ratePerSecond: number,
	latencyMs: number,
	boundMs: number,
) {
	const userIds = sandbox.orgs.primary.userIds.slice(0, items);
	const side = {
		settings: { latencyMs, rateLimitPerSecond: ratePerSecond },
		credentialId: `bench-rate-limited-${++rateLimitedRuns}`,
	};
	const { value, boundHit } = await bounded(sandbox, boundMs, [SEND], () =>
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

/**
 * Row 10: the trigger in an active workflow; after its activation poll, `reads` sends go out that stay
 * `sending` (deliveries take 10 minutes), so every following poll reads each of them: one list call
 * and `reads` detail reads.
 */
async function triggerReadsDue(sandbox: Sandbox, reads: number, polls: number, latencyMs: number) {
	await sandbox.reset();
	sandbox.configure({ latencyMs, deliveryMs: 10 * 60_000 });
	const poll = activeTrigger(storeFor(sandbox));
	const timedPoll = async () => {
		const before = sandbox.counts();
		clearInFlight();
		const started = performance.now();
		await poll();
		return {
			ms: performance.now() - started,
			counts: countsSince(before, sandbox.counts()),
			peakInFlight: peakInFlight(),
		};
	};
	const activation = (await timedPoll()).counts;
	await makeRawSends(sandbox, oneRecipientSends(sandbox, reads, 'Due'));
	const measuredPolls: Array<Awaited<ReturnType<typeof timedPoll>>> = [];
	for (let index = 0; index < polls; index++) measuredPolls.push(await timedPoll());
	return { latencyMs, reads, activation, polls: measuredPolls };
}

/** One repetition of a send case: the node at its defaults, raw undici at its parallelism and with every request at once. */
type SendSides = { node: NodeTimed; rawParallel: Timed; rawAll: Timed };

export type LatencyResults = Awaited<ReturnType<typeof runLatencySuite>>;
type AtLatency = LatencyResults['atLatency'][number];

export async function runLatencySuite(
	sandbox: Sandbox,
	scale: LatencyScale,
	log: (line: string) => void = () => {},
) {
	const started = Date.now();
	const userIds = sandbox.orgs.primary.userIds;
	const needed = Math.max(
		scale.recipients,
		...scale.itemCounts,
		scale.rateLimitItems,
		scale.triggerReads,
	);
	if (userIds.length < needed)
		throw new Error(`the sandbox has ${userIds.length} users; the latency scale needs ${needed}`);
	const parallel = nodeDefaultParallel();
	log(
		`latency suite: ${scale.groups.join(', ')} at ${scale.latencies.join(' and ')} ms; raw undici at ${parallel} in parallel (the node's default Max Parallel Requests)`,
	);
	const audience = userIds.slice(0, scale.recipients);
	const sendSides = (
		rep: number,
		node: () => Promise<NodeTimed>,
		batches: string[][],
		settings: Partial<SandboxSettings>,
	): Promise<SendSides> =>
		interleaved(rep, {
			node,
			rawParallel: () => rawSends(sandbox, batches, parallel, settings),
			rawAll: () => rawSends(sandbox, batches, Infinity, settings),
		});

	// Warm-up (not counted), at the first latency.
	const warm = { latencyMs: scale.latencies[0] ?? 0 };
	await sendSides(
		0,
		() => nodeSendPerItem(sandbox, userIds.slice(0, 20), warm),
		batchesOf(userIds.slice(0, 20), 1),
		warm,
	);
	await nodeSendAudience(sandbox, userIds.slice(0, 2000), 1000, warm);

	const atLatency = [];
	try {
		for (const latencyMs of scale.latencies) {
			const settings = { latencyMs };
			const at = {
				latencyMs,
				/** Row 6, per item count; row 7. */
				items: scale.itemCounts.map((items) => ({ items, runs: [] as SendSides[] })),
				batches: [] as SendSides[],
				rateLimited: undefined as Awaited<ReturnType<typeof nodeUnderRateLimit>> | undefined,
				trigger: undefined as Awaited<ReturnType<typeof triggerReadsDue>> | undefined,
			};
			atLatency.push(at);
			for (
				let rep = 0;
				rep < scale.reps && (scale.groups.includes('send') || scale.groups.includes('batches'));
				rep++
			) {
				log(
					`${latencyMs} ms, rep ${rep + 1}/${scale.reps}: ${scale.groups.filter((group) => group === 'send' || group === 'batches').join(', ')}`,
				);
				if (scale.groups.includes('send')) {
					for (const entry of at.items) {
						const ids = userIds.slice(0, entry.items);
						entry.runs.push(
							await sendSides(
								rep,
								() => nodeSendPerItem(sandbox, ids, settings),
								batchesOf(ids, 1),
								settings,
							),
						);
					}
				}
				if (scale.groups.includes('batches'))
					at.batches.push(
						await sendSides(
							rep,
							() => nodeSendAudience(sandbox, audience, scale.batchSize, settings),
							batchesOf(audience, scale.batchSize),
							settings,
						),
					);
			}
			if (scale.groups.includes('ratelimit')) {
				log(
					`${latencyMs} ms: ${scale.rateLimitItems} items under a rate limit of ${scale.rateLimitPerSecond}/s`,
				);
				at.rateLimited = await nodeUnderRateLimit(
					sandbox,
					scale.rateLimitItems,
					scale.rateLimitPerSecond,
					latencyMs,
					scale.rateLimitBoundMs,
				);
			}
			if (scale.groups.includes('trigger')) {
				log(
					`${latencyMs} ms: trigger, ${scale.triggerReads} reads due, ${scale.triggerPolls} polls`,
				);
				at.trigger = await triggerReadsDue(
					sandbox,
					scale.triggerReads,
					scale.triggerPolls,
					latencyMs,
				);
			}
		}
	} finally {
		await sandbox.reset();
	}
	return { scale, parallel, atLatency, totalMs: Date.now() - started };
}

// ---- the figures ---------------------------------------------------------------------------------------

export function latencyFiguresOf(results: LatencyResults): SuiteReport {
	const figures: Figure[] = [];
	const misses: string[] = [];
	const { scale, parallel: P } = results;
	const ats = results.atLatency;
	for (const items of scale.itemCounts) {
		for (const at of ats) {
			const runs = at.items.find((entry) => entry.items === items)?.runs ?? [];
			if (runs.length === 0) continue;
			sendCase(figures, P, at.latencyMs, {
				row: '6',
				name: `${fmtK(items)} items, one send each, at ${at.latencyMs} ms`,
				requests: items,
				runs,
				how: "One workflow run (Test Items -> Companion Push Send at its defaults, userIds = {{ $json.id }}, One Send per Input Item) in-process through n8n-core's WorkflowExecute, fresh credential (its refresh inside the figure); the sandbox holds every answer the figure's latency (latencyMs, real time).",
			});
		}
	}
	for (const at of ats.filter((candidate) => candidate.batches.length > 0)) {
		const requests = Math.ceil(scale.recipients / scale.batchSize);
		sendCase(figures, P, at.latencyMs, {
			row: '7',
			name: `${fmtK(scale.recipients)} recipients in batches of ${scale.batchSize}, at ${at.latencyMs} ms`,
			requests,
			runs: at.batches,
			how: `One workflow run (one input item holding the ids, userIds = {{ $json.ids }}, Batch Size ${scale.batchSize}) in-process as row 6.`,
		});
	}
	for (const at of ats) if (at.rateLimited) rateLimitCase(figures, misses, at.rateLimited);
	for (const at of ats) if (at.trigger) triggerCase(figures, at.trigger);
	const setup = [
		`- Sandbox (rows 6-10): a second one in the same process, on the real clock, ${fmtK(scale.users)} users, reset before every measured run and then given the case's settings: latencyMs ${scale.latencies.join(' / ')} (every answer held that long, real time), rateLimitPerSecond ${scale.rateLimitPerSecond} for row 9.`,
		`- Parallelism of raw undici "at the same parallelism": ${P} (the default of Send's option Max Parallel Requests, read from the node's description).`,
		`- Repetitions (rows 6-7): ${scale.reps} (sides interleaved, order rotated); rows 9-10 once per latency, after a warm-up. ${(results.totalMs / 1000).toFixed(0)} s.`,
	];
	return { figures, misses, setup };
}

interface SendCase {
	row: string;
	name: string;
	/** POSTs the job makes (sends). */
	requests: number;
	runs: SendSides[];
	how: string;
}

function sendCase(figures: Figure[], P: number, L: number, c: SendCase): void {
	const { runs } = c;
	figures.push({
		row: c.row,
		figure: `${c.name}: API calls of the node`,
		...sendCalls(runs, c.requests),
		goal: `exactly ${c.requests} sends, at most 1 refresh`,
		how: `${c.how} Sandbox request counts, in each of ${runs.length} runs.`,
	});
	figures.push({
		row: c.row,
		figure: `${c.name}: wall time, node / raw undici at the same parallelism (${P})`,
		measured: `${spread(
			runs.map((run) => run.node.ms / run.rawParallel.ms),
			ratio,
		)}; node ${ms(med(runs, (run) => run.node.ms))}, raw ${ms(med(runs, (run) => run.rawParallel.ms))}`,
		goal: '— (context)',
		verdict: '—',
		how: `performance.now() around the whole in-process workflow run vs around raw undici (a token, then the same POSTs, ${P}, the node's default Max Parallel Requests at most in flight on as many keep-alive connections), back to back in each of ${runs.length} repetitions (order rotated); ratio per repetition, median (min–max). Context, not a goal: as in rows 1-2, most of the node's work per request is n8n's HTTP helper, which a verified node must use (a new connection per request, the credential pipeline, axios), and in a pool that work adds to every round's wait; the goal against what a user would otherwise build is row 11's.`,
	});
	const rounds = Math.ceil(c.requests / P);
	const connections = (side: 'node' | 'rawParallel') =>
		constant(runs.map((run) => run[side].connections));
	figures.push({
		row: c.row,
		figure: `${c.name}: context`,
		measured:
			`raw undici, every request at once: ${ms(med(runs, (run) => run.rawAll.ms))} (node / it ${spread(
				runs.map((run) => run.node.ms / run.rawAll.ms),
				ratio,
			)}); ` +
			(L > 0
				? `latency floor at ${P} in parallel: ${rounds} round trips x ${L} ms = ${ms(rounds * L)}; peak requests in flight (medians): node ${med(runs, (run) => run.node.peakInFlight)}, raw ${P} ${med(runs, (run) => run.rawParallel.peakInFlight)}, raw all ${med(runs, (run) => run.rawAll.peakInFlight)}; `
				: `the node's time per request with no latency: ${(med(runs, (run) => run.node.nodeMs) / c.requests).toFixed(2)} ms; `) +
			`CPU time node / raw ${P} ${spread(
				runs.map((run) => run.node.cpuMs / run.rawParallel.cpuMs),
				ratio,
			)}; TCP connections node/raw ${P} ${connections('node')}/${connections('rawParallel')}`,
		goal: '—',
		verdict: '—',
		how: "Peak in flight: requests the sandbox had between arrival and the end of their answer (an answer held by latency included; node's diagnostics channels http.server.request.start / response.finish); at 0 ms answers are immediate, so it is not shown. CPU time is process.cpuUsage() (the in-process sandbox included, alike for both).",
	});
}

function rateLimitCase(
	figures: Figure[],
	misses: string[],
	r: NonNullable<AtLatency['rateLimited']>,
): void {
	const wallRatio = r.ms / r.allowedMs;
	const burst = Math.max(1, r.ratePerSecond);
	const name = `${fmtK(r.items)} items under a rate limit of ${r.ratePerSecond}/s, at ${r.latencyMs} ms`;
	const cleanOk = r.failedItems === 0 && r.duplicates === 0 && !r.error;
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
		goal: '<= 1.3x',
		verdict: verdictOf(wallRatio <= 1.3 && !r.boundHit),
		how: `What the limit allows: the job's ${r.items + 1} requests (the sends and one refresh) through a bucket that starts full (${burst}) and refills ${r.ratePerSecond}/s: (${r.items + 1} - ${burst}) / ${r.ratePerSecond} s, plus one answer's latency.`,
	});
	if (!cleanOk || wallRatio > 1.3 || r.boundHit) {
		misses.push(
			`Row 9 at ${r.latencyMs} ms (${r.failedItems} failed, ${r.duplicates} duplicates of ${r.registered} sends registered; ${ratio(wallRatio)} of the ${ms(r.allowedMs)} the limit allows${r.error ? `; the node stopped on "${r.error}"` : ''}): ${r.refused} requests were refused with 429 ` +
				`(Retry-After is in whole seconds, at least 1 s, so each pause after a refusal waits up to a second longer than the bucket needs); the limit lets ${r.ratePerSecond} requests a second through, so a client that paced itself at that rate would take about the time allowed.`,
		);
	}
}

function triggerCase(figures: Figure[], t: NonNullable<AtLatency['trigger']>): void {
	figures.push({
		row: '10',
		figure: `Trigger with ${t.reads} reads due, at ${t.latencyMs} ms: wall time of a poll`,
		measured:
			`${spread(
				t.polls.map((poll) => poll.ms),
				ms,
			)}; calls per poll ${[...new Set(t.polls.map((poll) => describeCalls(poll.counts)))].join(' or ')}${t.latencyMs > 0 ? `; peak in flight ${constant(t.polls.map((poll) => poll.peakInFlight))}` : ''}; ` +
			`activation poll ${describeCalls(t.activation)}`,
		goal: '— (report)',
		verdict: '—',
		how: `The trigger (all three events) polled as an active workflow polls it (n8n-core's TriggersAndPollers in a PollContext); after its activation poll, ${t.reads} sends go out that stay 'sending' (deliveries take 10 min), so each of the ${t.polls.length} timed polls lists and reads every one of them (Max Reads per Poll at its default, 50). performance.now() around each poll.`,
	});
}
