/** The real-n8n suite's figures (rows 11-16) and the queue-mode suite's (row 17), their goals, verdicts and the causes of misses. */
import { constant, fmtK, verdictOf } from './figures';
import type { Figure } from './figures';
import { median, ms, ratio, spread } from './measure';
import type { ChainRun, ExecutionRun, N8nResults, RawRun } from './n8nSuite';
import { HTTP_REQUEST_VERSION } from './n8nWorkflows';
import type { Scheme } from './n8nWorkflows';
import type { QueuePass, QueueResults, QueueSide } from './queueSuite';

/** The node's time against the HTTP Request node's: the goal, over https at this round trip. */
export const NODE_VS_HTTP_REQUEST_GOAL = 0.8;
export const GOAL_LATENCY_MS = 40;
export const WAIT_READS_GOAL = 0.1;
export const WAIT_TIME_GOAL = 3;
export const QUEUE_GOAL = 0.9;

const med = <T>(values: T[], pick: (value: T) => number) => median(values.map(pick));
const perRequest = (value: number) => `${value.toFixed(2)} ms`;

/** A case: the node's and the HTTP Request node's chains of the same run, per repetition. */
interface CasePair {
	node: ChainRun;
	httpRequest: ChainRun;
	execution: ExecutionRun;
}

function pairsOf(executions: ExecutionRun[], scheme: Scheme, items: number): CasePair[] {
	return executions.flatMap((execution) => {
		const node = execution.chains.find((chain) => chain.name === `node ${scheme} ${items}`);
		const httpRequest = execution.chains.find((chain) => chain.name === `httpRequest ${scheme} ${items}`);
		return node && httpRequest ? [{ node, httpRequest, execution }] : [];
	});
}

const executionsAt = (results: N8nResults, db: ExecutionRun['db'], latencyMs: number) =>
	results.executions.filter((execution) => execution.db === db && execution.latencyMs === latencyMs);

const rawAt = (results: N8nResults, scheme: Scheme, items: number, latencyMs: number, keepAlive: boolean): RawRun[] =>
	results.raw.filter((run) => run.scheme === scheme && run.items === items && run.latencyMs === latencyMs && run.keepAlive === keepAlive);

/** "200/200" of the values, the same in every run or listed. */
const same = (pairs: CasePair[], pick: (pair: CasePair) => number) => constant(pairs.map(pick));

/** Round trips a request on a new connection holds its slot for: connect and request, plus the TLS handshake. */
const roundTrips = (scheme: Scheme) => (scheme === 'https' ? 3 : 2);

