/** Turns the suite's results into figures with goals and verdicts, a console table and RESULTS.md. */
import { REFRESH, USER_LIST } from '../devkit/endpoints';
import { mb, median, ms, ratio, spread, totalCalls } from './measure';
import { constant, count, describeCalls, fmtK, sendCalls } from './figures';
import type { Figure } from './figures';
import { latencyFiguresOf } from './latencyReport';
import type { LatencyResults } from './latencySuite';
import { n8nFiguresOf, queueFiguresOf } from './n8nReport';
import type { N8nResults } from './n8nSuite';
import type { QueueResults } from './queueSuite';
import type { BenchResults } from './suite';

export interface Environment {
	date: string;
	node: string;
	machine: string;
	versions: Record<string, string>;
	/** What code was measured: the commit, and uncommitted changes in the shipped code, if any. */
	source?: string;
	/** Wall time of the whole bench run (ms). */
	totalMs?: number;
}

/** "node/floor/raw" connection counts, the same in every run or each side's values listed. */
function connectionsOf(runs: Array<{ node: { connections: number }; floor: { connections: number }; raw: { connections: number } }>): string {
	return [runs.map((run) => run.node.connections), runs.map((run) => run.floor.connections), runs.map((run) => run.raw.connections)]
		.map(constant)
		.join('/');
}

/** The runs of a send case (rows 1 and 2): the node, raw undici and n8n's floor, per repetition. */
type SendRuns = BenchResults['perItem'];

/** Per repetition of a send case: wall time node / raw, floor / raw, node / floor, and CPU time node / raw;
 * with the measured texts of its wall-time figure and of its context figure. */
function sendRatios(runs: SendRuns) {
	const wall = runs.map((run) => run.node.ms / run.raw.ms);
	const floor = runs.map((run) => run.floor.ms / run.raw.ms);
	const nodeFloor = runs.map((run) => run.node.ms / run.floor.ms);
	const cpu = runs.map((run) => run.node.cpuMs / run.raw.cpuMs);
	return {
		wall,
		floor,
		nodeFloor,
		cpu,
		wallMeasured: `${spread(wall, ratio)}; node ${ms(median(runs.map((run) => run.node.ms)))}, raw ${ms(median(runs.map((run) => run.raw.ms)))}`,
		contextMeasured: `floor ${spread(floor, ratio)}; node/floor ${spread(nodeFloor, ratio)}; CPU ${spread(cpu, ratio)}; TCP connections node/floor/raw ${connectionsOf(runs)}`,
	};
}

