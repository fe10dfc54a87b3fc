/**
 * The real-n8n suite (rows 11-15): both sides in the real n8n 2.41.1, the package installed as a
 * community package, in the same `n8n execute` (same process, same database): this package's
 * Companion Push node (Send, its defaults) and n8n's HTTP Request node built as a user builds the
 * job (bench/n8nWorkflows.cts), each timed by n8n's own executionTime. Production-shaped: an https
 * sandbox in this process (a certificate authority made for the run, which n8n trusts through
 * NODE_EXTRA_CA_CERTS: nothing insecure switched on) behind a delayed link (bench/linkDelay.cts)
 * with the figure's round trip, so a new connection costs its TCP and TLS round trips; n8n's CPU
 * time per node run (/proc); the same on Postgres, and there the credential reads of a 1,000-item
 * run (Postgres's statement log); Wait for Final Status on 100 sends. Each repetition is one
 * `n8n execute` (a new process) of one workflow holding every chain, warm-ups first; the two sides
 * of a case run back to back, their order swapped every other repetition.
 */
import '../devkit/env.cts';

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { UNSET_MAX_PARALLEL_REQUESTS } from '../nodes/CompanionPush/actions/itemLoop';
import type { Sandbox } from '../sandbox/index.cts';
import { DETAIL, REFRESH, SEND, SEND_LIST } from '../devkit/endpoints.cts';
import {
	N8nHome as BenchN8n,
	credentialEntry,
	type NodeRun,
	type RunningPostgres,
	type RunResult,
	startPostgres,
} from '../devkit/n8n/index.cts';
import { startHttpsSite, type DelayedLink } from './linkDelay.cts';
import { CpuTimeline, med, median, ms, perMs, ratio, sendsTitled, spread } from './measure.cts';
import { benchWorkflow, HTTP_REQUEST_VERSION, sendNodeName, titleOf } from './n8nWorkflows.cts';
import type { ChainSpec, ChainTarget } from './n8nWorkflows.cts';
import { constant, fmtK, verdictOf } from './report.cts';
import type { Figure, SuiteReport } from './report.cts';

export const FULL_N8N_SCALE = {
	/** Users of each sandbox's primary organization. */
	users: 5000,
	/** Round-trip times of the link (ms). */
	latencies: [0, 40],
	/** One-recipient sends per case. */
	itemCounts: [200, 1000],
	/** The node with Max Parallel Requests set (it takes 1 to 100). */
	parallelVariants: [
		[200, 50],
		[1000, 25],
		[1000, 50],
		[1000, 75],
	].map(([items, maxParallelRequests]) => ({ items, maxParallelRequests })),
	warmUpItems: 100,
	/** Wait for Final Status: sends of one Send run (one recipient with one healthy phone each); one send's settle time. */
	waitSends: 100,
	deliveryMs: 1500,
	reps: 3,
	/** Repetitions on Postgres, at this round trip; items of the credential-reads run. */
	postgresReps: 3,
	postgresLatencyMs: 40,
	credentialReadItems: 1000,
};
export type N8nScale = typeof FULL_N8N_SCALE;

const WAIT_READS_GOAL = 0.1;
const WAIT_TIME_GOAL = 3;

const WORKFLOW_ID = (db: string, rep: number) => `bench-${db}-${rep % 2 === 0 ? 'a' : 'b'}`;
const READS_WORKFLOW_ID = 'bench-credential-reads';
const CREDENTIAL = { id: 'benchHttpsCredential', name: 'Bench sandbox over https' };

/** A sandbox, the delayed link in front of it, and where a chain's side sends through it. */
type Site = { sandbox: Sandbox; link: DelayedLink; target: ChainTarget };
/** What a chain's figures are read from after the run. */
type SiteLogs = {
	sandbox: Pick<Sandbox, 'requestLog'>;
	link: Pick<DelayedLink, 'connectionsWithin'>;
};

/** The chains of a repetition: warm-ups, then each case's node and HTTP Request node (order by
 * `rep`); with `extras`, the node at other Max Parallel Requests and the waits. */