function sendCase(figures: Figure[], misses: string[], results: N8nResults, db: ExecutionRun['db'], latencyMs: number, scheme: Scheme, items: number, row: string): void {
	const pairs = pairsOf(executionsAt(results, db, latencyMs), scheme, items);
	if (pairs.length === 0) return;
	const P = results.parallel;
	const name = `${fmtK(items)} one-recipient sends, ${scheme}, ${latencyMs} ms round trip${db === 'postgres' ? ', n8n on Postgres' : ''}`;
	const errors = pairs.flatMap((pair) => [pair.node.error, pair.httpRequest.error].filter(Boolean));
	const callsOk = pairs.every((pair) => pair.node.accepted === items && pair.node.sends === items && pair.node.refreshes <= 1 && pair.node.otherCalls === 0 && pair.httpRequest.accepted === items) && errors.length === 0;
	figures.push({
		row,
		figure: `${name}: API calls`,
		measured: `node ${same(pairs, (pair) => pair.node.accepted)} sends accepted + ${same(pairs, (pair) => pair.node.refreshes)} refresh${pairs.some((pair) => pair.node.otherCalls) ? ` + ${same(pairs, (pair) => pair.node.otherCalls)} other` : ''}; HTTP Request node ${same(pairs, (pair) => pair.httpRequest.accepted)} sends accepted${errors.length ? ` (errors: ${errors.join('; ')})` : ''}`,
		goal: `${items} sends accepted each, at most 1 refresh`,
		verdict: verdictOf(callsOk),
		how: "Counted in the sandbox's request log: the sends carrying the chain's title, the refreshes and other calls within the node run's window (n8n's startTime + executionTime).",
	});

	const ratios = pairs.map((pair) => pair.node.ms / pair.httpRequest.ms);
	const withGoal = scheme === 'https' && latencyMs >= GOAL_LATENCY_MS;
	const ok = median(ratios) <= NODE_VS_HTTP_REQUEST_GOAL;
	figures.push({
		row,
		figure: `${name}: node / n8n's HTTP Request node (each node's executionTime, same run)`,
		measured: `${spread(ratios, ratio)}; node ${ms(med(pairs, (pair) => pair.node.ms))}, HTTP Request node ${ms(med(pairs, (pair) => pair.httpRequest.ms))}`,
		goal: withGoal ? `<= ${NODE_VS_HTTP_REQUEST_GOAL}x` : '— (context)',
		verdict: withGoal ? verdictOf(ok) : '—',
		how:
			`Both in one \`n8n execute\` of the real n8n 2.41.1 (Node 24, ${db === 'postgres' ? 'DB_TYPE=postgresdb, a fresh Postgres 15' : 'its default SQLite'}), this package installed as a community package from \`npm pack\`: Manual Trigger, then per case a Code node returning ${fmtK(items)} items ({ to: <user id> }) -> the Companion Push node (Send, One Send per Input Item, userIds {{ $json.to }}, its defaults: Max Parallel Requests ${P}, credential with a saved token) and a Code node -> n8n's HTTP Request node v${HTTP_REQUEST_VERSION} at its defaults (every item's request at once), POST <base URL>/push-notification/send, header Authorization: Bearer <a token the bench got first>, JSON body with the same message; warm-up chains of ${results.scale.warmUpItems} sends of each side first; the two cases back to back, their order swapped every other repetition. ` +
			`The sandbox in the bench's process serves ${scheme}${scheme === 'https' ? ' with a certificate authority made for the run, which n8n trusts through NODE_EXTRA_CA_CERTS (no insecure option on)' : ''}, behind a delayed link (bench/linkDelay.ts): every chunk held half the round trip each way, a new connection's first chunk one round trip more, so a request on a new connection holds its caller ${roundTrips(scheme)} round trips (${scheme === 'https' ? 'connect, TLS handshake, request' : 'connect, request'}), one on a kept-alive connection 1. Each node's executionTime from n8n's run data; ratio per repetition, median (min–max).`,
	});

	const keepAlive = rawAt(results, scheme, items, latencyMs, true);
	const newEach = rawAt(results, scheme, items, latencyMs, false);
	const cpuNode = med(pairs, (pair) => pair.node.n8nCpuMs) / items;
	const cpuHttp = med(pairs, (pair) => pair.httpRequest.n8nCpuMs) / items;
	figures.push({
		row,
		figure: `${name}: context`,
		measured:
			(keepAlive.length ? `raw undici with keep-alive, ${P} at once: ${spread(keepAlive.map((run) => run.ms), ms)} (node / it ${ratio(med(pairs, (pair) => pair.node.ms) / med(keepAlive, (run) => run.ms))}); a new connection per request, ${P} at once: ${ms(med(newEach, (run) => run.ms))}; ` : '') +
			`n8n process CPU per request: node ${perRequest(cpuNode)}, HTTP Request node ${perRequest(cpuHttp)}; connections node/HTTP Request ${same(pairs, (pair) => pair.node.connections)}/${same(pairs, (pair) => pair.httpRequest.connections)}, at most open at once ${med(pairs, (pair) => pair.node.peakOpen)}/${med(pairs, (pair) => pair.httpRequest.peakOpen)}; sandbox and link CPU per request (the bench's process) ${perRequest(med(pairs, (pair) => pair.node.benchCpuMs) / items)}/${perRequest(med(pairs, (pair) => pair.httpRequest.benchCpuMs) / items)}`,
		goal: '—',
		verdict: '—',
		how: "Raw undici: a Pool of that many connections through the same link, the sends timed (its token before), after each repetition's n8n run. CPU: user + system time of the n8n process (/proc/<pid>/stat, sampled every 20 ms) within the node run's window; connections and open-at-once from the link.",
	});
	if (withGoal && !ok) misses.push(sendMiss(pairs, results, scheme, latencyMs, items, row, db));
}

