/**
 * The real-n8n suite (rows 11-16): both sides in the real n8n 2.41.1, the package installed as a
 * community package, in the same `n8n execute` (same process, same database): this package's
 * Companion Push node (Send, its defaults) and n8n's HTTP Request node built as a user builds the
 * job, each timed by n8n's own executionTime. Production-shaped:
 *
 * - two sandboxes in this process, one over http and one over https (a certificate authority made
 *   for the run, which n8n trusts through NODE_EXTRA_CA_CERTS: nothing insecure switched on);
 * - in front of each a delayed link (bench/linkDelay.ts) with the round-trip time of the figure
 *   (0 and 40 ms): a new connection costs its TCP and TLS round trips, as on a real network;
 * - the CPU time of the n8n process per node run (/proc), the connections each side opened;
 * - raw undici with keep-alive at the node's parallelism through the same link, for context;
 * - the same on Postgres (a regular-mode n8n with DB_TYPE=postgresdb), and there the credential
 *   reads of a 1,000-item run, counted in Postgres's statement log;
 * - Wait for Final Status on 100 sends, its reads counted in the sandbox's log.
 *
 * Each repetition is one `n8n execute` of one workflow holding every chain, warm-up chains first
 * (each `n8n execute` is a new process); the node and the HTTP Request node of a case run back to
 * back, their order swapped every other repetition.
 */
import '../devkit/env';

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

import { startSandbox } from '../sandbox';
import type { Sandbox } from '../sandbox';
import { DETAIL, REFRESH, SEND, SEND_LIST } from '../devkit/endpoints';
import { N8nHome as BenchN8n, credentialEntry, type NodeRun, type RunningPostgres, type RunResult, startPostgres } from '../devkit/n8n';
import { TITLE } from './cases';
import { CpuTimeline } from './cpuTimeline';
import { nodeDefaultParallel } from './latency';
import { startDelayedLink, type DelayedLink } from './linkDelay';
import { benchWorkflow, sendNodeName, titleOf } from './n8nWorkflows';
import type { ChainSide, ChainSpec, ChainTarget, Scheme } from './n8nWorkflows';
import { rawClient } from './raw';

export interface N8nScale {
	/** Users of each sandbox's primary organization. */
	users: number;
	/** Round-trip times of the link (ms). */
	latencies: number[];
	schemes: Scheme[];
	/** One-recipient sends per case. */
	itemCounts: number[];
	/** The node at other Max Parallel Requests, over https (for the default's choice). */
	parallelVariants: Array<{ items: number; maxParallelRequests: number }>;
	/** Items of each warm-up chain. */
	warmUpItems: number;
	/** Wait for Final Status: sends of one Send run (one recipient with one healthy phone each). */
	waitSends: number;
	/** The sandboxes' deliveryMs: one send's settle time. */
	deliveryMs: number;
	reps: number;
	/** Repetitions on Postgres (0: none), at this link latency. */
	postgresReps: number;
	postgresLatencyMs: number;
	/** Items of the credential-reads run on Postgres (0: none). */
	credentialReadItems: number;
}

export const FULL_N8N_SCALE: N8nScale = {
	users: 5000,
	latencies: [0, 40],
	schemes: ['http', 'https'],
	itemCounts: [200, 1000],
	// The node takes 1 to 100 (its default).
	parallelVariants: [
		{ items: 200, maxParallelRequests: 50 },
		{ items: 1000, maxParallelRequests: 25 },
		{ items: 1000, maxParallelRequests: 50 },
		{ items: 1000, maxParallelRequests: 75 },
	],
	warmUpItems: 100,
	waitSends: 100,
	deliveryMs: 1500,
	reps: 3,
	postgresReps: 3,
	postgresLatencyMs: 40,
	credentialReadItems: 1000,
};

