/**
 * `npm run bench -- queue-keys` (or `npx ts-node --transpile-only bench/queueKeys.ts`): how the
 * Idempotency Keys hold up in n8n's real queue mode, under load. Each run builds and packs the
 * package of this checkout, starts a fresh cluster (scripts/queueMode.ts: Postgres 15, Redis, n8n
 * main and N workers with the package installed) against the sandbox API in this process (tokens
 * of 20 s whose refresh revokes the previous token), and drives copies of the ERP webhook example
 * (examples/erp-event-to-push.json: Idempotency Key from the event, Retry On Fail), one copy per
 * case so that every case starts on an empty store:
 *
 * - burst-K: N distinct events posted K at a time, then every event posted again (same ids).
 *   Per pass: executions failed (and their errors), events never sent, sent twice, sent again.
 * - pair-Gms: R rounds of the same event posted twice, G ms apart (two concurrent POSTs); which
 *   worker ran each copy (the workers' logs), rounds where the user was notified twice.
 *
 * Sends are counted in the sandbox's request log (a send the sandbox registered). After each pass
 * the store itself is read with psql (bench/queueKeysStore.ts): the workflow's processed_data rows,
 * how many of the events' keys (and accepted marks) they hold (bench/queueKeysFormat.ts: the
 * strings the package stores, pluggable), and every write the pass made to them (a trigger logs
 * it: entries dropped by a write are lost updates). Each run ends by timing one whole-row read and
 * UPDATE of that table at several sizes in the same Postgres.
 *
 * Each run's raw figures are appended to a JSON-lines file as soon as it ends (--save); --report
 * renders saved runs as the "Idempotency Keys in queue mode" section of bench/RESULTS.md.
 *
 * Options:
 *   --workers 2,4        one run per worker count (default 2)
 *   --runs N             fresh clusters per worker count (default 1)
 *   --cases LIST         burst-K and pair-Gms cases (default burst-20,burst-50,pair-1ms,pair-1000ms)
 *   --events N           events of a burst (default 300)
 *   --rounds N           rounds of a pair case (default 30)
 *   --concurrency N      jobs per worker at once (`n8n worker --concurrency`, default 10)
 *   --row-sizes LIST     entries of the rows whose read and UPDATE are timed (default 1000,10000,20000,100000; none: 0)
 *   --prefill N          the keys' row holds N synthetic entries before each burst (what a key costs in a full row; default 0)
 *   --keys-to-keep N     Keys to Keep of the example's node (its default otherwise; at least the prefill, or the row is cut)
 *   --format NAME|FILE   what the package stores per key: auto (default: the format that finds the
 *                        most keys), a name of bench/queueKeysFormat.ts, or a module exporting one
 *   --no-build           pack the dist/ that is there instead of running `npm run build` first
 *   --no-wait            start even while other n8n processes run on this machine (by default the
 *                        run waits, checking every minute: they would share the CPUs)
 *   --save FILE          where each run's raw figures are appended (default: a file in the temp folder)
 *   --label TEXT         a name for these runs in the report (e.g. "before", "lock protocol")
 *   --report FILES       measure nothing: render the runs saved in these files (comma-separated)
 *   --write-results      with --report: put the section into bench/RESULTS.md (else print it)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { startSandbox, type LoggedRequest, type Sandbox } from '../sandbox';
import {
	credentialEntry,
	ensureRuntime,
	exampleWorkflows,
	type ExecutionRow,
	packPackage,
	type QueueCluster,
	request,
	startQueueCluster,
} from '../devkit/n8n';
import { KEY_VALUE_FORMATS, isAccepted, keysFound, likeliestFormat, loadFormat, entryHash, tellsAccepted, type KeyValueFormat } from './queueKeysFormat';
import { renderQueueKeysSection, writeQueueKeysSection } from './queueKeysReport';
import { otherN8nProcesses, waitForQuietMachine } from './quietMachine';
import type { CaseResult, PairRound, PassResult, PostgresErrors, QueueKeysRun, StoreSnapshot } from './queueKeysReport';
import { REFRESH, SEND, SEND_LIST } from '../devkit/endpoints';
import { installWriteLog, lastWriteId, Psql, readStoreRows, readWrites, timeRowCost } from './queueKeysStore';

const ROOT = path.resolve(__dirname, '..');
const ERP_EXAMPLE = 'cpExampleErpEvent';
const TOKEN_LIFE_SECONDS = 20;

type Json = Record<string, any>;
export type ErpEvent = { orderId: string; status: string; userId: string };

export interface QueueKeysOptions {
	workers: number[];
	runs: number;
	cases: string[];
	events: number;
	rounds: number;
	concurrency: number;
	rowSizes: number[];
	/** Entries the keys' row holds before each burst (synthetic keys), to measure what a key costs in a full row. */
	prefill: number;
	/** Keys to Keep of the example's node (its default when absent). */
	keysToKeep?: number;
	format: string;
	build: boolean;
	wait: boolean;
	save: string;
	label?: string;
	report?: string[];
	writeResults: boolean;
	/** The command line, for the report. */
	command: string;
}