function sendMiss(pairs: CasePair[], results: N8nResults, scheme: Scheme, L: number, N: number, row: string, db: ExecutionRun['db']): string {
	const P = results.parallel;
	const trips = roundTrips(scheme);
	const rounds = Math.ceil(N / P);
	const nodeMs = med(pairs, (pair) => pair.node.ms);
	const httpMs = med(pairs, (pair) => pair.httpRequest.ms);
	const cpuNode = med(pairs, (pair) => pair.node.n8nCpuMs);
	const cpuHttp = med(pairs, (pair) => pair.httpRequest.n8nCpuMs);
	const waiting = rounds * trips * L;
	let text =
		`Row ${row}, ${fmtK(N)} sends over ${scheme} at ${L} ms${db === 'postgres' ? ' (Postgres)' : ''}, node / HTTP Request node (${ratio(median(pairs.map((pair) => pair.node.ms / pair.httpRequest.ms)))} > ${NODE_VS_HTTP_REQUEST_GOAL}x): ` +
		`the node keeps at most ${P} requests in flight, and each holds its slot for ${trips} round trips (n8n's HTTP helper opens a new connection per request: ${scheme === 'https' ? 'connect, TLS handshake, request' : 'connect, request'}), so ${fmtK(N)} sends wait ${rounds} x ${trips} x ${L} ms = ${ms(waiting)} at least; measured ${ms(nodeMs)}, with ${ms(cpuNode)} of n8n CPU (${perRequest(cpuNode / N)} per request). ` +
		`The HTTP Request node starts all ${fmtK(N)} at once (at most ${med(pairs, (pair) => pair.httpRequest.peakOpen)} open): it waits the ${trips} round trips about once, and then its work decides: ${ms(httpMs)} with ${ms(cpuHttp)} of n8n CPU (${perRequest(cpuHttp / N)} per request). `;
	const variants = parallelVariantsAt(results, L).filter((variant) => variant.items === N);
	if (variants.length) {
		text += `At other Max Parallel Requests (row 12, same runs): ${variants.map((variant) => `at ${variant.maxParallelRequests} the node takes ${ms(variant.ms)} = ${ratio(variant.ms / httpMs)} of the HTTP Request node`).join('; ')}. `;
	}
	text += `What is left once the waiting is gone is work per request, most of it n8n's HTTP helper (a new agent, connection and ${scheme === 'https' ? 'TLS handshake' : 'socket'} per request, the credential pipeline, axios), which a verified node must use; row 16 shows the handshake's share.`;
	return text;
}

/** The node at other Max Parallel Requests (https), medians, with the default's and the HTTP Request node's times of the same runs. */
function parallelVariantsAt(results: N8nResults, latencyMs: number) {
	const executions = executionsAt(results, 'sqlite', latencyMs);
	return results.scale.parallelVariants.flatMap(({ items, maxParallelRequests }) => {
		const runs = executions.flatMap((execution) => {
			const variant = execution.chains.find((chain) => chain.name === `node https ${items} at ${maxParallelRequests}`);
			const node = execution.chains.find((chain) => chain.name === `node https ${items}`);
			const httpRequest = execution.chains.find((chain) => chain.name === `httpRequest https ${items}`);
			return variant && node && httpRequest ? [{ variant, node, httpRequest }] : [];
		});
		if (runs.length === 0) return [];
		return [
			{
				items,
				maxParallelRequests,
				ms: med(runs, (run) => run.variant.ms),
				vsDefault: runs.map((run) => run.variant.ms / run.node.ms),
				vsHttpRequest: runs.map((run) => run.variant.ms / run.httpRequest.ms),
				cpuPerRequest: med(runs, (run) => run.variant.n8nCpuMs) / items,
				peakOpen: med(runs, (run) => run.variant.peakOpen),
				accepted: runs.map((run) => run.variant.accepted),
				errors: runs.map((run) => run.variant.error).filter(Boolean),
			},
		];
	});
}