export function chainsOf(
	scale: N8nScale,
	userIds: string[],
	onePhoneIds: string[],
	rep: number,
	extras = true,
): ChainSpec[] {
	const sides = ['node', 'httpRequest'] as const;
	const chains: ChainSpec[] = sides.map((side) => ({
		name: `warm-up ${side}`,
		side,
		userIds: userIds.slice(0, scale.warmUpItems),
		warmUp: true,
	}));
	for (const items of scale.itemCounts) {
		const pair = sides.map((side) => ({
			name: `${side} ${items}`,
			side,
			userIds: userIds.slice(0, items),
		}));
		chains.push(...(rep % 2 === 0 ? pair : pair.reverse()));
	}
	if (!extras) return chains;
	for (const { items, maxParallelRequests } of scale.parallelVariants) {
		const name = `node ${items} at ${maxParallelRequests}`;
		chains.push({ name, side: 'node', userIds: userIds.slice(0, items), maxParallelRequests });
	}
	for (const sends of [1, scale.waitSends]) {
		const name = `wait ${sends}`;
		chains.push({
			name,
			side: 'node',
			userIds: onePhoneIds.slice(0, sends),
			waitForFinalStatus: true,
		});
	}
	return chains;
}

export type ChainRun = ReturnType<typeof chainRunOf>;

/**
 * What one chain did: its node's executionTime (ms) and output from n8n's run data; the sends with
 * its title the sandbox saw and accepted (202), and the other calls within the node run's window;
 * the connections the link accepted meanwhile and the most open at once; the n8n process's CPU time
 * meanwhile. A chain the workflow never reached (an earlier node failed) has no figures, and says why.
 */
export function chainRunOf(
	result: RunResult,
	chain: ChainSpec,
	{ sandbox, link }: SiteLogs,
	cpu: Pick<CpuTimeline, 'within'>,
) {
	const [run] =
		(result.run.data?.resultData?.runData?.[sendNodeName(chain)] as NodeRun[] | undefined) ?? [];
	const [from, to] = run ? [run.startTime, run.startTime + run.executionTime] : [NaN, NaN];
	const log = sandbox.requestLog();
	const own = run ? sendsTitled(log, titleOf(chain)) : [];
	const during = log.filter((entry) => entry.time >= from && entry.time <= to);
	const countOf = (endpoint: string) =>
		during.filter((entry) => entry.endpoint === endpoint).length;
	const output = run?.data?.main?.[0] ?? [];
	const { accepted: connections, peakOpen } = run
		? link.connectionsWithin(from, to)
		: { accepted: 0, peakOpen: 0 };
	const n8nCpuMs = run ? cpu.within(from, to) : NaN;
	const error = run
		? run.error && String(run.error.message ?? JSON.stringify(run.error))
		: `did not run: ${String(result.error?.message ?? 'the workflow stopped earlier')}`;
	const { name, side, maxParallelRequests, waitForFinalStatus } = chain;
	const calls = {
		sends: own.length,
		accepted: own.filter((entry) => entry.status === 202).length,
		refreshes: countOf(REFRESH),
		listReads: countOf(SEND_LIST),
		detailReads: countOf(DETAIL),
	};
	const otherCalls =
		during.length - calls.refreshes - calls.listReads - calls.detailReads - countOf(SEND);
	const finalReached = waitForFinalStatus
		? output.filter((item) => item.json.finalStatusReached === true).length
		: undefined;
	return {
		name,
		side,
		items: chain.userIds.length,
		maxParallelRequests,
		waitForFinalStatus,
		ms: run?.executionTime ?? NaN,
		n8nCpuMs,
		finalReached,
		error: error?.slice(0, 300),
		...calls,
		otherCalls,
		connections,
		peakOpen,
	};
}

export type ExecutionRun = Awaited<ReturnType<typeof executeMeasured>>;