const DEFAULT_CASES = ['burst-20', 'burst-50', 'pair-1ms', 'pair-1000ms'];

const wholeNumbers = (name: string, text: string, min: number): number[] =>
	text.split(',').map((part) => {
		const value = Number(part.trim());
		if (part.trim() === '' || !Number.isInteger(value) || value < min) throw new Error(`${name} takes whole numbers >= ${min} (got "${text}")`);
		return value;
	});

export function parseQueueKeysArgs(argv: string[]): QueueKeysOptions {
	const options: QueueKeysOptions = {
		workers: [2],
		runs: 1,
		cases: DEFAULT_CASES,
		events: 300,
		rounds: 30,
		concurrency: 10,
		rowSizes: [1000, 10_000, 20_000, 100_000],
		prefill: 0,
		format: 'auto',
		build: true,
		wait: true,
		save: path.join(os.tmpdir(), `companion-push-queue-keys-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`),
		writeResults: false,
		command: ['npm run bench -- queue-keys', ...argv].join(' '),
	};
	for (let index = 0; index < argv.length; index++) {
		const [flag, inline] = argv[index].split(/=(.*)/s, 2);
		const value = () => {
			const text = inline !== undefined ? inline : argv[++index];
			if (text === undefined) throw new Error(`${flag} needs a value`);
			return text;
		};
		switch (flag) {
			case '--workers':
				options.workers = wholeNumbers(flag, value(), 1);
				break;
			case '--runs':
				[options.runs] = wholeNumbers(flag, value(), 1);
				break;
			case '--cases':
				options.cases = value().split(',').map((name) => name.trim()).filter(Boolean);
				break;
			case '--events':
				[options.events] = wholeNumbers(flag, value(), 1);
				break;
			case '--rounds':
				[options.rounds] = wholeNumbers(flag, value(), 1);
				break;
			case '--concurrency':
				[options.concurrency] = wholeNumbers(flag, value(), 1);
				break;
			case '--row-sizes':
				options.rowSizes = wholeNumbers(flag, value(), 0).filter((size) => size > 0);
				break;
			case '--prefill':
				[options.prefill] = wholeNumbers(flag, value(), 0);
				break;
			case '--keys-to-keep':
				[options.keysToKeep] = wholeNumbers(flag, value(), 1);
				break;
			case '--format':
				options.format = value();
				break;
			case '--no-build':
				options.build = false;
				break;
			case '--no-wait':
				options.wait = false;
				break;
			case '--save':
				options.save = path.resolve(value());
				break;
			case '--label':
				options.label = value();
				break;
			case '--report':
				options.report = value().split(',').map((file) => path.resolve(file.trim()));
				break;
			case '--write-results':
				options.writeResults = true;
				break;
			default:
				throw new Error(`unknown option ${argv[index]} (see bench/queueKeys.ts)`);
		}
	}
	for (const name of options.cases) caseSpec(name);
	if (options.format !== 'auto') loadFormat(options.format);
	return options;
}

type CaseSpec = { kind: 'burst'; atOnce: number } | { kind: 'pair'; gapMs: number };

