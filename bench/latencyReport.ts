/** The latency suite's figures (rows 6 to 10), their goals and verdicts, and the causes of misses. */
import { DETAIL, SEND_LIST } from '../devkit/endpoints';
import { constant, count, describeCalls, fmtK, sendCalls, verdictOf } from './figures';
import type { Figure } from './figures';
import { median, ms, ratio, spread } from './measure';
import type { AtLatency, LatencyResults, SendSides } from './latencySuite';

/** The goals comparing the node with raw undici apply from this sandbox latency up. */
export const GOAL_LATENCY_MS = 40;

const med = <T>(runs: T[], pick: (run: T) => number) => median(runs.map(pick));

/** The figures and misses of the latency suite, in latency order, case by case. */
export function latencyFiguresOf(results: LatencyResults): { figures: Figure[]; misses: string[] } {
	const figures: Figure[] = [];
	const misses: string[] = [];
	const { scale, parallel } = results;
	const P = parallel;
	const parallelNote = `${P}, the node's default Max Parallel Requests`;

	// Row by row, each at every latency (so a row's figures stand together).
	const ats = results.atLatency;
	const noLatency = ats.find((at) => at.latencyMs === 0);
	for (const count of scale.itemCounts) {
		for (const at of ats) {
			const entry = at.items.find((candidate) => candidate.items === count);
			if (!entry || entry.runs.length === 0) continue;
			sendCase(figures, misses, results, at, {
				row: '6',
				name: `${fmtK(entry.items)} items, one send each, at ${at.latencyMs} ms`,
				requests: entry.items,
				runs: entry.runs,
				zero: noLatency?.items.find((candidate) => candidate.items === count)?.runs,
				parallelNote,
				how: "One workflow run (Test Items -> Companion Push Send at its defaults, userIds = {{ $json.id }}, One Send per Input Item) in-process through n8n-core's WorkflowExecute, fresh credential (its refresh inside the figure); the sandbox holds every answer the figure's latency (latencyMs, real time).",
			});
		}
	}
	for (const at of ats) {
		if (at.batches.length === 0) continue;
		sendCase(figures, misses, results, at, {
			row: '7',
			name: `${fmtK(scale.recipients)} recipients in batches of ${scale.batchSize}, at ${at.latencyMs} ms`,
			requests: Math.ceil(scale.recipients / scale.batchSize),
			runs: at.batches,
			zero: noLatency?.batches,
			parallelNote,
			how: `One workflow run (one input item holding the ids, userIds = {{ $json.ids }}, Batch Size ${scale.batchSize}) in-process as row 6; the HTTP Request node pattern gets ${Math.ceil(scale.recipients / scale.batchSize)} items of ${scale.batchSize} ids from a Code node.`,
		});
	}
	for (const at of ats) if (at.wait) waitCase(figures, misses, results, at);
	for (const at of ats) if (at.rateLimited) rateLimitCase(figures, misses, at);
	for (const at of ats) if (at.trigger) triggerCase(figures, at);
	return { figures, misses };
}

interface SendCase {
	row: string;
	name: string;
	/** POSTs the job makes (sends). */
	requests: number;
	runs: SendSides[];
	parallelNote: string;
	how: string;
	/** The same case's runs with no latency, when measured: the sides' work per request alone. */
	zero?: SendSides[];
}