/** One chain's node run, from n8n's run data, the sandbox's log, the link and the CPU timeline. */
export interface ChainRun {
	name: string;
	side: ChainSide;
	scheme: Scheme;
	items: number;
	maxParallelRequests?: number;
	waitForFinalStatus?: boolean;
	/** n8n's executionTime of the sending node. */
	ms: number;
	startTime: number;
	outputItems: number;
	error?: string;
	/** Sends with the chain's title the sandbox saw, and how many it accepted (202). */
	sends: number;
	accepted: number;
	/** Calls within the node run's window. */
	refreshes: number;
	/** List pages and details read (Wait for Final Status). */
	listReads: number;
	detailReads: number;
	otherCalls: number;
	/** Connections the link accepted during the run, and the most open at once. */
	connections: number;
	peakOpen: number;
	/** CPU time of the n8n process during the run (ms), and of this process (sandbox and link). */
	n8nCpuMs: number;
	benchCpuMs: number;
	/** Output items whose final status was reached (Wait for Final Status). */
	finalReached?: number;
}

export interface ExecutionRun {
	db: 'sqlite' | 'postgres';
	latencyMs: number;
	rep: number;
	/** The CLI's whole time (start-up included): a cost of the bench, not a figure. */
	cliMs: number;
	status: string;
	error?: string;
	chains: ChainRun[];
}

/** Raw undici through the same link: `parallel` requests in flight, keep-alive or a new connection each. */
export interface RawRun {
	latencyMs: number;
	rep: number;
	scheme: Scheme;
	items: number;
	parallel: number;
	keepAlive: boolean;
	ms: number;
	connections: number;
	peakOpen: number;
}

/** Statements on credentials_entity during one node run, from Postgres's statement log. */
export interface CredentialReadsRun {
	items: number;
	/** Token refreshes the sandbox saw during the run. */
	renewals: number;
	/** SELECTs and UPDATEs of credentials_entity during the run. */
	selects: number;
	updates: number;
	/** SELECTs from a refresh's arrival at the sandbox to the UPDATE that saved its token: n8n's own
	 * saving of a renewed token (a read-modify-write in its credentials helper), not the node's reads. */
	tokenSaveSelects: number;
	/** Every statement the run made (any table), for scale. */
	statements: number;
	/** The statements on credentials_entity, shortened, with how often each came. */
	credentialStatements: Record<string, number>;
	ms: number;
	sends: number;
	error?: string;
}

export interface N8nResults {
	scale: N8nScale;
	/** Raw undici's parallelism: the node's default Max Parallel Requests. */
	parallel: number;
	executions: ExecutionRun[];
	raw: RawRun[];
	credentialReads?: CredentialReadsRun[];
	/** Why the Postgres part did not run, when it did not. */
	postgresSkipped?: string;
	totalMs: number;
}

const WORKFLOW_ID = (db: string, rep: number) => `bench-${db}-${rep % 2 === 0 ? 'a' : 'b'}`;
const READS_WORKFLOW_ID = 'bench-credential-reads';
const credentialIds: Record<Scheme, { id: string; name: string }> = {
	http: { id: 'benchHttpCredential', name: 'Bench sandbox over http' },
	https: { id: 'benchHttpsCredential', name: 'Bench sandbox over https' },
};

interface Site {
	sandbox: Sandbox;
	link: DelayedLink;
	target: ChainTarget;
}