/** Runs one repetition's workflow, the sandboxes reset first; every chain but the warm-ups measured. */
async function executeMeasured(
	n8n: BenchN8n,
	chains: ChainSpec[],
	site: Site,
	meta: { db: 'sqlite' | 'postgres'; latencyMs: number; rep: number },
) {
	await site.sandbox.reset();
	const cpu = new CpuTimeline();
	const result = await n8n
		.execute(WORKFLOW_ID(meta.db, meta.rep), { onSpawn: (pid) => cpu.watch(pid) })
		.finally(() => cpu.stop());
	const error = result.error && String(result.error.message ?? JSON.stringify(result.error));
	return {
		...meta,
		/** The CLI's whole time (start-up included): a cost of the bench, not a figure. */
		cliMs: result.durationMs,
		status: result.status,
		error: error?.slice(0, 300),
		chains: chains
			.filter((chain) => !chain.warmUp)
			.map((chain) => chainRunOf(result, chain, site, cpu)),
	};
}

/** The statements of Postgres's log lines (log_statement = all, log_timezone = UTC), with their times. */
export function loggedStatements(text: string): Array<{ at: number; statement: string }> {
	// "2026-11-23 21:30:01.123 UTC [1234] LOG:  execute <unnamed>: SELECT ..."
	const line =
		/^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[\d+\] LOG:\s+(?:statement|execute [^:]*): (.*)$/;
	return text.split('\n').flatMap((entry) => {
		const match = line.exec(entry);
		return match ? [{ at: Date.parse(`${match[1].replace(' ', 'T')}Z`), statement: match[2] }] : [];
	});
}

export type CredentialReadsRun = Awaited<ReturnType<typeof measureCredentialReads>>[number];

/** The credential reads of a 1,000-item run (and of a 1-item run right after), in n8n on Postgres, counted in its statement log. */
async function measureCredentialReads(
	n8n: BenchN8n,
	postgres: RunningPostgres,
	site: Site,
	items: number,
	credential: object,
) {
	const userIds = site.sandbox.orgs.primary.userIds;
	const chains: ChainSpec[] = [items, 1].map((items) => ({
		name: `reads ${items}`,
		side: 'node',
		userIds: userIds.slice(0, items),
	}));
	await n8n.importWorkflows([benchWorkflow(READS_WORKFLOW_ID, chains, site.target)]);
	// A fresh credential (no token yet): the first run renews once.
	await n8n.importCredentials([credential]);
	await site.sandbox.reset();
	const logFrom = fs.statSync(postgres.logFile).size;
	// For n8n's connections to come (each `n8n execute` opens its own).
	await postgres.psql("alter role n8n set log_statement = 'all'");
	const result = await n8n
		.execute(READS_WORKFLOW_ID)
		.finally(() => postgres.psql('alter role n8n reset log_statement'));
	const text = fs.readFileSync(postgres.logFile).subarray(logFrom).toString('utf8');
	const statements = loggedStatements(text);
	return chains.map((chain) => {
		const [run] = result.nodeRuns(sendNodeName(chain));
		const [from, to] = [run.startTime, run.startTime + run.executionTime];
		const during = statements.filter((entry) => entry.at >= from && entry.at <= to);
		const onCredentials = during.filter((entry) => /credentials_entity/i.test(entry.statement));
		const selects = onCredentials.filter((entry) => /^\s*select/i.test(entry.statement));
		const updates = onCredentials.filter((entry) => /^\s*update/i.test(entry.statement));
		const sandboxLog = site.sandbox.requestLog();
		const refreshes = sandboxLog.filter(
			(entry) => entry.endpoint === REFRESH && entry.time >= from && entry.time <= to,
		);
		const savedAfter = (refreshAt: number) =>
			updates.find((update) => update.at >= refreshAt)?.at ?? -Infinity;
		const credentialStatements: Record<string, number> = {};
		for (const { statement } of onCredentials) {
			const shape = statement.replace(/\s+/g, ' ').slice(0, 200);
			credentialStatements[shape] = (credentialStatements[shape] ?? 0) + 1;
		}
		return {
			items: chain.userIds.length,
			renewals: refreshes.length,
			selects: selects.length,
			updates: updates.length,
			/** SELECTs from a refresh's arrival to the UPDATE that saved its token: n8n's own saving of a renewed token, not the node's reads. */
			tokenSaveSelects: selects.filter((select) =>
				refreshes.some(
					(refresh) => select.at >= refresh.time && select.at <= savedAfter(refresh.time),
				),
			).length,
			/** Every statement of the run (any table), for scale; those on credentials_entity, shortened, by how often each came. */
			statements: during.length,
			credentialStatements,
			ms: run.executionTime,
			sends: sendsTitled(sandboxLog, titleOf(chain)).length,
			error: run.error ? String(run.error.message ?? '').slice(0, 300) : undefined,
		};
	});
}