function sendCase(figures: Figure[], misses: string[], results: LatencyResults, at: AtLatency, c: SendCase): void {
	const P = results.parallel;
	const L = at.latencyMs;
	const withGoals = L >= GOAL_LATENCY_MS;
	const runs = c.runs;
	// Calls
	const calls = sendCalls(runs, c.requests);
	figures.push({
		row: c.row,
		figure: `${c.name}: API calls of the node`,
		measured: calls.measured,
		goal: `exactly ${c.requests} sends, at most 1 refresh`,
		verdict: calls.verdict,
		how: `${c.how} Sandbox request counts, in each of ${runs.length} runs.`,
	});

	const rounds = Math.ceil(c.requests / P);
	const latencyFloor = rounds * L;

	// The node against raw undici at the same parallelism
	const rawRatios = runs.map((run) => run.node.ms / run.rawParallel.ms);
	const rawOk = median(rawRatios) <= 1.3;
	figures.push({
		row: c.row,
		figure: `${c.name}: wall time, node / raw undici at the same parallelism (${P})`,
		measured: `${spread(rawRatios, ratio)}; node ${ms(med(runs, (run) => run.node.ms))}, raw ${ms(med(runs, (run) => run.rawParallel.ms))}`,
		goal: withGoals ? '<= 1.3x' : '— (context)',
		verdict: withGoals ? verdictOf(rawOk) : '—',
		how: `performance.now() around the whole in-process workflow run vs around raw undici (a token, then the same POSTs, ${c.parallelNote} at most in flight on as many keep-alive connections), back to back in each of ${runs.length} repetitions (order rotated); ratio per repetition, median (min–max).`,
	});
	if (withGoals && !rawOk) misses.push(rawMiss(c, P, L, median(rawRatios)));

	// Context
	const rawAllMs = med(runs, (run) => run.rawAll.ms);
	const connections = (pick: (run: SendSides) => number) => constant(runs.map(pick));
	figures.push({
		row: c.row,
		figure: `${c.name}: context`,
		measured:
			`raw undici, every request at once: ${ms(rawAllMs)} (node / it ${spread(runs.map((run) => run.node.ms / run.rawAll.ms), ratio)}); ` +
			(L > 0
				? `latency floor at ${P} in parallel: ${rounds} round trips x ${L} ms = ${ms(latencyFloor)}; ` +
					`peak requests in flight (medians): node ${med(runs, (run) => run.node.peakInFlight)}, raw ${P} ${med(runs, (run) => run.rawParallel.peakInFlight)}, raw all ${med(runs, (run) => run.rawAll.peakInFlight)}; `
				: `the node's time per request with no latency: ${(med(runs, (run) => run.node.nodeMs) / c.requests).toFixed(2)} ms; `) +
			`CPU time node / raw ${P} ${spread(runs.map((run) => run.node.cpuMs / run.rawParallel.cpuMs), ratio)}; TCP connections node/raw ${P} ${connections((run) => run.node.connections)}/${connections((run) => run.rawParallel.connections)}`,
		goal: '—',
		verdict: '—',
		how: "Peak in flight: requests the sandbox had between arrival and the end of their answer (an answer held by latency included; node's diagnostics channels http.server.request.start / response.finish); at 0 ms answers are immediate, so it is not shown. CPU time is process.cpuUsage() (the in-process sandbox included, alike for both).",
	});
}