/** The chains of a repetition: warm-ups, then each case's node and HTTP Request node (order by `rep`), the variants, the waits. */
export function chainsOf(scale: N8nScale, userIds: string[], onePhoneIds: string[], rep: number, { schemes = scale.schemes, extras = true } = {}): ChainSpec[] {
	const chains: ChainSpec[] = [];
	for (const scheme of schemes) {
		for (const side of ['node', 'httpRequest'] as const) {
			chains.push({ name: `warm-up ${side} ${scheme}`, side, scheme, userIds: userIds.slice(0, scale.warmUpItems), warmUp: true });
		}
	}
	for (const scheme of schemes) {
		for (const items of scale.itemCounts) {
			const pair: ChainSpec[] = [
				{ name: `node ${scheme} ${items}`, side: 'node', scheme, userIds: userIds.slice(0, items) },
				{ name: `httpRequest ${scheme} ${items}`, side: 'httpRequest', scheme, userIds: userIds.slice(0, items) },
			];
			chains.push(...(rep % 2 === 0 ? pair : pair.reverse()));
		}
	}
	if (extras && schemes.includes('https')) {
		for (const { items, maxParallelRequests } of scale.parallelVariants) {
			chains.push({ name: `node https ${items} at ${maxParallelRequests}`, side: 'node', scheme: 'https', userIds: userIds.slice(0, items), maxParallelRequests });
		}
		if (scale.waitSends > 0) {
			chains.push({ name: 'wait https 1', side: 'node', scheme: 'https', userIds: onePhoneIds.slice(0, 1), waitForFinalStatus: true });
			chains.push({ name: `wait https ${scale.waitSends}`, side: 'node', scheme: 'https', userIds: onePhoneIds.slice(0, scale.waitSends), waitForFinalStatus: true });
		}
	}
	return chains;
}

/** What one chain did, read off n8n's run data, the sandbox's log, the link and the CPU timeline. */
export function chainRunOf(result: RunResult, chain: ChainSpec, sandbox: Pick<Sandbox, 'requestLog'>, link: Pick<DelayedLink, 'connectionsWithin'>, cpu: Pick<CpuTimeline, 'within'>): ChainRun {
	const spec = {
		name: chain.name,
		side: chain.side,
		scheme: chain.scheme,
		items: chain.userIds.length,
		...(chain.maxParallelRequests !== undefined ? { maxParallelRequests: chain.maxParallelRequests } : {}),
		...(chain.waitForFinalStatus ? { waitForFinalStatus: true } : {}),
	};
	const [run] = (result.run.data?.resultData?.runData?.[sendNodeName(chain)] as NodeRun[] | undefined) ?? [];
	if (!run) {
		// The workflow stopped before this chain (an earlier node failed): no figures, and why.
		const error = `did not run: ${String(result.error?.message ?? 'the workflow stopped earlier').slice(0, 200)}`;
		const nothing = { sends: 0, accepted: 0, refreshes: 0, listReads: 0, detailReads: 0, otherCalls: 0, connections: 0, peakOpen: 0, outputItems: 0 };
		return { ...spec, ...nothing, ms: NaN, startTime: NaN, n8nCpuMs: NaN, benchCpuMs: NaN, error };
	}
	const from = run.startTime;
	const to = run.startTime + run.executionTime;
	const title = titleOf(chain);
	const log = sandbox.requestLog();
	const own = log.filter((entry) => entry.endpoint === SEND && (entry.body as { title?: unknown } | undefined)?.title === title);
	const during = log.filter((entry) => entry.time >= from && entry.time <= to);
	const countOf = (endpoint: string) => during.filter((entry) => entry.endpoint === endpoint).length;
	const output = run.data?.main?.[0] ?? [];
	const { accepted: connections, peakOpen } = link.connectionsWithin(from, to);
	const used = cpu.within(from, to);
	return {
		...spec,
		...(chain.waitForFinalStatus ? { finalReached: output.filter((item) => item.json.finalStatusReached === true).length } : {}),
		ms: run.executionTime,
		startTime: run.startTime,
		outputItems: output.length,
		error: run.error ? String(run.error.message ?? JSON.stringify(run.error)).slice(0, 300) : undefined,
		sends: own.length,
		accepted: own.filter((entry) => entry.status === 202).length,
		refreshes: countOf(REFRESH),
		listReads: countOf(SEND_LIST),
		detailReads: countOf(DETAIL),
		otherCalls: during.length - countOf(REFRESH) - countOf(SEND_LIST) - countOf(DETAIL) - countOf(SEND),
		connections,
		peakOpen,
		n8nCpuMs: used.otherMs,
		benchCpuMs: used.ownMs,
	};
}