export type N8nResults = Awaited<ReturnType<typeof runN8nSuite>>;

export async function runN8nSuite(
	scale: N8nScale,
	tarball: string,
	log: (line: string) => void = () => {},
) {
	const started = Date.now();
	const results = {
		scale,
		/** How many requests the node starts at once at its defaults (Max Parallel Requests not set). */
		parallel: UNSET_MAX_PARALLEL_REQUESTS,
		executions: [] as ExecutionRun[],
		credentialReads: undefined as CredentialReadsRun[] | undefined,
		/** Why the Postgres part did not run, when it did not. */
		postgresSkipped: undefined as string | undefined,
		totalMs: 0,
	};
	const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-bench-n8n-'));
	fs.chmodSync(temp, 0o755); // Postgres's data folder goes inside: the postgres user must reach it
	const cleanups: Array<() => Promise<void> | void> = [
		() => fs.rmSync(temp, { recursive: true, force: true }),
	];
	const stopLater = <T,>(value: T, stop: (value: T) => Promise<void> | void) => {
		cleanups.unshift(() => stop(value));
		return value;
	};
	try {
		const { sandbox, link, caFile, token } = stopLater(
			await startHttpsSite(temp, { seedUsers: scale.users, deliveryMs: scale.deliveryMs }),
			(site) => site.stop(),
		);
		const target = {
			credentialId: CREDENTIAL.id,
			credentialName: CREDENTIAL.name,
			baseUrl: link.baseUrl,
			token,
		};
		const site: Site = { sandbox, link, target };
		const credential = () =>
			credentialEntry({ ...sandbox.orgs.primary, baseUrl: link.baseUrl }, CREDENTIAL);
		const userIds = sandbox.orgs.primary.userIds;
		const onePhoneIds = sandbox.orgs.primary.usersOfKind('onePhone', scale.waitSends);
		/** A fresh n8n with the package and the credentials, run `reps` times at each round trip. */
		const runIn = async (
			db: 'sqlite' | 'postgres',
			chains: (rep: number) => ChainSpec[],
			{ latencies, reps }: { latencies: number[]; reps: number },
			postgres?: RunningPostgres,
		) => {
			const n8n = stopLater(
				await BenchN8n.create({
					tarball,
					extraEnv: { NODE_EXTRA_CA_CERTS: caFile },
					postgres,
					log,
				}),
				(n8n) => n8n.remove(),
			);
			await n8n.importCredentials([credential()]);
			await n8n.importWorkflows(
				[0, 1].map((rep) => benchWorkflow(WORKFLOW_ID(db, rep), chains(rep), target)),
			);
			for (const latencyMs of latencies) {
				link.setRoundTripMs(latencyMs);
				for (let rep = 0; rep < reps; rep++) {
					log(`n8n on ${db}, ${latencyMs} ms round trip, rep ${rep + 1}/${reps}`);
					const execution = await executeMeasured(n8n, chains(rep), site, { db, latencyMs, rep });
					if (execution.status !== 'success')
						log(`  the run ended "${execution.status}": ${execution.error ?? ''}`);
					results.executions.push(execution);
				}
			}
			return n8n;
		};

		await runIn('sqlite', (rep) => chainsOf(scale, userIds, onePhoneIds, rep), scale);

		// n8n on Postgres: the cases at one round trip, then the credential reads.
		const postgres = await startPostgres({
			root: temp,
			log,
			settings: { log_timezone: 'UTC' },
		}).catch((error: Error) => void (results.postgresSkipped = error.message.split('\n')[0]));
		if (postgres) {
			stopLater(postgres, (postgres) => postgres.stop());
			const onPostgres = await runIn(
				'postgres',
				(rep) => chainsOf(scale, userIds, onePhoneIds, rep, false),
				{ latencies: [scale.postgresLatencyMs], reps: scale.postgresReps },
				postgres,
			);
			log(`credential reads of a ${scale.credentialReadItems}-item run, Postgres statement log`);
			results.credentialReads = await measureCredentialReads(
				onPostgres,
				postgres,
				site,
				scale.credentialReadItems,
				credential(),
			);
		} else log(`Postgres skipped: ${results.postgresSkipped}`);
	} finally {
		for (const cleanup of cleanups) await cleanup();
	}
	results.totalMs = Date.now() - started;
	return results;
}