function parallelRows(figures: Figure[], results: N8nResults): void {
	const P = results.parallel;
	for (const latencyMs of results.scale.latencies) {
		for (const variant of parallelVariantsAt(results, latencyMs)) {
			figures.push({
				row: '12',
				figure: `${fmtK(variant.items)} sends, https, ${latencyMs} ms round trip: the node at Max Parallel Requests ${variant.maxParallelRequests}`,
				measured: `${ms(variant.ms)}: ${spread(variant.vsDefault, ratio)} of the node at ${P}, ${spread(variant.vsHttpRequest, ratio)} of the HTTP Request node (same runs); at most ${variant.peakOpen} open at once; n8n CPU per request ${perRequest(variant.cpuPerRequest)}; ${constant(variant.accepted)} sends accepted${variant.errors.length ? ` (errors: ${variant.errors.join('; ')})` : ''}`,
				goal: '— (for the default)',
				verdict: '—',
				how: `The same Send (Max Parallel Requests set to ${variant.maxParallelRequests}) in the same \`n8n execute\` as row 11's https cases, after them; ratios to row 11's node and HTTP Request node of the same run, median (min–max).`,
			});
		}
	}
}

function waitRows(figures: Figure[], misses: string[], results: N8nResults): void {
	const { waitSends, deliveryMs } = results.scale;
	for (const latencyMs of results.scale.latencies) {
		const runs = executionsAt(results, 'sqlite', latencyMs).flatMap((execution) => {
			const many = execution.chains.find((chain) => chain.name === `wait https ${waitSends}`);
			const one = execution.chains.find((chain) => chain.name === 'wait https 1');
			return many && one ? [{ many, one }] : [];
		});
		if (runs.length === 0) continue;
		const reads = (chain: ChainRun) => chain.listReads + chain.detailReads;
		const readsPerSend = runs.map((run) => reads(run.many) / run.many.accepted);
		const timeRatio = runs.map((run) => run.many.ms / deliveryMs);
		const complete = runs.every((run) => run.many.finalReached === waitSends && run.many.accepted === waitSends && !run.many.error);
		const readsOk = median(readsPerSend) <= WAIT_READS_GOAL && complete;
		const timeOk = median(timeRatio) <= WAIT_TIME_GOAL && complete;
		const name = `Wait for Final Status on ${waitSends} sends (one Send run), https, ${latencyMs} ms round trip`;
		const how = `In the real n8n, in the same \`n8n execute\` as row 11: a Code node returning ${waitSends} items, each a user with one healthy phone (sandbox kind onePhone: it settles exactly deliveryMs = ${deliveryMs} ms after the send), -> Companion Push Send with Wait for Final Status on (other options at their defaults). Reads = list pages and send details the sandbox logged within the node run's window.`;
		figures.push({
			row: '14',
			figure: `${name}: reads of the API per send`,
			measured: `${spread(readsPerSend, (value) => value.toFixed(2))}: ${constant(runs.map((run) => run.many.listReads))} list page(s) + ${constant(runs.map((run) => run.many.detailReads))} details for ${constant(runs.map((run) => run.many.accepted))} sends; final status reached ${constant(runs.map((run) => run.many.finalReached ?? 0))}/${waitSends}`,
			goal: `<= ${WAIT_READS_GOAL}`,
			verdict: verdictOf(readsOk),
			how,
		});
		figures.push({
			row: '14',
			figure: `${name}: its time / one settle time (deliveryMs ${deliveryMs})`,
			measured: `${spread(timeRatio, ratio)}: ${ms(med(runs, (run) => run.many.ms))}; one send alone: ${ms(med(runs, (run) => run.one.ms))} (${ratio(med(runs, (run) => run.one.ms) / deliveryMs)}) with ${constant(runs.map((run) => reads(run.one)))} reads`,
			goal: `<= ${WAIT_TIME_GOAL}x`,
			verdict: verdictOf(timeOk),
			how: `${how} The node run's executionTime over deliveryMs; one send alone in the same run for comparison.`,
		});
		if (!readsOk || !timeOk) {
			misses.push(
				`Row 14 at ${latencyMs} ms (${spread(readsPerSend, (value) => value.toFixed(2))} reads per send, ${ratio(median(timeRatio))} of deliveryMs): ` +
					`the node reads the list of sends once per round for every send of the run, rounds 1, 2, 4 ... s apart (one send alone: ${ms(med(runs, (run) => run.one.ms))}, the read that sees the final status up to one interval after it settled); the sends join the rounds as they are made, and the last ones wait for the next round.`,
			);
		}
	}
}