/** Runs one repetition's workflow, the sandboxes reset first; every chain but the warm-ups measured. */
async function executeMeasured(n8n: BenchN8n, workflowId: string, chains: ChainSpec[], sites: Record<Scheme, Site>, meta: Omit<ExecutionRun, 'cliMs' | 'status' | 'chains'>): Promise<ExecutionRun> {
	for (const site of Object.values(sites)) await site.sandbox.reset();
	const cpu = new CpuTimeline();
	let result: RunResult;
	try {
		result = await n8n.execute(workflowId, { onSpawn: (pid) => cpu.watch(pid) });
	} finally {
		cpu.stop();
	}
	const measured = chains.filter((chain) => !chain.warmUp);
	return {
		...meta,
		cliMs: result.durationMs,
		status: result.status,
		error: result.error ? String(result.error.message ?? JSON.stringify(result.error)).slice(0, 300) : undefined,
		chains: measured.map((chain) => chainRunOf(result, chain, sites[chain.scheme].sandbox, sites[chain.scheme].link, cpu)),
	};
}

/** Raw undici: a token, then `items` one-recipient POSTs, `parallel` at once, through the link (the sends timed). */
async function rawRun(site: Site, scheme: Scheme, userIds: string[], parallel: number, keepAlive: boolean, meta: { latencyMs: number; rep: number }): Promise<RawRun> {
	await site.sandbox.reset();
	const width = Math.min(parallel, userIds.length);
	const client = rawClient(site.sandbox, width, { baseUrl: site.link.baseUrl, newConnectionEach: !keepAlive });
	try {
		const token = await client.token();
		let next = 0;
		const from = Date.now();
		const started = performance.now();
		await Promise.all(
			Array.from({ length: width }, async () => {
				while (next < userIds.length) {
					const to = userIds[next++];
					await client.post('/push-notification/send', token, JSON.stringify({ title: TITLE, body: 'raw', target_user_ids: [to] }));
				}
			}),
		);
		const ms = performance.now() - started;
		const { accepted: connections, peakOpen } = site.link.connectionsWithin(from, Date.now());
		return { ...meta, scheme, items: userIds.length, parallel: width, keepAlive, ms, connections, peakOpen };
	} finally {
		await client.close();
	}
}

/** The statements of Postgres's log lines (log_statement = all), with their times. */
export function loggedStatements(text: string): Array<{ at: number; statement: string }> {
	const statements: Array<{ at: number; statement: string }> = [];
	// "2026-11-23 21:30:01.123 UTC [1234] LOG:  execute <unnamed>: SELECT ..." (log_timezone = UTC)
	const line = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[\d+\] LOG:\s+(?:statement|execute [^:]*): (.*)$/;
	for (const entry of text.split('\n')) {
		const match = line.exec(entry);
		if (match) statements.push({ at: Date.parse(`${match[1].replace(' ', 'T')}Z`), statement: match[2] });
	}
	return statements;
}