export function figuresOf(results: BenchResults): { figures: Figure[]; misses: string[] } {
	const { scale } = results;
	const figures: Figure[] = [];
	const misses: string[] = [];
	const runs = (n: number) => `${n} run${n === 1 ? '' : 's'}`;

	// ---- 1
	const expectedSends = Math.ceil(scale.recipients / scale.batchSize);
	const a = results.audience;
	figures.push({
		row: '1',
		figure: `${fmtK(scale.recipients)} recipients in one Send (batch ${scale.batchSize}): API calls of the node`,
		...sendCalls(a, expectedSends),
		goal: `exactly ${expectedSends} sends, at most 1 refresh`,
		how: `Sandbox request counts of one workflow run (Test Items -> Companion Push, userIds = {{ $json.ids }}), fresh credential without a token, in each of ${runs(a.length)}.`,
	});
	const { wall: aRatio, floor: aFloor, cpu: aCpu, wallMeasured: aWall, contextMeasured: aContext } = sendRatios(a);
	const recipientsMs = median(results.audiencePieces.map((piece) => piece.recipientsMs));
	const inputJsonMs = median(results.audiencePieces.map((piece) => piece.inputJsonMs));
	figures.push({
		row: '1',
		figure: `wall time, node / raw undici (same ${expectedSends} POSTs, one token)`,
		measured: aWall,
		goal: '<= 1.2x',
		verdict: median(aRatio) <= 1.2 ? 'pass' : 'FAIL',
		how: 'performance.now() around the whole n8n workflow run (WorkflowExecute, both nodes) vs around a bare undici loop (one keep-alive connection: token, then one POST per batch, body JSON.stringify, answer parsed), run back to back in each repetition; ratio per repetition, median (min–max).',
	});
	figures.push({
		row: '1',
		figure: "context: n8n's HTTP helper floor / raw; node / floor; CPU time node / raw; pieces",
		measured: `${aContext}; package recipient work ${ms(recipientsMs)}, harness input JSON ${ms(inputJsonMs)}`,
		goal: '—',
		verdict: '—',
		how: "The floor is a bare probe node run by WorkflowExecute making the same POSTs through this.helpers.httpRequestWithAuthentication (the helper a verified node must use) with this credential, and nothing else; CPU time is process.cpuUsage() over the same runs (sandbox included, alike for both, and less disturbed by other work on the machine than wall time); connections are those the sandbox accepted (diagnostics channel net.server.socket); the pieces are the package's parseUserIds + uniqueUserIds + toBatches on the same ids, and the harness's JSON round trip of the input item, timed alone.",
	});
	if (median(aRatio) > 1.2) {
		const med = (pick: (run: (typeof a)[number]) => number) => median(a.map(pick));
		const extra = med((run) => run.node.ms) - med((run) => run.raw.ms);
		const helper = med((run) => run.floor.ms) - med((run) => run.raw.ms);
		const overFloor = med((run) => run.node.ms) - med((run) => run.floor.ms);
		const rest = overFloor - recipientsMs - inputJsonMs;
		misses.push(
			`Row 1 wall time (${ratio(median(aRatio))} > 1.2x; CPU time ${ratio(median(aCpu))}): the node takes ${ms(extra)} more than raw undici (medians). ` +
				`${ms(helper)} of that is n8n's HTTP helper: alone, with no package code, it is ${ratio(median(aFloor))} of raw${median(aFloor) > 1.2 ? ' (already above the goal, so even a node adding nothing would miss it)' : ''}, because it opens a new TCP connection for every request (connections node/floor/raw: ${connectionsOf(a)}) and runs n8n's credential pipeline and axios per request. ` +
				`Node minus floor is ${ms(overFloor)}: ${ms(recipientsMs)} the package's recipient work on ${fmtK(scale.recipients)} ids (parse, de-duplicate, batch), ${ms(inputJsonMs)} the test harness's JSON round trip of its input item (not a cost in real n8n), and ${rest > 0 ? `${ms(rest)} the rest: n8n executing the workflow around the node (resolving {{ $json.ids }}, copying items, run data) and collecting the garbage of ${fmtK(scale.recipients)}-element arrays` : 'nothing measurable beyond those (within noise)'}.`,
		);
	}

	// ---- 2
	const p = results.perItem;
	figures.push({
		row: '2',
		figure: `${fmtK(scale.items)} input items, one send each: calls, refreshes`,
		...sendCalls(p, scale.items),
		goal: `${scale.items} sends, refreshes <= 1`,
		how: `Sandbox request counts of one workflow run with ${fmtK(scale.items)} items (userIds = {{ $json.id }}, One Send per Input Item), in each of ${runs(p.length)}.`,
	});
	const { wall: pRatio, floor: pFloor, nodeFloor: pNodeFloor, cpu: pCpu, wallMeasured: pWall, contextMeasured: pContext } = sendRatios(p);
	figures.push({
		row: '2',
		figure: `wall time, node / raw undici (${fmtK(scale.items)} sequential POSTs)`,
		measured: pWall,
		goal: '<= 1.3x',
		verdict: median(pRatio) <= 1.3 ? 'pass' : 'FAIL',
		how: 'As row 1: the whole workflow run vs a bare undici loop (token, then one POST per user), back to back; ratio per repetition, median (min–max).',
	});
	figures.push({
		row: '2',
		figure: "context: n8n's HTTP helper floor / raw; node / floor; CPU time node / raw",
		measured: pContext,
		goal: '—',
		verdict: '—',
		how: `As row 1: a bare probe node making the same ${fmtK(scale.items)} POSTs through httpRequestWithAuthentication in one loop.`,
	});
	if (median(pRatio) > 1.3) {
		const perRequest = (median(p.map((run) => run.node.ms)) - median(p.map((run) => run.raw.ms))) / scale.items;
		misses.push(
			`Row 2 wall time (${ratio(median(pRatio))} > 1.3x; CPU time ${ratio(median(pCpu))}): each send is tiny (one recipient), so the fixed cost per request decides (node minus raw: ${perRequest.toFixed(2)} ms per item). n8n's HTTP helper alone, with no package code, is ${ratio(median(pFloor))} of raw undici: per request it opens a new TCP connection (connections node/floor/raw: ${connectionsOf(p)}), gets the credential from the credentials helper (here the harness's in-memory one; real n8n also decrypts it), authenticates, and goes through axios (config merge, proxy lookup, redirect wrapper). ` +
				`The node is ${ratio(median(pNodeFloor))} of that floor: per item n8n resolves the parameters and the expression, the package checks the item and the answer (zod) and builds the output item. A verified community node must send through that helper (it may not bring its own HTTP client)${median(pFloor) > 1.3 ? ', and the helper alone is already above 1.3x, so no such node can reach the goal here' : ''}; the part that belongs to the package is node / floor.`,
		);
	}

	// ---- 3
	const u = results.users;
	const pages = Math.ceil(scale.users / 1000);
	const uList = u.map((run) => count(run.counts, USER_LIST));
	const uRefresh = u.map((run) => count(run.counts, REFRESH));
	const uItems = u.map((run) => run.outputItems);
	figures.push({
		row: '3',
		figure: `Get all ${fmtK(scale.users)} users (Return All): calls`,
		measured: `${constant(uList)} user-list + ${constant(uRefresh)} refresh; ${constant(uItems)} items`,
		goal: `${pages} user-list calls`,
		verdict: uList.every((n) => n === pages) && uItems.every((n) => n === scale.users) ? 'pass' : 'FAIL',
		how: `Sandbox request counts of one workflow run of User > Get Many with Return All (pages of 1000), in each of ${runs(u.length)}.`,
	});
	if (uList.some((n) => n !== pages)) {
		misses.push(
			`Row 3 calls (${constant(uList)} instead of ${pages}): the spec's paging rule is "skip += page size until an empty array" and GET /user/list gives no total. With exactly ${fmtK(scale.users)} users the ${pages}th page is full, so no client can know it was the last without asking once more: ${pages} full pages + 1 empty page = ${pages + 1}. ` +
				`Stopping on a short page would not help here (the last page is not short); the goal of ${pages} is reachable only with a total or a next-page marker the API does not give.`,
		);
	}
	const jsonBytes = median(u.map((run) => run.jsonBytes));
	const heap = u.map((run) => run.memory.heapDelta);
	const rss = u.map((run) => run.memory.rssDelta);
	const parsed = median(u.map((run) => run.parsedHeapBytes));
	const retained = u.map((run) => run.memory.retainedHeapDelta);
	const rawHeap = results.rawUsers.map((run) => run.memory.heapDelta);
	const rawRss = results.rawUsers.map((run) => run.memory.rssDelta);
	const rawRetained = results.rawUsers.map((run) => run.memory.retainedHeapDelta);
	const floorHeap = results.floorUsers.map((run) => run.memory.heapDelta);
	const floorRss = results.floorUsers.map((run) => run.memory.rssDelta);
	figures.push({
		row: '3',
		figure: 'peak memory above baseline vs JSON size of the items',
		measured: `JSON ${mb(jsonBytes)}; peak heapUsed ${spread(heap, mb)} = ${ratio(median(heap) / jsonBytes)}; peak RSS ${spread(rss, mb)} = ${ratio(median(rss) / jsonBytes)}; live after the run ${spread(retained, mb)} = ${ratio(median(retained) / jsonBytes)}; references: the same items JSON.parse'd alone hold ${mb(parsed)} = ${ratio(parsed / jsonBytes)}; raw undici reading the same pages into one array peaks at heapUsed ${mb(median(rawHeap))}, RSS ${mb(median(rawRss))}, live after ${mb(median(rawRetained))}; n8n's helper floor peaks at heapUsed ${mb(median(floorHeap))}, RSS ${mb(median(floorRss))}; wall node ${ms(median(u.map((run) => run.ms)))}, floor ${ms(median(results.floorUsers.map((run) => run.ms)))}, raw ${ms(median(results.rawUsers.map((run) => run.ms)))}`,
		goal: '— (report)',
		verdict: '—',
		how: "process.memoryUsage() sampled every 5 ms during the workflow run, peak minus a baseline taken after a forced GC; JSON size = UTF-8 bytes of JSON.stringify of the output items' json; 'live after the run' is heapUsed above the baseline after a forced GC with the run's result still referenced; the references are the heap held by JSON.parse of that text alone (what V8 needs for the user objects themselves) a raw undici loop reading the same pages into one array, and n8n's floor (a bare probe node reading them through httpRequestWithAuthentication into output items, no checks), each sampled the same way and run back to back with the node (all include the in-process sandbox's share of the peak). The peak also counts garbage not yet collected: each page's answer text, its parsed and zod-checked copies, and the in-process sandbox's page answers.",
	});

	// ---- 4
	const t = results.trigger;
	const moving = t.flatMap((run) => run.perPoll);
	const settled = t.flatMap((run) => run.settledPerPoll);
	const all = [...moving, ...settled];
	const maxCalls = all.length ? Math.max(...all.map(totalCalls)) : 0;
	const shapeCounts = new Map<string, number>();
	for (const calls of moving) shapeCounts.set(describeCalls(calls), (shapeCounts.get(describeCalls(calls)) ?? 0) + 1);
	const movingShapes = [...shapeCounts].map(([shape, polls]) => `${shape} (${polls} poll${polls === 1 ? '' : 's'})`);
	const settledCalls = [...new Set(settled.map(totalCalls))].sort((x, y) => x - y);
	const emittedAfter = t.map((run) => run.settledEmitted.reduce((sum, n) => sum + n, 0));
	figures.push({
		row: '4',
		figure: `Trigger, ${fmtK(scale.pastSends)} past sends and ${scale.moving} moving: calls per poll`,
		measured: `max ${maxCalls}. While moving: ${movingShapes.join('; ')}. After settling: ${settledCalls.join(' or ')} per poll (${constant(emittedAfter)} events emitted). Activation poll: ${describeCalls(t[0]?.firstPoll ?? {})}`,
		goal: '<= 7 per poll',
		verdict: all.length > 0 && maxCalls <= 7 ? 'pass' : 'FAIL',
		how: `Sandbox counts around each poll, run as an active n8n workflow runs it (devkit/poll.ts: n8n-core's TriggersAndPollers.runPollFunction in a PollContext, 'trigger' mode, static data kept on the Workflow between polls), ${runs(t.length)}. The ${fmtK(scale.pastSends)} past sends were made and settled 2 h before the trigger's activation poll; then ${scale.moving} sends stay 'sending' (first delivery round after 10 min) for ${scale.movingPolls} polls a minute apart, the last one due to renew the hourly token (the credential's renew-after time set to now, as 55 min of real time would); ${scale.settledPolls} more polls run from 30 min later, when all have settled. Bound beyond this scenario: sends settled within the watch window (24 h) are re-read with back-off (1, 2, 4 ... 60 min), at most "Max Reads per Poll" (default 50) per poll.`,
	});

	return { figures, misses };
}