function credentialRows(figures: Figure[], misses: string[], results: N8nResults): void {
	const runs = results.credentialReads;
	if (!runs?.length) {
		if (results.postgresSkipped) {
			figures.push({ row: '15', figure: 'Credential reads per 1,000-item run', measured: `not measured: ${results.postgresSkipped}`, goal: '<= renewals + 1', verdict: '—', how: 'Needs Postgres.' });
		}
		return;
	}
	const [big, ...small] = runs;
	const nodeReads = (run: (typeof runs)[number]) => run.selects - run.tokenSaveSelects;
	const ok = nodeReads(big) <= big.renewals + 1 && !big.error && big.sends === big.items;
	const shapes = (run: (typeof runs)[number]) =>
		Object.entries(run.credentialStatements)
			.map(([statement, count]) => `${count} x \`${statement.slice(0, 90)}${statement.length > 90 ? '…' : ''}\``)
			.join('; ');
	figures.push({
		row: '15',
		figure: `Credential reads per ${fmtK(big.items)}-item run (n8n on Postgres, a fresh credential): reads by the node`,
		measured:
			`${nodeReads(big)} with ${big.renewals} renewal(s). The database saw ${big.selects} SELECTs of credentials_entity and ${big.updates} UPDATE: ${big.tokenSaveSelects} of the SELECTs came between the refresh and the UPDATE, n8n saving the renewed token (its credentials helper reads the stored credential, and again to write it), the rest the node's. ` +
			`${big.sends} sends, ${ms(big.ms)}, ${fmtK(big.statements)} statements in all during the run. ${small.map((run) => `A ${run.items}-item run right after (token saved): ${run.selects} SELECT(s), ${run.renewals} renewals.`).join(' ')} Statements: ${shapes(big)}`,
		goal: `<= renewals + 1 (${big.renewals + 1})`,
		verdict: verdictOf(ok),
		how: "The Companion Push node (Send, one send per item) in a regular-mode n8n on Postgres, its credential imported anew without a token; Postgres's statement log (log_statement = all for n8n's role during that `n8n execute` only, log_timezone UTC), the statements naming credentials_entity within the node run's window, by kind; a SELECT between a refresh's arrival at the sandbox and the next UPDATE of credentials_entity is counted as n8n's saving of the renewed token. Every SELECT is a read of the credential from the database (n8n decrypts it each time).",
	});
	if (!ok) {
		misses.push(
			`Row 15 (${nodeReads(big)} reads by the node with ${big.renewals} renewal(s), goal ${big.renewals + 1}; ${big.selects} SELECTs in all): the node reads the credential when its run starts and again only after a renewal or a 401; ${big.error ? `the run failed: ${big.error}` : `the reads beyond that are in the statements listed`}.`,
		);
	}
}