/** The credential reads of a 1,000-item run (and of a 1-item run), in n8n on Postgres, counted in its statement log. */
async function measureCredentialReads(n8n: BenchN8n, postgres: RunningPostgres, site: Site, scale: N8nScale, credential: object, log: (line: string) => void): Promise<CredentialReadsRun[]> {
	const userIds = site.sandbox.orgs.primary.userIds;
	const chains: ChainSpec[] = [
		{ name: `reads ${scale.credentialReadItems}`, side: 'node', scheme: 'https', userIds: userIds.slice(0, scale.credentialReadItems) },
		{ name: 'reads 1', side: 'node', scheme: 'https', userIds: userIds.slice(0, 1) },
	];
	await n8n.importWorkflows([benchWorkflow(READS_WORKFLOW_ID, chains, { http: site.target, https: site.target })]);
	// A fresh credential (no token yet): the first run renews once.
	await n8n.importCredentials([credential]);
	await site.sandbox.reset();
	const logFrom = fs.statSync(postgres.logFile).size;
	// For n8n's connections to come (each `n8n execute` opens its own).
	await postgres.psql("alter role n8n set log_statement = 'all'");
	let result: RunResult;
	try {
		result = await n8n.execute(READS_WORKFLOW_ID);
	} finally {
		await postgres.psql('alter role n8n reset log_statement');
	}
	const text = fs.readFileSync(postgres.logFile).subarray(logFrom).toString('utf8');
	const statements = loggedStatements(text);
	if (statements.length === 0) log(`credential reads: no statement found in Postgres's log (${text.length} bytes read)`);
	return chains.map((chain) => {
		const [run] = result.nodeRuns(sendNodeName(chain));
		const from = run.startTime;
		const to = run.startTime + run.executionTime;
		const during = statements.filter((entry) => entry.at >= from && entry.at <= to);
		const onCredentials = during.filter((entry) => /credentials_entity/i.test(entry.statement));
		const selects = onCredentials.filter((entry) => /^\s*select/i.test(entry.statement));
		const updates = onCredentials.filter((entry) => /^\s*update/i.test(entry.statement));
		const sandboxLog = site.sandbox.requestLog();
		const refreshes = sandboxLog.filter((entry) => entry.endpoint === REFRESH && entry.time >= from && entry.time <= to);
		const savedAfter = (refreshAt: number) => updates.find((update) => update.at >= refreshAt)?.at ?? -Infinity;
		return {
			items: chain.userIds.length,
			renewals: refreshes.length,
			selects: selects.length,
			updates: updates.length,
			tokenSaveSelects: selects.filter((select) => refreshes.some((refresh) => select.at >= refresh.time && select.at <= savedAfter(refresh.time))).length,
			statements: during.length,
			credentialStatements: onCredentials.reduce<Record<string, number>>((shapes, entry) => {
				const shape = entry.statement.replace(/\s+/g, ' ').slice(0, 200);
				return { ...shapes, [shape]: (shapes[shape] ?? 0) + 1 };
			}, {}),
			ms: run.executionTime,
			sends: sandboxLog.filter((entry) => entry.endpoint === SEND && (entry.body as { title?: unknown } | undefined)?.title === titleOf(chain)).length,
			error: run.error ? String(run.error.message ?? '').slice(0, 300) : undefined,
		};
	});
}