const escapeCell = (text: string) => text.replace(/\|/g, '\\|');

export function markdownTable(figures: Figure[]): string {
	const lines = ['| Row | Figure | Measured (median, min–max) | Goal | Result |', '|---|---|---|---|---|'];
	for (const f of figures) lines.push(`| ${f.row} | ${escapeCell(f.figure)} | ${escapeCell(f.measured)} | ${escapeCell(f.goal)} | ${f.verdict} |`);
	return lines.join('\n');
}

/** A plain-text table for the terminal. */
export function consoleTable(figures: Figure[]): string {
	const rows = [['Row', 'Figure', 'Measured', 'Goal', 'Result'], ...figures.map((f) => [f.row, f.figure, f.measured, f.goal, f.verdict])];
	const widths = [3, 44, 70, 22, 6];
	const wrap = (text: string, width: number): string[] => {
		const out: string[] = [];
		let line = '';
		for (const word of text.split(' ')) {
			if (line && (line + ' ' + word).length > width) {
				out.push(line);
				line = word;
			} else line = line ? `${line} ${word}` : word;
		}
		out.push(line);
		return out;
	};
	const rendered: string[] = [];
	const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
	for (const [index, row] of rows.entries()) {
		const cells = row.map((cell, column) => wrap(cell, widths[column]));
		const height = Math.max(...cells.map((cell) => cell.length));
		for (let line = 0; line < height; line++) {
			rendered.push(cells.map((cell, column) => (cell[line] ?? '').padEnd(widths[column])).join(' | ').trimEnd());
		}
		if (index === 0 || index === rows.length - 1) rendered.push(rule);
		else if (rows[index + 1][0] !== row[0]) rendered.push(rule);
	}
	return rendered.join('\n');
}