// ---- the figures ---------------------------------------------------------------------------------------

const executionsAt = (results: N8nResults, db: ExecutionRun['db'], latencyMs: number) =>
	results.executions.filter(
		(execution) => execution.db === db && execution.latencyMs === latencyMs,
	);

/** The chains named in `names`, of each execution that has them all. */
const chainsIn = <K extends string>(
	executions: ExecutionRun[],
	names: Record<K, string>,
): Array<Record<K, ChainRun>> =>
	executions.flatMap((execution) => {
		const found = Object.entries(names).map(
			([key, name]) => [key, execution.chains.find((chain) => chain.name === name)] as const,
		);
		return found.every(([, chain]) => chain)
			? [Object.fromEntries(found) as Record<K, ChainRun>]
			: [];
	});

type CasePair = { node: ChainRun; httpRequest: ChainRun };

/** Rows 11 and 13: a case's API calls (a goal), and the node's time against the HTTP Request node's
 * (context: the node keeps at most Max Parallel Requests in flight where the HTTP Request node starts
 * every request at once, and a verified node cannot keep a connection alive; see "how"). */
function sendCase(
	figures: Figure[],
	results: N8nResults,
	db: ExecutionRun['db'],
	latencyMs: number,
	items: number,
	row: string,
): void {
	const pairs = chainsIn(executionsAt(results, db, latencyMs), {
		node: `node ${items}`,
		httpRequest: `httpRequest ${items}`,
	});
	if (pairs.length === 0) return;
	const P = results.parallel;
	const same = (pick: (pair: CasePair) => number) => constant(pairs.map(pick));
	const name = `${fmtK(items)} one-recipient sends, ${latencyMs} ms round trip${db === 'postgres' ? ', n8n on Postgres' : ''}`;
	const errors = pairs.flatMap((pair) => [pair.node.error, pair.httpRequest.error].filter(Boolean));
	const callsOk =
		errors.length === 0 &&
		pairs.every(
			({ node, httpRequest }) =>
				node.accepted === items &&
				node.sends === items &&
				node.refreshes <= 1 &&
				node.otherCalls === 0 &&
				httpRequest.accepted === items,
		);
	figures.push({
		row,
		figure: `${name}: API calls`,
		measured: `node ${same((pair) => pair.node.accepted)} sends accepted + ${same((pair) => pair.node.refreshes)} refresh${pairs.some((pair) => pair.node.otherCalls) ? ` + ${same((pair) => pair.node.otherCalls)} other` : ''}; HTTP Request node ${same((pair) => pair.httpRequest.accepted)} sends accepted${errors.length ? ` (errors: ${errors.join('; ')})` : ''}`,
		goal: `${items} sends accepted each, at most 1 refresh`,
		verdict: verdictOf(callsOk),
		how: "Counted in the sandbox's request log: the sends carrying the chain's title, the refreshes and other calls within the node run's window (n8n's startTime + executionTime).",
	});
	const perRequest = (pick: (pair: CasePair) => number) => perMs(med(pairs, pick) / items);
	const rounds = Math.ceil(items / P);
	figures.push({
		row,
		figure: `${name}: node / n8n's HTTP Request node (each node's executionTime, same run)`,
		measured:
			`${spread(
				pairs.map((pair) => pair.node.ms / pair.httpRequest.ms),
				ratio,
			)}; node ${ms(med(pairs, (pair) => pair.node.ms))}, HTTP Request node ${ms(med(pairs, (pair) => pair.httpRequest.ms))}. ` +
			`n8n CPU per request: node ${perRequest((pair) => pair.node.n8nCpuMs)}, HTTP Request node ${perRequest((pair) => pair.httpRequest.n8nCpuMs)}; connections ${same((pair) => pair.node.connections)}/${same((pair) => pair.httpRequest.connections)}, at most open at once ${med(pairs, (pair) => pair.node.peakOpen)}/${med(pairs, (pair) => pair.httpRequest.peakOpen)}` +
			(latencyMs > 0
				? `; waiting alone: node ${rounds} x 3 round trips = ${ms(rounds * 3 * latencyMs)} (up to ${P} at a time), HTTP Request node 3 = ${ms(3 * latencyMs)} (all at once)`
				: ''),
		goal: '— (context)',
		verdict: '—',
		how:
			`Both in one \`n8n execute\` of the real n8n 2.41.1 (Node 24, ${db === 'postgres' ? 'DB_TYPE=postgresdb, a fresh Postgres 15' : 'its default SQLite'}), this package installed as a community package from \`npm pack\`: Manual Trigger, then per case a Code node returning the case's items ({ to: <user id> }) -> the Companion Push node (Send, One Send per Input Item, userIds {{ $json.to }}, its defaults: Max Parallel Requests not set, up to ${P} requests at once, credential with a saved token) and a Code node -> n8n's HTTP Request node v${HTTP_REQUEST_VERSION} at its defaults (every item's request at once), POST <base URL>/push-notification/send, header Authorization: Bearer <a token the bench got first>, JSON body with the same message; warm-up chains of ${results.scale.warmUpItems} sends of each side first; the two cases back to back, their order swapped every other repetition. ` +
			"The sandbox in the bench's process serves https with a certificate authority made for the run, which n8n trusts through NODE_EXTRA_CA_CERTS (no insecure option on), behind a delayed link (bench/linkDelay.cts): a request on a new connection holds its caller 3 round trips (connect, TLS handshake, request), 1 on a kept-alive connection; n8n's HTTP helper, which a verified node must use, opens a new connection per request. Each node's executionTime from n8n's run data; ratio per repetition, median (min–max). " +
			"No goal: the node keeps at most Max Parallel Requests (1 to 100) in flight, where the HTTP Request node starts every request at once, so beyond 100 sends the node waits more rounds by design. CPU: user + system time of the n8n process (/proc/<pid>/stat, sampled every 20 ms) within the node run's window; connections and open-at-once from the link.",
	});
}