function waitCase(figures: Figure[], misses: string[], results: LatencyResults, at: AtLatency): void {
	const { one, many } = at.wait!;
	const D = results.scale.deliveryMs;
	const L = at.latencyMs;
	const ratioMany = many.ms / D;
	// Wait for Final Status reads the list of sends (a page for all of them) and a detail only where the list falls short.
	const readsOf = (counts: typeof many.counts) => count(counts, SEND_LIST) + count(counts, DETAIL);
	const reads = readsOf(many.counts);
	const ok = ratioMany <= 3 && many.finalReached === many.sends && !many.boundHit && !many.error;
	figures.push({
		row: '8',
		figure: `Wait for Final Status on ${many.sends} sends, at ${L} ms: wall time / settle time of one send (deliveryMs ${D})`,
		measured:
			`${ratio(ratioMany)}: ${ms(many.ms)}${many.boundHit ? ` (stopped by the bench's bound of ${ms(results.scale.waitBoundMs)}: a lower bound)` : ''}; final status reached ${many.finalReached}/${many.sends}; ` +
			`calls ${describeCalls(many.counts)} (${(reads / many.sends).toFixed(2)} reads per send)${L > 0 ? `; peak in flight ${many.peakInFlight}` : ''}${many.error ? `; error: ${many.error}` : ''}`,
		goal: '<= 3x',
		verdict: verdictOf(ok),
		how: `One workflow run of Send (one send per item, one recipient each, options.waitForFinalStatus true, other options at their defaults) on the sandbox's real clock; every recipient has one healthy phone (kind onePhone), so each send settles exactly deliveryMs = ${D} ms after it was made (the sandbox's default). performance.now() around the run; ratio to deliveryMs. A run is stopped after ${ms(results.scale.waitBoundMs)} (the sandbox then refuses the reads).`,
	});
	figures.push({
		row: '8',
		figure: `Wait for Final Status on one send, at ${L} ms: wall time / deliveryMs`,
		measured: `${ratio(one.ms / D)}: ${ms(one.ms)}; ${readsOf(one.counts)} reads; final status ${one.finalReached ? 'reached' : 'not reached'}`,
		goal: '—',
		verdict: '—',
		how: "The same with one item: what the node's read schedule alone costs (rounds 1, 2, 4 ... s apart).",
	});
	if (!ok) {
		const rounds = Math.ceil(many.sends / Math.max(1, many.peakInFlight || 1));
		misses.push(
			`Row 8, Wait for Final Status on ${many.sends} sends at ${L} ms (${ratio(ratioMany)} of deliveryMs${many.finalReached < many.sends ? `, final status reached by ${many.finalReached}/${many.sends}` : ''}${many.boundHit ? ', stopped by the bound' : ''}): ` +
				`one send alone takes ${ms(one.ms)} = ${ratio(one.ms / D)} (its reads come on the node's schedule, 1, 2, 4 ... s apart, so the read that sees the final status comes up to one interval after it settled). ` +
				(L > 0 && many.peakInFlight > 0
					? `With ${many.sends} sends the node had at most ${many.peakInFlight} requests in flight: if the waits run ${many.peakInFlight} at a time, ${many.sends} waits take about ${rounds} times one wait (${ms(rounds * one.ms)}), which is what the figure shows when it is near that.`
					: `The waits of ${many.sends} sends add up unless they run together.`) +
				` ${reads} reads were made for ${many.sends} sends.`,
		);
	}
}

function rateLimitCase(figures: Figure[], misses: string[], at: AtLatency): void {
	const r = at.rateLimited!;
	const wallRatio = r.ms / r.allowedMs;
	const cleanOk = r.failedItems === 0 && r.duplicates === 0 && !r.error;
	figures.push({
		row: '9',
		figure: `${fmtK(r.items)} items under a rate limit of ${r.ratePerSecond}/s, at ${r.latencyMs} ms: failed items, duplicates`,
		measured: `${r.failedItems} failed, ${r.duplicates} duplicates; ${r.registered} sends registered, ${r.refused} requests refused with 429${r.error ? `; node error: ${r.error}` : ''}${r.boundHit ? '; stopped by the bench bound' : ''}`,
		goal: '0 failed, 0 duplicates',
		verdict: verdictOf(cleanOk),
		how: `One workflow run (the node at its defaults, one send per item, one recipient each) with the sandbox's rateLimitPerSecond = ${r.ratePerSecond} (token bucket per credential, burst ${Math.max(1, r.ratePerSecond)}, refilled on the real clock; over it: 429 with Retry-After and no effect). Failed = items without a send id in the output; duplicates = sends the sandbox registered beyond one per recipient (its request log).`,
	});
	figures.push({
		row: '9',
		figure: `${fmtK(r.items)} items under a rate limit of ${r.ratePerSecond}/s, at ${r.latencyMs} ms: wall time / what the limit allows`,
		measured: `${ratio(wallRatio)}: ${ms(r.ms)} vs ${ms(r.allowedMs)}; calls ${describeCalls(r.counts)}${r.latencyMs > 0 ? `; peak in flight ${r.peakInFlight}` : ''}`,
		goal: '<= 1.3x',
		verdict: verdictOf(wallRatio <= 1.3 && !r.boundHit),
		how: `What the limit allows: the job's ${r.items + 1} requests (the sends and one refresh) through a bucket that starts full (${Math.max(1, r.ratePerSecond)}) and refills ${r.ratePerSecond}/s: (${r.items + 1} - ${Math.max(1, r.ratePerSecond)}) / ${r.ratePerSecond} s, plus one answer's latency.`,
	});
	if (!cleanOk) {
		misses.push(
			`Row 9 at ${r.latencyMs} ms, failed items / duplicates (${r.failedItems} failed, ${r.duplicates} duplicates): ` +
				(r.error ? `the node stopped on "${r.error}" after ${r.refused} refusals (429); ` : '') +
				(r.failedItems > 0 ? `${r.failedItems} of ${r.items} items ended without a send id. ` : '') +
				(r.duplicates > 0 ? `${r.duplicates} recipients got a second send (the sandbox registered ${r.registered} sends for ${r.items} recipients).` : ''),
		);
	}
	if (wallRatio > 1.3 || r.boundHit) {
		misses.push(
			`Row 9 at ${r.latencyMs} ms, wall time (${ratio(wallRatio)} of the ${ms(r.allowedMs)} the limit allows): ${r.refused} requests were refused with 429 (Retry-After is in whole seconds, at least 1 s, so each pause after a refusal waits up to a second longer than the bucket needs); ` +
				`${r.latencyMs > 0 ? `the node kept at most ${r.peakInFlight} requests in flight. ` : ''}The limit lets ${r.ratePerSecond} requests a second through: a client that paced itself at that rate, with no pause longer than needed, would take about the time allowed.`,
		);
	}
}

function triggerCase(figures: Figure[], at: AtLatency): void {
	const t = at.trigger!;
	const shapes = [...new Set(t.polls.map((poll) => describeCalls(poll.counts)))];
	figures.push({
		row: '10',
		figure: `Trigger with ${t.reads} reads due, at ${t.latencyMs} ms: wall time of a poll`,
		measured:
			`${spread(t.polls.map((poll) => poll.ms), ms)}; calls per poll ${shapes.join(' or ')}${t.latencyMs > 0 ? `; peak in flight ${constant(t.polls.map((poll) => poll.peakInFlight))}` : ''}; ` +
			`raw undici making the same calls (the list, then every read at once) ${ms(t.raw.ms)}; poll / raw ${ratio(median(t.polls.map((poll) => poll.ms)) / t.raw.ms)}; activation poll ${describeCalls(t.activation)}`,
		goal: '— (report)',
		verdict: '—',
		how: `The trigger (all three events) polled as an active workflow polls it (n8n-core's TriggersAndPollers in a PollContext); after its activation poll, ${t.reads} sends go out that stay 'sending' (deliveries take 10 min), so each of the ${t.polls.length} timed polls lists and reads every one of them (Max Reads per Poll at its default, 50). performance.now() around each poll; raw undici with a token of its own and ${t.reads + 1} connections, after the polls.`,
	});
}

/**
 * A pool of P requests waits for answers and then does the work of the next requests, so per round
 * of P requests its work and its wait add up: ceil(N/P) x (L + P x c), c being its time per request
 * with no latency (where nothing waits).
 */
function roundModel(c: SendCase, P: number, L: number) {
	const N = c.requests;
	const zero = c.zero ?? [];
	const perRequest = (pick: (run: SendSides) => number | undefined) => {
		const values = zero.map(pick).filter((value): value is number => value !== undefined && Number.isFinite(value));
		return values.length ? median(values) / N : undefined;
	};
	const node = perRequest((run) => run.node.nodeMs);
	const raw = perRequest((run) => run.rawParallel.ms);
	const rounds = Math.ceil(N / P);
	const pooled = (work: number) => rounds * (L + Math.min(P, N) * work);
	return { node, raw, rounds, pooled };
}

const perMs = (value: number) => `${value.toFixed(2)} ms`;

function rawMiss(c: SendCase, P: number, L: number, rawRatio: number): string {
	const runs = c.runs;
	const N = c.requests;
	const nodeMs = med(runs, (run) => run.node.ms);
	const rawMs = med(runs, (run) => run.rawParallel.ms);
	const nodePeak = med(runs, (run) => run.node.peakInFlight);
	const rawPeak = med(runs, (run) => run.rawParallel.peakInFlight);
	const cpu = median(runs.map((run) => run.node.cpuMs / run.rawParallel.cpuMs));
	const model = roundModel(c, P, L);
	let text =
		`Row ${c.row}, ${c.name}, node / raw undici at ${P} (${ratio(rawRatio)} > 1.3x): ` +
		(nodePeak <= 1
			? `the node had at most ${nodePeak} request in flight where raw undici had ${rawPeak}: it sends one request at a time, so it waits for ${fmtK(N)} round trips of ${L} ms instead of ${model.rounds}. `
			: `peak requests in flight node ${nodePeak}, raw ${rawPeak}; both wait for about ${model.rounds} round trips of ${L} ms (${ms(model.rounds * L)}); the node took ${ms(nodeMs - rawMs)} more (${perMs((nodeMs - rawMs) / N)} per request), CPU time node / raw ${ratio(cpu)}. `);
	if (nodePeak > 1 && model.node !== undefined && model.raw !== undefined) {
		text +=
			`The difference is work per request, which in a pool adds to every round's wait: with no latency the node's work is ${perMs(model.node)} per request and raw undici's ${perMs(model.raw)}, so ${model.rounds} x (${L} + ${Math.min(P, N)} x work) gives ${ms(model.pooled(model.node))} for the node and ${ms(model.pooled(model.raw))} for raw (measured ${ms(nodeMs)} and ${ms(rawMs)}). `;
	}
	if (nodePeak > 1 && nodePeak <= rawPeak / 2) {
		text += `The node also kept fewer requests in flight than raw undici: its work between answers delays the next starts. `;
	}
	return (
		text +
		`Most of the node's work per request is n8n's HTTP helper, which a verified node must use: a new TCP connection per request (connections node/raw: ${constant(runs.map((run) => run.node.connections))}/${constant(runs.map((run) => run.rawParallel.connections))}), the credential pipeline and axios (rows 1-2 measure it alone at 0 ms). More requests in flight shrink the rounds (the wait), not that work.`
	);
}