/** What one `npm run bench` ran: the core suite (rows 1-4), the latency suite (rows 6-10), the
 * real-n8n suite (rows 11-16), the queue-mode suite (row 17), or some of them. */
export interface BenchRuns {
	core?: BenchResults;
	latency?: LatencyResults;
	n8n?: N8nResults;
	queue?: QueueResults;
}

/** Every figure and miss of the runs, in row order. */
export function allFiguresOf(runs: BenchRuns): { figures: Figure[]; misses: string[] } {
	const none = { figures: [], misses: [] };
	const parts = [
		runs.core ? figuresOf(runs.core) : none,
		runs.latency ? latencyFiguresOf(runs.latency) : none,
		runs.n8n ? n8nFiguresOf(runs.n8n) : none,
		runs.queue ? queueFiguresOf(runs.queue) : none,
	];
	return { figures: parts.flatMap((part) => part.figures), misses: parts.flatMap((part) => part.misses) };
}

export function resultsMarkdown(runs: BenchRuns, environment: Environment): string {
	const { figures, misses } = allFiguresOf(runs);
	const failed = figures.filter((f) => f.verdict === 'FAIL').length;
	const passed = figures.filter((f) => f.verdict === 'pass').length;
	const lines: string[] = [];
	if (runs.core) {
		const { scale } = runs.core;
		lines.push(
			`- Sandbox (rows 1-4): in the same process (startSandbox, 127.0.0.1, ${scale.users.toLocaleString('en-US')} users, manual clock), reset before every measured run. Server time is inside every wall time alike.`,
			`- Repetitions (rows 1-4): ${scale.reps} per timed case (sides interleaved, order rotated), ${scale.triggerReps} for the trigger; after one warm-up of every path. ${(runs.core.totalMs / 1000).toFixed(0)} s.`,
		);
	}
	if (runs.latency) {
		const { scale, parallel } = runs.latency;
		lines.push(
			`- Sandbox (rows 6-10): a second one in the same process, on the real clock, ${scale.users.toLocaleString('en-US')} users, reset before every measured run and then given the case's settings: latencyMs ${scale.latencies.join(' / ')} (every answer held that long, real time), deliveryMs ${scale.deliveryMs} for row 8, rateLimitPerSecond ${scale.rateLimitPerSecond} for row 9.`,
			`- Parallelism of raw undici "at the same parallelism": ${parallel} (the default of Send's option Max Parallel Requests, read from the node's description).`,
			`- Repetitions (rows 6-7): ${scale.reps} (sides interleaved, order rotated); rows 8-10 once per latency, after a warm-up. ${(runs.latency.totalMs / 1000).toFixed(0)} s.`,
		);
	}
	if (runs.n8n) {
		const { scale, executions } = runs.n8n;
		const cli = executions.map((execution) => execution.cliMs);
		lines.push(
			`- Real n8n (rows 11-16): n8n 2.41.1 (scripts/n8n-runtime, Node 24), this checkout built, packed and installed as a community package; both nodes in the same \`n8n execute\` per repetition (${executions.length} runs, ${cli.length ? ms(median(cli)) : '—'} each with CLI start-up; the figures use n8n's own executionTime). Two sandboxes in the bench's process (http, and https with a certificate authority made for the run, trusted through NODE_EXTRA_CA_CERTS), each behind a delayed link with a round trip of ${scale.latencies.join(' / ')} ms (bench/linkDelay.ts: a new connection pays its TCP and TLS round trips), answering at once (latencyMs 0), deliveryMs ${scale.deliveryMs}. ${scale.reps} repetitions per round trip on SQLite, ${scale.postgresReps} on Postgres at ${scale.postgresLatencyMs} ms${runs.n8n.postgresSkipped ? ` (skipped: ${runs.n8n.postgresSkipped})` : ''}. ${(runs.n8n.totalMs / 1000).toFixed(0)} s.`,
		);
	}
	if (runs.queue) {
		const { scale } = runs.queue;
		lines.push(
			`- Queue mode (row 17): scripts/queueMode.ts, main + ${scale.workers} workers (--concurrency=${scale.concurrency}), Postgres 15, Redis, this checkout installed as a community package on each; the https sandbox behind a ${scale.latencyMs} ms link. Cluster start ${(runs.queue.clusterStartMs / 1000).toFixed(0)} s; ${(runs.queue.totalMs / 1000).toFixed(0)} s in all.`,
		);
	}
	const hows = new Set<string>();
	return [
		'# Benchmark results',
		'',
		'Written by `npm run bench` (bench/run.ts) from a real run; do not edit by hand.',
		'',
		`- Date: ${environment.date}`,
		`- Machine: ${environment.machine}`,
		`- Node ${environment.node}; ${Object.entries(environment.versions)
			.map(([name, version]) => `${name} ${version}`)
			.join(', ')}`,
		...(environment.source ? [`- Code measured: ${environment.source}`] : []),
		...lines,
		...(environment.totalMs !== undefined ? [`- Whole run: ${(environment.totalMs / 1000).toFixed(0)} s.`] : []),
		`- Goals: ${passed} pass, ${failed} fail.`,
		'',
		markdownTable(figures),
		'',
		'## How each figure was measured',
		'',
		// Each description once (the latency rows repeat theirs at every latency and size).
		...figures.filter((f) => !hows.has(f.how) && hows.add(f.how)).map((f) => `- Row ${f.row}, ${f.figure}: ${f.how}`),
		'',
		'## Goals missed, and why',
		'',
		...(misses.length ? misses.map((m) => `- ${m}`) : ['None.']),
		'',
	].join('\n');
}