/** The node at other Max Parallel Requests, medians, with the default's and the HTTP Request node's times of the same runs. */
function parallelVariantsAt(results: N8nResults, latencyMs: number) {
	return results.scale.parallelVariants.flatMap(({ items, maxParallelRequests }) => {
		const runs = chainsIn(executionsAt(results, 'sqlite', latencyMs), {
			variant: `node ${items} at ${maxParallelRequests}`,
			node: `node ${items}`,
			httpRequest: `httpRequest ${items}`,
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

function waitRows(
	figures: Figure[],
	misses: string[],
	results: N8nResults,
	latencyMs: number,
): void {
	const { waitSends, deliveryMs } = results.scale;
	const runs = chainsIn(executionsAt(results, 'sqlite', latencyMs), {
		many: `wait ${waitSends}`,
		one: 'wait 1',
	});
	if (runs.length === 0) return;
	const reads = (chain: ChainRun) => chain.listReads + chain.detailReads;
	const readsPerSend = runs.map((run) => reads(run.many) / run.many.accepted);
	const timeRatio = runs.map((run) => run.many.ms / deliveryMs);
	const complete = runs.every(
		(run) =>
			run.many.finalReached === waitSends && run.many.accepted === waitSends && !run.many.error,
	);
	const readsOk = median(readsPerSend) <= WAIT_READS_GOAL && complete;
	const timeOk = median(timeRatio) <= WAIT_TIME_GOAL && complete;
	const name = `Wait for Final Status on ${waitSends} sends (one Send run), ${latencyMs} ms round trip`;
	const how = `In the real n8n, in the same \`n8n execute\` as row 11: a Code node returning ${waitSends} items, each a user with one healthy phone (sandbox kind onePhone: it settles exactly deliveryMs = ${deliveryMs} ms after the send), -> Companion Push Send with Wait for Final Status on (other options at their defaults). Reads = list pages and send details the sandbox logged within the node run's window.`;
	const twoDecimals = (value: number) => value.toFixed(2);
	figures.push({
		row: '14',
		figure: `${name}: reads of the API per send`,
		measured: `${spread(readsPerSend, twoDecimals)}: ${constant(runs.map((run) => run.many.listReads))} list page(s) + ${constant(runs.map((run) => run.many.detailReads))} details for ${constant(runs.map((run) => run.many.accepted))} sends; final status reached ${constant(runs.map((run) => run.many.finalReached ?? 0))}/${waitSends}`,
		goal: `<= ${WAIT_READS_GOAL}`,
		verdict: verdictOf(readsOk),
		how,
	});
	const oneMs = med(runs, (run) => run.one.ms);
	figures.push({
		row: '14',
		figure: `${name}: its time / one settle time (deliveryMs ${deliveryMs})`,
		measured: `${spread(timeRatio, ratio)}: ${ms(med(runs, (run) => run.many.ms))}; one send alone: ${ms(oneMs)} (${ratio(oneMs / deliveryMs)}) with ${constant(runs.map((run) => reads(run.one)))} reads`,
		goal: `<= ${WAIT_TIME_GOAL}x`,
		verdict: verdictOf(timeOk),
		how: `${how} The node run's executionTime over deliveryMs; one send alone in the same run for comparison.`,
	});
	if (!readsOk || !timeOk) {
		misses.push(
			`Row 14 at ${latencyMs} ms (${spread(readsPerSend, twoDecimals)} reads per send, ${ratio(median(timeRatio))} of deliveryMs): ` +
				`the node reads the list of sends once per round for every send of the run, rounds 1, 2, 4 ... s apart (one send alone: ${ms(oneMs)}, the read that sees the final status up to one interval after it settled); the sends join the rounds as they are made, and the last ones wait for the next round.`,
		);
	}
}

function credentialRows(figures: Figure[], misses: string[], results: N8nResults): void {
	const [big, ...small] = results.credentialReads ?? [];
	if (!big) {
		if (results.postgresSkipped)
			figures.push({
				row: '15',
				figure: 'Credential reads per 1,000-item run',
				measured: `not measured: ${results.postgresSkipped}`,
				goal: '<= renewals + 1',
				verdict: '—',
				how: 'Needs Postgres.',
			});
		return;
	}
	const nodeReads = big.selects - big.tokenSaveSelects;
	// No statement in the window means the log was not read: nothing is proven.
	const ok =
		big.statements > 0 && nodeReads <= big.renewals + 1 && !big.error && big.sends === big.items;
	const statements = Object.entries(big.credentialStatements).map(
		([statement, count]) =>
			`${count} x \`${statement.slice(0, 90)}${statement.length > 90 ? '…' : ''}\``,
	);
	figures.push({
		row: '15',
		figure: `Credential reads per ${fmtK(big.items)}-item run (n8n on Postgres, a fresh credential): reads by the node`,
		measured:
			`${nodeReads} with ${big.renewals} renewal(s). The database saw ${big.selects} SELECTs of credentials_entity and ${big.updates} UPDATE: ${big.tokenSaveSelects} of the SELECTs came between the refresh and the UPDATE, n8n saving the renewed token (its credentials helper reads the stored credential, and again to write it), the rest the node's. ` +
			`${big.sends} sends, ${ms(big.ms)}, ${fmtK(big.statements)} statements in all during the run. ${small.map((run) => `A ${run.items}-item run right after (token saved): ${run.selects} SELECT(s), ${run.renewals} renewals.`).join(' ')} Statements: ${statements.join('; ')}`,
		goal: `<= renewals + 1 (${big.renewals + 1})`,
		verdict: verdictOf(ok),
		how: "The Companion Push node (Send, one send per item) in a regular-mode n8n on Postgres, its credential imported anew without a token; Postgres's statement log (log_statement = all for n8n's role during that `n8n execute` only, log_timezone UTC), the statements naming credentials_entity within the node run's window, by kind; a SELECT between a refresh's arrival at the sandbox and the next UPDATE of credentials_entity is counted as n8n's saving of the renewed token. Every SELECT is a read of the credential from the database (n8n decrypts it each time).",
	});
	if (!ok) {
		misses.push(
			`Row 15 (${nodeReads} reads by the node with ${big.renewals} renewal(s), goal ${big.renewals + 1}; ${big.selects} SELECTs in all): the node reads the credential when its run starts and again only after a renewal or a 401; ${big.error ? `the run failed: ${big.error}` : `the reads beyond that are in the statements listed`}.`,
		);
	}
}

export function n8nFiguresOf(results: N8nResults): SuiteReport {
	const figures: Figure[] = [];
	const misses: string[] = [];
	const { scale, parallel: P } = results;
	for (const items of scale.itemCounts)
		for (const latencyMs of scale.latencies)
			sendCase(figures, results, 'sqlite', latencyMs, items, '11');
	for (const latencyMs of scale.latencies) {
		for (const variant of parallelVariantsAt(results, latencyMs)) {
			figures.push({
				row: '12',
				figure: `${fmtK(variant.items)} sends, ${latencyMs} ms round trip: the node at Max Parallel Requests ${variant.maxParallelRequests}`,
				measured: `${ms(variant.ms)}: ${spread(variant.vsDefault, ratio)} of the node at its defaults (up to ${P} at once), ${spread(variant.vsHttpRequest, ratio)} of the HTTP Request node (same runs); at most ${variant.peakOpen} open at once; n8n CPU per request ${perMs(variant.cpuPerRequest)}; ${constant(variant.accepted)} sends accepted${variant.errors.length ? ` (errors: ${variant.errors.join('; ')})` : ''}`,
				goal: '— (for the default)',
				verdict: '—',
				how: "The same Send, Max Parallel Requests set to the figure's value, in the same `n8n execute` as row 11's https cases, after them; ratios to row 11's node and HTTP Request node of the same run, median (min–max).",
			});
		}
	}
	for (const items of scale.itemCounts)
		sendCase(figures, results, 'postgres', scale.postgresLatencyMs, items, '13');
	for (const latencyMs of scale.latencies) waitRows(figures, misses, results, latencyMs);
	credentialRows(figures, misses, results);
	const cli = results.executions.map((execution) => execution.cliMs);
	const setup = [
		`- Real n8n (rows 11-15): n8n 2.41.1 (devkit/n8n, Node 24), this checkout built, packed and installed as a community package; both nodes in the same \`n8n execute\` per repetition (${cli.length} runs, ${cli.length ? ms(median(cli)) : '—'} each with CLI start-up; the figures use n8n's own executionTime). A sandbox in the bench's process (https with a certificate authority made for the run, trusted through NODE_EXTRA_CA_CERTS), behind a delayed link with a round trip of ${scale.latencies.join(' / ')} ms (bench/linkDelay.cts: a new connection pays its TCP and TLS round trips), answering at once (latencyMs 0), deliveryMs ${scale.deliveryMs}. ${scale.reps} repetitions per round trip on SQLite, ${scale.postgresReps} on Postgres at ${scale.postgresLatencyMs} ms${results.postgresSkipped ? ` (skipped: ${results.postgresSkipped})` : ''}. ${(results.totalMs / 1000).toFixed(0)} s.`,
	];
	return { figures, misses, setup };
}