function tlsRows(figures: Figure[], results: N8nResults): void {
	const zero = executionsAt(results, 'sqlite', 0);
	const items = Math.max(...results.scale.itemCounts);
	const diffs = (side: 'node' | 'httpRequest', pick: (chain: ChainRun) => number) =>
		zero.flatMap((execution) => {
			const http = execution.chains.find((chain) => chain.name === `${side} http ${items}`);
			const https = execution.chains.find((chain) => chain.name === `${side} https ${items}`);
			return http && https ? [(pick(https) - pick(http)) / items] : [];
		});
	const nodeMs = diffs('node', (chain) => chain.ms);
	const nodeCpu = diffs('node', (chain) => chain.n8nCpuMs);
	const httpMs = diffs('httpRequest', (chain) => chain.ms);
	const httpCpu = diffs('httpRequest', (chain) => chain.n8nCpuMs);
	if (nodeMs.length === 0) return;
	const rawKeep = rawAt(results, 'https', items, 0, true);
	const rawNew = rawAt(results, 'https', items, 0, false);
	const rawHttpNew = rawAt(results, 'http', items, 0, false);
	const L = Math.max(...results.scale.latencies);
	figures.push({
		row: '16',
		figure: `What a TLS handshake per request costs here (${fmtK(items)} sends, https minus http, no network delay)`,
		measured:
			`node: +${spread(nodeMs, perRequest)} per request of executionTime, +${spread(nodeCpu, perRequest)} of n8n CPU; HTTP Request node: +${spread(httpMs, perRequest)}, +${spread(httpCpu, perRequest)} of CPU. ` +
			(rawKeep.length && rawNew.length
				? `Raw undici (${results.parallel} at once): https with keep-alive ${perRequest(med(rawKeep, (run) => run.ms) / items)} per request, a new connection each ${perRequest(med(rawNew, (run) => run.ms) / items)} (http, new connection each: ${perRequest(med(rawHttpNew, (run) => run.ms) / items)}). `
				: '') +
			`On a network each handshake also adds a round trip: at ${L} ms a request on a new connection holds its slot 3 x ${L} = ${3 * L} ms over https, 2 x ${L} over http, ${L} on a kept-alive connection.`,
		goal: '— (report)',
		verdict: '—',
		how: "Row 11's runs at 0 ms round trip (same execution): the https case minus the http case, per request, for each node's executionTime and the n8n process's CPU time; raw undici through the same link after them. The handshake's server half runs in the bench's process (on the same 2 cores), ECDSA P-256.",
	});
}

export function n8nFiguresOf(results: N8nResults): { figures: Figure[]; misses: string[] } {
	const figures: Figure[] = [];
	const misses: string[] = [];
	for (const items of results.scale.itemCounts) {
		for (const scheme of results.scale.schemes) {
			for (const latencyMs of results.scale.latencies) sendCase(figures, misses, results, 'sqlite', latencyMs, scheme, items, '11');
		}
	}
	parallelRows(figures, results);
	for (const items of results.scale.itemCounts) sendCase(figures, misses, results, 'postgres', results.scale.postgresLatencyMs, 'https', items, '13');
	waitRows(figures, misses, results);
	credentialRows(figures, misses, results);
	tlsRows(figures, results);
	return { figures, misses };
}