export async function runN8nSuite(scale: N8nScale, tarball: string, log: (line: string) => void = () => {}): Promise<N8nResults> {
	const started = Date.now();
	const parallel = nodeDefaultParallel();
	const results: N8nResults = { scale, parallel, executions: [], raw: [], totalMs: 0 };
	const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-bench-n8n-'));
	fs.chmodSync(temp, 0o755); // Postgres's data folder goes inside: the postgres user must reach it
	const cleanups: Array<() => Promise<void> | void> = [() => fs.rmSync(temp, { recursive: true, force: true })];
	try {
		const sites = {} as Record<Scheme, Site>;
		for (const scheme of ['http', 'https'] as const) {
			const sandbox = await startSandbox({ port: 0, seedUsers: scale.users, clock: 'real', deliveryMs: scale.deliveryMs, ...(scheme === 'https' ? { tls: true as const } : {}) });
			cleanups.unshift(() => sandbox.stop());
			const link = await startDelayedLink(sandbox.baseUrl);
			cleanups.unshift(() => link.close());
			const client = rawClient(sandbox);
			const token = await client.token().finally(() => client.close());
			sites[scheme] = { sandbox, link, target: { credentialId: credentialIds[scheme].id, credentialName: credentialIds[scheme].name, baseUrl: link.baseUrl, token } };
		}
		const caFile = path.join(temp, 'sandbox-ca.pem');
		fs.writeFileSync(caFile, sites.https.sandbox.caCertificate!);
		const targets = { http: sites.http.target, https: sites.https.target };
		const credentialOf = (scheme: Scheme) => {
			const { clientId, clientSecret, refreshToken } = sites[scheme].sandbox.orgs.primary;
			return credentialEntry({ baseUrl: sites[scheme].link.baseUrl, clientId, clientSecret, refreshToken }, credentialIds[scheme]);
		};
		// Both sandboxes are seeded alike: the same user ids.
		const userIds = sites.https.sandbox.orgs.primary.userIds;
		const onePhoneIds = sites.https.sandbox.orgs.primary.usersOfKind('onePhone', scale.waitSends);
		const setLatency = (ms: number) => Object.values(sites).forEach((site) => site.link.setRoundTripMs(ms));

		// ---- n8n on SQLite (its default)
		const n8n = await BenchN8n.create({ tarball, extraEnv: { NODE_EXTRA_CA_CERTS: caFile }, log });
		cleanups.unshift(() => n8n.remove());
		await n8n.importCredentials(scale.schemes.map(credentialOf));
		await n8n.importWorkflows([0, 1].map((rep) => benchWorkflow(WORKFLOW_ID('sqlite', rep), chainsOf(scale, userIds, onePhoneIds, rep), targets)));
		log(`real n8n ready (${Math.round((Date.now() - started) / 1000)} s): http ${sites.http.link.baseUrl}, https ${sites.https.link.baseUrl}`);
		for (const latencyMs of scale.latencies) {
			setLatency(latencyMs);
			for (let rep = 0; rep < scale.reps; rep++) {
				log(`n8n, ${latencyMs} ms round trip, rep ${rep + 1}/${scale.reps}`);
				const execution = await executeMeasured(n8n, WORKFLOW_ID('sqlite', rep), chainsOf(scale, userIds, onePhoneIds, rep), sites, { db: 'sqlite', latencyMs, rep });
				if (execution.status !== 'success') log(`  the run ended "${execution.status}": ${execution.error ?? ''}`);
				results.executions.push(execution);
				for (const scheme of scale.schemes) {
					for (const items of scale.itemCounts) {
						for (const keepAlive of [true, false]) {
							results.raw.push(await rawRun(sites[scheme], scheme, userIds.slice(0, items), parallel, keepAlive, { latencyMs, rep }));
						}
					}
				}
			}
		}

		// ---- n8n on Postgres: the https cases, then the credential reads
		if (scale.postgresReps > 0 || scale.credentialReadItems > 0) {
			let postgres: RunningPostgres | undefined;
			try {
				postgres = await startPostgres({ root: temp, log, settings: { log_timezone: 'UTC' } });
			} catch (error) {
				results.postgresSkipped = (error as Error).message.split('\n')[0];
				log(`Postgres skipped: ${results.postgresSkipped}`);
			}
			if (postgres) {
				const running = postgres;
				cleanups.unshift(() => running.stop());
				const onPostgres = await BenchN8n.create({ tarball, extraEnv: { NODE_EXTRA_CA_CERTS: caFile }, postgres, log });
				cleanups.unshift(() => onPostgres.remove());
				await onPostgres.importCredentials(['https' as const].map(credentialOf));
				const pgChains = (rep: number) => chainsOf(scale, userIds, onePhoneIds, rep, { schemes: ['https'], extras: false });
				await onPostgres.importWorkflows([0, 1].map((rep) => benchWorkflow(WORKFLOW_ID('postgres', rep), pgChains(rep), targets)));
				setLatency(scale.postgresLatencyMs);
				for (let rep = 0; rep < scale.postgresReps; rep++) {
					log(`n8n on Postgres, ${scale.postgresLatencyMs} ms round trip, rep ${rep + 1}/${scale.postgresReps}`);
					results.executions.push(await executeMeasured(onPostgres, WORKFLOW_ID('postgres', rep), pgChains(rep), sites, { db: 'postgres', latencyMs: scale.postgresLatencyMs, rep }));
				}
				if (scale.credentialReadItems > 0) {
					log(`credential reads of a ${scale.credentialReadItems}-item run, Postgres statement log`);
					results.credentialReads = await measureCredentialReads(onPostgres, postgres, sites.https, scale, credentialOf('https'), log);
				}
			}
		}
	} finally {
		for (const cleanup of cleanups) await cleanup();
	}
	results.totalMs = Date.now() - started;
	return results;
}