/** burst-K (K events in flight) or pair-Gms (two POSTs G ms apart). */
function caseSpec(name: string): CaseSpec {
	const burst = /^burst-(\d+)$/.exec(name);
	if (burst && Number(burst[1]) >= 1) return { kind: 'burst', atOnce: Number(burst[1]) };
	const pair = /^pair-(\d+)ms$/.exec(name);
	if (pair) return { kind: 'pair', gapMs: Number(pair[1]) };
	throw new Error(`--cases: unknown case "${name}" (burst-K, e.g. burst-20, or pair-Gms, e.g. pair-1ms)`);
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;
const tally = (values: string[]) =>
	values.reduce<Record<string, number>>((counts, value) => ({ ...counts, [value]: (counts[value] ?? 0) + 1 }), {});
const load1 = () => Math.round(os.loadavg()[0] * 10) / 10;

/** The commit measured and the shipped folders' uncommitted changes. */
function checkoutMeasured(): { commit: string; uncommitted: string[] } {
	const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trimEnd();
	try {
		const uncommitted = git('status', '--porcelain', '--', 'nodes', 'credentials')
			.split('\n')
			.filter(Boolean)
			.map((line) => line.slice(3));
		return { commit: git('rev-parse', '--short', 'HEAD'), uncommitted };
	} catch {
		return { commit: 'unknown (no git)', uncommitted: [] };
	}
}

/** A template of the example's parameters, filled from an event: only `{{ $json.body.<field> }}` is understood. */
function fillTemplate(template: string, event: Json, what: string): string {
	if (!template.startsWith('=')) return template;
	return template.slice(1).replace(/\{\{(.*?)\}\}/g, (_, expression: string) => {
		const field = /^\s*\$json\.body\.(\w+)\s*$/.exec(expression)?.[1];
		if (!field) throw new Error(`the ERP example's ${what} uses an expression this benchmark cannot evaluate: {{${expression}}}`);
		return String(event[field] ?? '');
	});
}

/** The ERP example, with what the benchmark needs to know of it. */
export function erpExample() {
	const workflow = exampleWorkflows().find((entry) => entry.workflow.id === ERP_EXAMPLE)?.workflow;
	if (!workflow) throw new Error(`examples/ has no workflow with id ${ERP_EXAMPLE} (the ERP webhook example)`);
	const push = (workflow.nodes as Json[]).find((node) => node.credentials?.companionPushApi);
	const webhook = (workflow.nodes as Json[]).find((node) => node.type === 'n8n-nodes-base.webhook');
	const keyTemplate = push?.parameters?.options?.idempotencyKey;
	if (!push || !webhook || typeof keyTemplate !== 'string') throw new Error('the ERP example has no webhook, or no Companion Push node with an Idempotency Key');
	return {
		workflow,
		retry: { retryOnFail: push.retryOnFail === true, maxTries: push.maxTries, waitBetweenTries: push.waitBetweenTries },
		keyOf: (event: ErpEvent) => fillTemplate(keyTemplate, event, 'Idempotency Key'),
		titleOf: (event: ErpEvent) => fillTemplate(push.parameters.title, event, 'title'),
		/** The node whose keys' row (scope node: `n:<its id>`) the store holds. */
		pushNodeId: String(push.id),
		/** A copy with its own id, webhook path and name: its own rows in the store. */
		copy: (id: string, webhookPath: string, keysToKeep?: number) => {
			const copy = JSON.parse(JSON.stringify(workflow));
			if (keysToKeep !== undefined) (copy.nodes as Json[]).find((node) => node.id === push.id)!.parameters.options.keysToKeep = keysToKeep;
			copy.id = id;
			copy.name = `${workflow.name} (queue-keys ${webhookPath})`;
			const hook = (copy.nodes as Json[]).find((node) => node.type === 'n8n-nodes-base.webhook')!;
			hook.parameters.path = webhookPath;
			hook.webhookId = randomUUID();
			return copy;
		},
	};
}

type Example = ReturnType<typeof erpExample>;

/** What one run needs while it measures. */
interface RunContext {
	cluster: QueueCluster;
	sandbox: Sandbox;
	psql: Psql;
	example: Example;
	/** The format fixed by --format, or undefined to pick the likeliest per reading. */
	format?: KeyValueFormat;
	/** Where Postgres writes its log (read for errors), if found. */
	pgLog?: string;
	/** processed_data's primary key: its violations are the failed first INSERTs. */
	pkName: string;
	log: (line: string) => void;
}

/** Postgres's log file of the cluster (queueMode writes it beside the data folder). */
async function findPostgresLog(psql: Psql): Promise<string | undefined> {
	const [[dataDirectory]] = await psql.query('show data_directory');
	const file = path.join(path.dirname(dataDirectory), 'postgres.log');
	return fs.existsSync(file) ? file : undefined;
}

const logSize = (file?: string) => (file && fs.existsSync(file) ? fs.statSync(file).size : 0);

/** ERROR lines of a Postgres log: violations of primary key `pkName` (processed_data's), and the others by message. */
export function countPostgresErrors(logText: string, pkName: string): PostgresErrors {
	let duplicateKey = 0;
	const other: string[] = [];
	for (const line of logText.split('\n')) {
		const error = /\bERROR:\s+(.*)$/.exec(line)?.[1];
		if (!error) continue;
		if (error.includes('duplicate key value violates unique constraint') && error.includes(`"${pkName}"`)) duplicateKey++;
		else other.push(error.slice(0, 160));
	}
	return { duplicateKey, other: tally(other) };
}

/** What Postgres logged since `offset` (bytes), counted; duplicateKey -1 when the log was not found. */
function postgresErrorsSince(context: RunContext, offset: number): PostgresErrors {
	if (!context.pgLog) return { duplicateKey: -1, other: {} };
	const handle = fs.openSync(context.pgLog, 'r');
	try {
		const buffer = Buffer.alloc(Math.max(0, fs.fstatSync(handle).size - offset));
		fs.readSync(handle, buffer, 0, buffer.length, offset);
		return countPostgresErrors(buffer.toString('utf8'), context.pkName);
	} finally {
		fs.closeSync(handle);
	}
}

/** The store after a pass: its rows, how many of the events' keys it holds, and the pass's writes to it. */
async function readStore(context: RunContext, workflowId: string, keys: string[], writesAfter: number): Promise<StoreSnapshot> {
	const { rows, hashes } = await readStoreRows(context.psql, workflowId);
	const format = context.format ?? likeliestFormat(KEY_VALUE_FORMATS, keys, hashes);
	const found = keysFound(format, keys, hashes);
	const writes = await readWrites(context.psql, workflowId, writesAfter);
	// Which events' stored strings some write dropped (a claim is only ever removed when the API refused
	// its send, which the sandbox does not here: a dropped claim is a lost update).
	let claimsDropped = 0;
	let acceptedDropped = 0;
	for (const key of keys) {
		const values = format.valuesOf(key);
		if (writes.dropped.has(entryHash(values.claimed))) claimsDropped++;
		if (values.accepted !== undefined && writes.dropped.has(entryHash(values.accepted))) acceptedDropped++;
	}
	return {
		format: format.name,
		rows,
		keysClaimed: found.claimed,
		keysAccepted: found.accepted,
		hasAcceptedMark: keys.length > 0 && tellsAccepted(format.valuesOf(keys[0])),
		writes: { inserts: writes.inserts, updates: writes.updates, deletes: writes.deletes, claimsDropped, acceptedDropped },
		lastWriteId: writes.lastId,
	};
}

/** Sends the sandbox registered (answered or not) per event, found by their title and recipient. */
export function sendsPerEvent(entries: LoggedRequest[], events: ErpEvent[], titleOf: (event: ErpEvent) => string): number[] {
	const indexOf = new Map(events.map((event, index) => [`${titleOf(event)}\u0000${event.userId}`, index]));
	const counts = events.map(() => 0);
	for (const entry of entries) {
		if (entry.endpoint !== SEND || entry.notificationId === undefined) continue;
		const body = entry.body as Json;
		for (const userId of (body.target_user_ids as string[]) ?? []) {
			const index = indexOf.get(`${body.title}\u0000${userId}`);
			if (index !== undefined) counts[index]++;
		}
	}
	return counts;
}

/** Execution errors by message (failed executions read through the REST API). */
async function failureMessages(context: RunContext, rows: ExecutionRow[]): Promise<Record<string, number>> {
	const messages: string[] = [];
	for (const row of rows.filter((execution) => execution.status !== 'success')) {
		try {
			const execution = await context.cluster.rest.getExecution(row.id);
			const error = execution.data?.resultData?.error;
			messages.push(`${row.status}: ${String(error?.message ?? 'no error recorded').slice(0, 200)}`);
		} catch (error) {
			messages.push(`${row.status}: (execution not readable: ${error.message.slice(0, 100)})`);
		}
	}
	return tally(messages);
}

/** Waits until the workers' logs name the worker of each execution (logged as it starts); their names in order. */
async function workersOf(context: RunContext, rows: ExecutionRow[]): Promise<string[]> {
	const deadline = Date.now() + 10_000;
	for (;;) {
		const ranOn = context.cluster.workerOfExecutions();
		if (rows.every((row) => ranOn.has(row.id)) || Date.now() > deadline) return rows.map((row) => ranOn.get(row.id) ?? 'unknown');
		await sleep(200);
	}
}

/** POSTs the events to a webhook, `atOnce` in flight; the answers' statuses. */
async function postEvents(url: string, events: ErpEvent[], atOnce: number): Promise<number[]> {
	let next = 0;
	const statuses: number[] = [];
	await Promise.all(
		Array.from({ length: Math.min(atOnce, events.length) }, async () => {
			while (next < events.length) {
				const event = events[next++];
				statuses.push(await request(url, { method: 'POST', body: event, timeoutMs: 120_000 }).then((answer) => answer.status, () => 0));
			}
		}),
	);
	return statuses;
}

/** The worker that ran each event's execution (told apart by the event's order id in the execution's data). */
async function workerPerEvent(context: RunContext, rows: ExecutionRow[], events: ErpEvent[]): Promise<Array<string | undefined>> {
	const names = await workersOf(context, rows);
	const workerOf = new Map(rows.map((row, index) => [row.id, names[index]]));
	const eventOf = new Map(events.map((event, index) => [event.orderId, index]));
	const prefix = events[0].orderId.replace(/-\d+$/, '').replace(/[^A-Za-z0-9]/g, '');
	const found = rows.length
		? await context.psql.query(
				`select "executionId", substring(data from '${prefix}-[0-9]+') from execution_data where "executionId" in (${rows.map((row) => Number(row.id)).join(',')})`,
			)
		: [];
	const workers: Array<string | undefined> = events.map(() => undefined);
	for (const [executionId, orderId] of found) {
		const index = eventOf.get(orderId);
		if (index !== undefined) workers[index] = workerOf.get(executionId);
	}
	return workers;
}

/**
 * Why a redelivered event was or was not sent again: its store state when the pass began (claim
 * lost; claim held but accepted mark lost; both held), whether the redelivery ran on the worker that
 * made the earlier send, and whether it was sent again. Counts per combination.
 */
export function redeliveryCauses(
	format: KeyValueFormat,
	keys: string[],
	heldAtStart: Set<string>,
	earlierWorkers: Array<string | undefined>,
	workers: Array<string | undefined>,
	sends: number[],
	sentBefore: number[],
): Record<string, number> {
	const causes: string[] = [];
	keys.forEach((key, index) => {
		if (sentBefore[index] === 0) return;
		const values = format.valuesOf(key);
		const held = (value: string) => heldAtStart.has(entryHash(value));
		const notAccepted = tellsAccepted(values) && !isAccepted(values, held);
		const state = !held(values.claimed) ? 'claim lost' : notAccepted ? 'accepted mark lost' : 'held';
		const where = !workers[index] || !earlierWorkers[index] ? 'worker unknown' : workers[index] === earlierWorkers[index] ? 'same worker' : 'other worker';
		causes.push(`${state}; ${where}; ${sends[index] > 0 ? 'sent again' : 'not sent'}`);
	});
	return tally(causes);
}

/** One delivery of every event (K at a time) and everything it left behind. */
async function deliveryPass(
	context: RunContext,
	workflowId: string,
	url: string,
	events: ErpEvent[],
	atOnce: number,
	earlier?: { sends: number[]; workers: Array<string | undefined> },
): Promise<{ pass: PassResult; sends: number[]; workers: Array<string | undefined> }> {
	const { cluster, sandbox, psql } = context;
	const keys = events.map(context.example.keyOf);
	const sentBefore = earlier?.sends ?? events.map(() => 0);
	const heldAtStart = (await readStoreRows(psql, workflowId)).hashes;
	const afterId = await cluster.lastExecutionId();
	const writesAfter = await lastWriteId(psql);
	const logFrom = sandbox.requestLog().length;
	const pgLogFrom = logSize(context.pgLog);
	const loadBefore = load1();
	const started = Date.now();
	const statuses = await postEvents(url, events, atOnce);
	const posted = Date.now();
	const accepted = statuses.filter((status) => status === 200).length;
	const rows = await cluster.waitForExecutions(workflowId, accepted, { afterId, timeoutMs: 120_000 + events.length * 2000 });
	const done = Date.now();
	const entries = sandbox.requestLog().slice(logFrom);
	const sends = sendsPerEvent(entries, events, context.example.titleOf);
	const workers = await workerPerEvent(context, rows, events);
	const store = await readStore(context, workflowId, keys, writesAfter);
	const format = KEY_VALUE_FORMATS.find((known) => known.name === store.format) ?? context.format!;
	const pass: PassResult = {
		posted: events.length,
		postAnswers: tally(statuses.map(String)),
		postSeconds: seconds(posted - started),
		doneSeconds: seconds(done - started),
		executions: tally(rows.map((row) => row.status)),
		failures: await failureMessages(context, rows),
		perWorker: tally(await workersOf(context, rows)),
		eventsSent: sends.filter((count) => count > 0).length,
		eventsSentTwice: sends.filter((count) => count > 1).length,
		eventsNeverSentSoFar: sends.filter((count, index) => count + sentBefore[index] === 0).length,
		eventsSentSoFar: sends.filter((count, index) => count + sentBefore[index] > 0).length,
		sendCalls: tally(entries.filter((entry) => entry.endpoint === SEND).map((entry) => String(entry.status))),
		listLookups: entries.filter((entry) => entry.endpoint === SEND_LIST).length,
		refreshes: entries.filter((entry) => entry.endpoint === REFRESH).length,
		postgresErrors: postgresErrorsSince(context, pgLogFrom),
		store,
		...(earlier ? { redeliveryCauses: redeliveryCauses(format, keys, new Set(heldAtStart), earlier.workers, workers, sends, sentBefore) } : {}),
		loadBefore,
		loadAfter: load1(),
	};
	return { pass, sends, workers };
}

/** The keys' row of a workflow, filled with `entries` synthetic entries (hashed as n8n hashes them), as a long-used node's would be. */
async function prefillKeys(context: RunContext, workflowId: string, entries: number): Promise<void> {
	await context.psql.query(
		`insert into processed_data ("workflowId", context, value, "createdAt", "updatedAt") ` +
			`select '${workflowId}', 'n:${context.example.pushNodeId}', json_build_object('mode', 'entries', 'data', ` +
			`json_agg(encode(decode(md5('synthetic key ' || i), 'hex'), 'base64') order by i))::text, now(), now() from generate_series(1, ${entries}) i`,
	);
}

/** burst-K: N distinct events K at a time, then all of them again. */
async function burstCase(context: RunContext, name: string, atOnce: number, workflowId: string, events: ErpEvent[], prefill: number): Promise<CaseResult> {
	const url = `${context.cluster.url}/webhook/${name}`;
	if (prefill > 0) {
		await prefillKeys(context, workflowId, prefill);
		context.log(`${name}: the keys' row holds ${prefill} entries before the first pass`);
	}
	const first = await deliveryPass(context, workflowId, url, events, atOnce);
	context.log(`${name} first pass: ${summary(first.pass)}`);
	const again = await deliveryPass(context, workflowId, url, events, atOnce, first);
	context.log(`${name} redelivery: ${summary(again.pass)}`);
	return { name, kind: 'burst', atOnce, events: events.length, first: first.pass, again: again.pass };
}

const summary = (pass: PassResult) =>
	`${pass.doneSeconds} s, executions ${JSON.stringify(pass.executions)}, sent ${pass.eventsSent} (twice ${pass.eventsSentTwice}), ` +
	`never sent so far ${pass.eventsNeverSentSoFar}, duplicate-key errors ${pass.postgresErrors.duplicateKey}, ` +
	`store: ${pass.store.keysClaimed} keys / ${pass.store.keysAccepted} accepted, ${pass.store.writes.claimsDropped} claims dropped by a write`;

/** pair-Gms: rounds of the same event posted twice, G ms apart. */
async function pairCase(
	context: RunContext,
	name: string,
	gapMs: number,
	workflowId: string,
	events: ErpEvent[],
): Promise<CaseResult> {
	const { cluster, sandbox, psql } = context;
	const url = `${cluster.url}/webhook/${name}`;
	const writesAfter = await lastWriteId(psql);
	const pgLogFrom = logSize(context.pgLog);
	const loadBefore = load1();
	const started = Date.now();
	const rounds: PairRound[] = [];
	const allRows: ExecutionRow[] = [];
	for (const event of events) {
		const afterId = await cluster.lastExecutionId();
		const logFrom = sandbox.requestLog().length;
		const firstAt = performance.now();
		const first = request(url, { method: 'POST', body: event }).then((answer) => answer.status, () => 0);
		await sleep(gapMs);
		const secondAt = performance.now();
		const second = request(url, { method: 'POST', body: event }).then((answer) => answer.status, () => 0);
		const statuses = await Promise.all([first, second]);
		const rows = await cluster.waitForExecutions(workflowId, statuses.filter((status) => status === 200).length, { afterId, everyMs: 250 });
		allRows.push(...rows);
		const [sends] = sendsPerEvent(sandbox.requestLog().slice(logFrom), [event], context.example.titleOf);
		rounds.push({ gapMs: Math.round((secondAt - firstAt) * 10) / 10, workers: await workersOf(context, rows), statuses: rows.map((row) => row.status), sends });
	}
	const keys = events.map(context.example.keyOf);
	const result: CaseResult = {
		name,
		kind: 'pair',
		gapMs,
		events: events.length,
		rounds,
		seconds: seconds(Date.now() - started),
		failures: await failureMessages(context, allRows),
		postgresErrors: postgresErrorsSince(context, pgLogFrom),
		store: await readStore(context, workflowId, keys, writesAfter),
		loadBefore,
		loadAfter: load1(),
	};
	const twoWorkers = rounds.filter((round) => new Set(round.workers).size === 2).length;
	context.log(
		`${name}: ${rounds.length} rounds, on two workers ${twoWorkers}, notified twice ${rounds.filter((round) => round.sends > 1).length}, ` +
			`not notified ${rounds.filter((round) => round.sends === 0).length}, failures ${JSON.stringify(result.failures)}`,
	);
	return result;
}

/** One fresh cluster with `workers` workers and every case. */
async function measureRun(
	options: QueueKeysOptions,
	workers: number,
	runIndex: number,
	measured: { tarball: string; checkout: QueueKeysRun['checkout'] },
	log: (line: string) => void,
): Promise<QueueKeysRun> {
	const { tarball, checkout } = measured;
	const example = erpExample();
	const specs = options.cases.map((name) => ({ name, spec: caseSpec(name) }));
	const usersNeeded = specs.reduce((sum, { spec }) => sum + (spec.kind === 'burst' ? options.events : options.rounds), 0);
	const otherN8n = options.wait ? await waitForQuietMachine(log) : otherN8nProcesses();
	const started = Date.now();
	const loadAtStart = load1();
	const sandbox = await startSandbox({
		port: 0,
		seedUsers: usersNeeded,
		tokenLifetimeSeconds: TOKEN_LIFE_SECONDS,
		refreshRevokesPreviousTokens: true,
		deliveryMs: 500,
	});
	let cluster: QueueCluster | undefined;
	try {
		const { primary } = sandbox.orgs;
		let nextUser = 0;
		const plan = specs.map(({ name, spec }, index) => {
			const count = spec.kind === 'burst' ? options.events : options.rounds;
			const prefix = `R${runIndex}${name.replace(/[^a-z0-9]/gi, '')}`;
			const events = Array.from({ length: count }, (_, eventIndex) => ({
				orderId: `${prefix}-${eventIndex + 1}`,
				status: 'shipped',
				userId: primary.userIds[nextUser++],
			}));
			return { name, spec, workflowId: `queueKeys${index + 1}`, events };
		});
		const runtime = await ensureRuntime({ log });
		cluster = await startQueueCluster({
			tarball,
			runtime,
			workers,
			concurrency: options.concurrency,
			credentials: [
				credentialEntry({ baseUrl: sandbox.baseUrl, clientId: primary.clientId, clientSecret: primary.clientSecret, refreshToken: primary.refreshToken }),
			],
			workflows: plan.map(({ name, workflowId }) => example.copy(workflowId, name, options.keysToKeep)),
			publish: plan.map(({ workflowId }) => workflowId),
			log,
		});
		const clusterStartSeconds = seconds(Date.now() - started);
		log(`cluster up: main + ${workers} workers (${clusterStartSeconds} s)`);
		const psql = new Psql(cluster.pgPort);
		await installWriteLog(psql);
		const [[pkName]] = await psql.query(`select conname from pg_constraint where conrelid = 'processed_data'::regclass and contype = 'p'`);
		const context: RunContext = {
			cluster,
			sandbox,
			psql,
			example,
			format: options.format === 'auto' ? undefined : loadFormat(options.format),
			pgLog: await findPostgresLog(psql),
			pkName,
			log,
		};
		const cases: CaseResult[] = [];
		for (const { name, spec, workflowId, events } of plan) {
			cases.push(
				spec.kind === 'burst'
					? await burstCase(context, name, spec.atOnce, workflowId, events, options.prefill)
					: await pairCase(context, name, spec.gapMs, workflowId, events),
			);
		}
		const rowCosts = [];
		for (const entries of options.rowSizes) {
			const cost = await timeRowCost(psql, entries);
			log(`row of ${entries} entries (${cost.textBytes} bytes): UPDATE ${cost.updateMs} ms (server ${cost.updateServerMs} ms), read ${cost.readMs} ms`);
			rowCosts.push(cost);
		}
		return {
			label: options.label,
			command: options.command,
			date: new Date(started).toISOString(),
			workers,
			concurrency: options.concurrency,
			runIndex,
			checkout,
			packageVersion: JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version,
			tarball: path.basename(tarball),
			node: process.version,
			cpus: os.cpus().length,
			otherN8nAtStart: otherN8n,
			loadAtStart,
			loadAtEnd: load1(),
			clusterStartSeconds,
			totalSeconds: seconds(Date.now() - started),
			tokenLifeSeconds: TOKEN_LIFE_SECONDS,
			retry: example.retry,
			rss: cluster.rssMb(),
			cases,
			rowCosts,
		};
	} finally {
		const stopping = Date.now();
		await cluster?.stop();
		await sandbox.stop();
		if (cluster) log(`cluster stopped (${seconds(Date.now() - stopping)} s)`);
	}
}

export async function main(argv: string[]): Promise<void> {
	const options = parseQueueKeysArgs(argv);
	const started = Date.now();
	const log = (line: string) => console.log(`[queue-keys ${Math.round((Date.now() - started) / 1000)} s] ${line}`);
	if (options.report) {
		const runs = options.report.flatMap((file) =>
			fs
				.readFileSync(file, 'utf8')
				.split('\n')
				.filter(Boolean)
				.map((line) => JSON.parse(line) as QueueKeysRun),
		);
		const section = renderQueueKeysSection(runs, options.report.map((file) => path.relative(ROOT, file)));
		if (options.writeResults) {
			const file = path.join(__dirname, 'RESULTS.md');
			writeQueueKeysSection(file, section);
			console.log(`written: the "Idempotency Keys in queue mode" section of ${file} (${runs.length} runs)`);
		} else console.log(section);
		return;
	}
	if (options.build) {
		log('npm run build');
		const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
		if (build.status !== 0) throw new Error('npm run build failed');
	}
	// What is measured: the checkout as it is now (a commit made while the runs go on is not in them).
	const checkout = checkoutMeasured();
	const tarball = packPackage();
	log(`packed ${path.basename(tarball)}; runs saved to ${options.save}`);
	try {
		let runIndex = 0;
		for (const workers of options.workers) {
			for (let repeat = 0; repeat < options.runs; repeat++) {
				runIndex++;
				log(`run ${runIndex}: main + ${workers} workers, cases ${options.cases.join(', ')}`);
				const result = await measureRun(options, workers, runIndex, { tarball, checkout }, log);
				fs.mkdirSync(path.dirname(options.save), { recursive: true });
				fs.appendFileSync(options.save, `${JSON.stringify(result)}\n`);
				log(`run ${runIndex} saved (${result.totalSeconds} s)`);
			}
		}
	} finally {
		fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
	}
	console.log(`\nRender: npm run bench -- queue-keys --report ${options.save} [--write-results]`);
}

if (require.main === module) {
	main(process.argv.slice(2)).catch((error) => {
		console.error(error);
		process.exitCode = 1;
	});
}