export function queueFiguresOf(results: QueueResults): { figures: Figure[]; misses: string[] } {
	const { scale, passes } = results;
	const of = (side: QueueSide) => passes.filter((pass) => pass.side === side);
	const node = of('node');
	const http = of('httpRequest');
	const withoutKey = of('nodeWithoutKey');
	if (!node.length || !http.length) return { figures: [], misses: [] };
	const rate = (list: QueuePass[]) => med(list, (pass) => pass.executionsPerSecond);
	const rates = (list: QueuePass[]) => spread(list.map((pass) => pass.executionsPerSecond), (value) => value.toFixed(1));
	const nodeRate = rate(node);
	const httpRate = rate(http);
	const ok = nodeRate / httpRate >= QUEUE_GOAL && node.every((pass) => pass.executions.success === pass.events);
	const cpuPerExecution = (list: QueuePass[]) => med(list, (pass) => pass.clusterCpuMs / pass.events);
	const postgresPerExecution = (list: QueuePass[]) => med(list, (pass) => pass.postgresCpuMs / pass.events);
	/** Cores n8n and Postgres kept busy over a pass, on average. */
	const busy = (list: QueuePass[]) => med(list, (pass) => (pass.clusterCpuMs + pass.postgresCpuMs) / pass.ms);
	const sides: Array<[string, QueuePass[]]> = [
		['the ERP example', node],
		['without its Idempotency Key', withoutKey],
		['HTTP Request', http],
	];
	const present = sides.filter(([, list]) => list.length > 0);
	const name = `Queue mode (main + ${scale.workers} workers, --concurrency=${scale.concurrency}, Postgres, Redis), ${scale.events} webhook events ${scale.atOnce} at a time, https at ${scale.latencyMs} ms round trip`;
	const figures: Figure[] = [
		{
			row: '17',
			figure: `${name}: executions/s, the ERP example (Companion Push) / the same workflow with the HTTP Request node`,
			measured: `${ratio(nodeRate / httpRate)}: ${rates(node)} vs ${rates(http)} executions/s`,
			goal: `>= ${QUEUE_GOAL}x`,
			verdict: verdictOf(ok),
			how: `One cluster (scripts/queueMode.ts), the workflows published: the ERP example as shipped (Webhook -> Companion Push Send with its Idempotency Key and Retry On Fail), the same without its Idempotency Key, and the same built with the HTTP Request node v${HTTP_REQUEST_VERSION} (same webhook, same message, a bearer token header, the same Retry On Fail, no Idempotency Key); after a warm-up pass of ${scale.warmUpEvents} events each, ${scale.reps} passes of each with new events, in turn (order reversed every other round); a pass lasts from its first POST to its last execution's stoppedAt in Postgres; medians (min–max) of the passes' rates.`,
		},
		{
			row: '17',
			figure: `${name}: context`,
			measured:
				(withoutKey.length ? `the ERP example without its Idempotency Key: ${rates(withoutKey)} executions/s (${ratio(rate(withoutKey) / httpRate)} of the HTTP Request workflow); ` : '') +
				`executions ${present.map(([label, list]) => `${label} ${list.map((pass) => JSON.stringify(pass.executions)).join(' ')}`).join(', ')}; ` +
				`events sent ${present.map(([label, list]) => `${label} ${constant(list.map((pass) => pass.eventsSent))} (twice ${constant(list.map((pass) => pass.eventsSentTwice))})`).join(', ')}; ` +
				`CPU per execution, main + workers: ${present.map(([label, list]) => `${label} ${ms(cpuPerExecution(list))}`).join(', ')}; Postgres: ${present.map(([label, list]) => `${label} ${ms(postgresPerExecution(list))}`).join(', ')}; ` +
				`cores n8n and Postgres kept busy (of ${results.cores}): ${present.map(([label, list]) => `${label} ${busy(list).toFixed(2)}`).join(', ')}; RSS at the end ${Object.entries(results.rssMb).map(([process, mb]) => `${process} ${mb} MB`).join(', ')}`,
			goal: '—',
			verdict: '—',
			how: "CPU: user + system time (/proc) over each pass, per execution, of main and the workers (task runners not counted: these workflows have no Code node) and of Postgres's server processes; events sent counted in the sandbox log by their title.",
		},
	];
	const keyShare = withoutKey.length
		? ` Without its Idempotency Key the example runs ${rate(withoutKey).toFixed(1)} executions/s (${ratio(rate(withoutKey) / httpRate)}) with ${ms(cpuPerExecution(withoutKey))} + ${ms(postgresPerExecution(withoutKey))} of CPU per execution: the key (claimed and confirmed in n8n's processed-data store, in Postgres) costs ${ms(cpuPerExecution(node) - cpuPerExecution(withoutKey))} of n8n CPU and ${ms(postgresPerExecution(node) - postgresPerExecution(withoutKey))} of Postgres per execution; the rest over the HTTP Request node is the node's work per execution (the credential read from the database and decrypted, parameter and answer checks).`
		: '';
	const misses = ok
		? []
		: [
				`Row 17 (${ratio(nodeRate / httpRate)} < ${QUEUE_GOAL}x): n8n and Postgres kept ${busy(node).toFixed(2)} of the machine's ${results.cores} cores busy during the ERP example's passes (the sandbox and the link use the rest), so the rate follows the CPU per execution: n8n (main + workers) ${ms(cpuPerExecution(node))} for the ERP example and ${ms(cpuPerExecution(http))} for the HTTP Request workflow, Postgres ${ms(postgresPerExecution(node))} and ${ms(postgresPerExecution(http))}.${keyShare}`,
			];
	return { figures, misses };
}
