/**
 * The queue-mode suite (row 17): executions per second of the ERP webhook example
 * (examples/erp-event-to-push.json: Companion Push with its Idempotency Key and Retry On Fail)
 * against the same workflow built with n8n's HTTP Request node (bench/n8nWorkflows.cts), and the
 * example without its Idempotency Key (what the key costs), in one real queue-mode cluster
 * (devkit/n8n/queueMode.cts: Postgres, Redis, main and 2 workers, the package installed as a community
 * package), at the same load: N events posted K at a time to each workflow's webhook, passes
 * alternating (A B C C B A ...). The sandbox serves https through a link with a 40 ms round trip
 * (bench/linkDelay.cts); every n8n process trusts its authority through NODE_EXTRA_CA_CERTS. A pass
 * lasts from its first POST to the last execution's stop (Postgres); the sandbox is reset before
 * each (its sends and log; tokens stay valid).
 */
import '../devkit/env.cts';

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { Sandbox } from '../sandbox/index.cts';
import { SEND } from '../devkit/endpoints.cts';
import {
	erpWebhookHeaders,
	exampleTriggerCredentialEntries,
	newExampleTriggerSecrets,
} from '../devkit/exampleTriggers.cts';
import {
	credentialEntry,
	exampleWorkflows,
	type QueueCluster,
	request,
	startQueueCluster,
} from '../devkit/n8n/index.cts';
import { startHttpsSite } from './linkDelay.cts';
import { med, ms, processCpuMs, ratio, spread } from './measure.cts';
import { erpWithHttpRequest, HTTP_REQUEST_VERSION } from './n8nWorkflows.cts';
import { constant, verdictOf } from './report.cts';
import type { Figure, SuiteReport } from './report.cts';

/** The ERP example's webhook asks for a secret header: this run's own. */
const EXAMPLE_SECRETS = newExampleTriggerSecrets();

export const FULL_QUEUE_SCALE = {
	/** Events per pass, and how many are posted at once. */
	events: 300,
	atOnce: 20,
	workers: 2,
	/** Jobs each worker runs at once (`n8n worker --concurrency`). */
	concurrency: 10,
	/** Passes of each workflow (alternating). */
	reps: 2,
	/** Round trip of the link to the https sandbox. */
	latencyMs: 40,
	/** Events of each workflow's warm-up pass (not a figure). */
	warmUpEvents: 20,
};
export type QueueScale = typeof FULL_QUEUE_SCALE;

const QUEUE_GOAL = 0.9;

/** The ERP example as shipped, the same without its Idempotency Key, and with the HTTP Request node. */
const WORKFLOWS = {
	node: { id: 'benchErpNode', path: 'bench-erp-node' },
	nodeWithoutKey: { id: 'benchErpNodeWithoutKey', path: 'bench-erp-node-without-key' },
	httpRequest: { id: 'benchErpHttpRequest', path: 'bench-erp-http-request' },
};
export type QueueSide = keyof typeof WORKFLOWS;
const SIDES = Object.keys(WORKFLOWS) as QueueSide[];
const ERP_EXAMPLE = 'cpExampleErpEvent';

type ErpEvent = { orderId: string; status: string; userId: string };
/** The title both workflows give an event's send (the example's title template). */
const titleOf = (event: ErpEvent) => `Order ${event.orderId}: ${event.status}`;

/** A timestamp as psql prints it ("2026-11-23 21:30:01.123+00"), in ms. */
export const parsePgTime = (text: string) =>
	Date.parse(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));

/** Postgres's server processes: the postmaster and its children (n8n's pooled sessions stay for the pass). */
const postgresProcesses = (postmasterPid: number) => [
	postmasterPid,
	...execFileSync('pgrep', ['-P', String(postmasterPid)], { encoding: 'utf8' })
		.split('\n')
		.filter(Boolean)
		.map(Number),
];

export type QueuePass = Awaited<ReturnType<typeof pass>>;

/** Where a pass runs: the cluster, the sandbox behind it, how many events go at once, Postgres's postmaster. */
type PassSetting = {
	cluster: QueueCluster;
	sandbox: Sandbox;
	atOnce: number;
	postmasterPid: number;
};

async function pass(
	{ cluster, sandbox, atOnce, postmasterPid }: PassSetting,
	side: QueueSide,
	rep: number,
	events: ErpEvent[],
) {
	const { id, path: webhookPath } = WORKFLOWS[side];
	await sandbox.reset();
	const afterId = await cluster.lastExecutionId();
	const cpu = (pids: number[]) => pids.reduce((total, pid) => total + (processCpuMs(pid) ?? 0), 0);
	const clusterPids = [
		cluster.main.process.pid as number,
		...cluster.workers.map((worker) => worker.pid),
	];
	const postgresPids = postgresProcesses(postmasterPid);
	const [clusterBefore, postgresBefore] = [cpu(clusterPids), cpu(postgresPids)];
	const started = Date.now();
	const postAnswers: Record<string, number> = {};
	let next = 0;
	const poster = async () => {
		while (next < events.length) {
			const status = await request(`${cluster.url}/webhook/${webhookPath}`, {
				method: 'POST',
				headers: erpWebhookHeaders(EXAMPLE_SECRETS),
				body: events[next++],
				timeoutMs: 120_000,
			}).then(
				(answer) => answer.status,
				() => 0,
			);
			postAnswers[status] = (postAnswers[status] ?? 0) + 1;
		}
	};
	await Promise.all(Array.from({ length: Math.min(atOnce, events.length) }, poster));
	const rows = await cluster.waitForExecutions(id, postAnswers['200'] ?? 0, {
		afterId,
		timeoutMs: 120_000 + events.length * 2000,
	});
	const clusterCpuMs = cpu(clusterPids) - clusterBefore;
	const postgresCpuMs = cpu(postgresPids) - postgresBefore;
	const lastStop = Math.max(
		...rows
			.map((row) => (row.stoppedAt ? parsePgTime(row.stoppedAt) : NaN))
			.filter(Number.isFinite),
	);
	const ms = (Number.isFinite(lastStop) ? lastStop : Date.now()) - started;
	const sendsOf = new Map(events.map((event) => [titleOf(event), 0]));
	for (const entry of sandbox.requestLog()) {
		const title = String((entry.body as { title?: string } | undefined)?.title);
		if (entry.endpoint === SEND && entry.notificationId && sendsOf.has(title))
			sendsOf.set(title, sendsOf.get(title)! + 1);
	}
	return {
		side,
		rep,
		events: events.length,
		/** Answers of the webhook POSTs, by status; executions by status. */
		postAnswers,
		executions: rows.reduce<Record<string, number>>(
			(counts, row) => ({ ...counts, [row.status]: (counts[row.status] ?? 0) + 1 }),
			{},
		),
		/** From the first POST to the last execution's stop (ms), and executions per second over it. */
		ms,
		executionsPerSecond: (rows.length * 1000) / ms,
		/** Events the sandbox registered a send for, and events sent more than once. */
		eventsSent: [...sendsOf.values()].filter((count) => count > 0).length,
		eventsSentTwice: [...sendsOf.values()].filter((count) => count > 1).length,
		/** CPU time of main and the workers over the pass (ms), and of Postgres's server processes. */
		clusterCpuMs,
		postgresCpuMs,
	};
}

export type QueueResults = Awaited<ReturnType<typeof runQueueSuite>>;

export async function runQueueSuite(
	scale: QueueScale,
	tarball: string,
	log: (line: string) => void = () => {},
) {
	const started = Date.now();
	const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-bench-queue-'));
	const { sandbox, link, caFile, token, stop } = await startHttpsSite(
		temp,
		{ seedUsers: scale.events },
		scale.latencyMs,
	);
	let cluster: QueueCluster | undefined;
	try {
		const { primary } = sandbox.orgs;
		const example = exampleWorkflows().find((entry) => entry.workflow.id === ERP_EXAMPLE)?.workflow;
		if (!example)
			throw new Error(`examples/ has no workflow with id ${ERP_EXAMPLE} (the ERP webhook example)`);
		/** A copy of the example with its own id and webhook path; `withoutKey`: its Idempotency Key left out. */
		const copyOf = (side: QueueSide, withoutKey = false) => {
			const copy = JSON.parse(JSON.stringify(example));
			copy.id = WORKFLOWS[side].id;
			for (const node of copy.nodes as Array<{
				type: string;
				parameters: { path?: string; options?: { idempotencyKey?: string } };
			}>) {
				if (node.type === 'n8n-nodes-base.webhook') node.parameters.path = WORKFLOWS[side].path;
				if (withoutKey) delete node.parameters.options?.idempotencyKey;
			}
			return copy;
		};
		const clusterStarted = Date.now();
		cluster = await startQueueCluster({
			tarball,
			workers: scale.workers,
			concurrency: scale.concurrency,
			credentials: [
				credentialEntry({ ...primary, baseUrl: link.baseUrl }),
				...exampleTriggerCredentialEntries(EXAMPLE_SECRETS),
			],
			workflows: [
				copyOf('node'),
				copyOf('nodeWithoutKey', true),
				erpWithHttpRequest(
					example,
					WORKFLOWS.httpRequest.id,
					WORKFLOWS.httpRequest.path,
					`${link.baseUrl}/push-notification/send`,
					token,
				),
			],
			publish: SIDES.map((side) => WORKFLOWS[side].id),
			extraEnv: { NODE_EXTRA_CA_CERTS: caFile },
			log,
		});
		const clusterStartMs = Date.now() - clusterStarted;
		log(`queue mode: main + ${scale.workers} workers up (${Math.round(clusterStartMs / 1000)} s)`);
		const [[dataDirectory]] = await cluster.psql('show data_directory');
		const postmasterPid = Number(
			fs.readFileSync(path.join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0],
		);
		const eventsOf = (label: string, count: number): ErpEvent[] =>
			Array.from({ length: count }, (_, index) => ({
				orderId: `${label}-${index + 1}`,
				status: 'shipped',
				userId: primary.userIds[index % primary.userIds.length],
			}));
		const setting = { cluster, sandbox, atOnce: scale.atOnce, postmasterPid };
		for (const side of SIDES)
			await pass(setting, side, -1, eventsOf(`W${side}`, scale.warmUpEvents));
		const passes: QueuePass[] = [];
		for (let rep = 0; rep < scale.reps; rep++) {
			for (const side of rep % 2 === 0 ? SIDES : [...SIDES].reverse()) {
				const result = await pass(setting, side, rep, eventsOf(`Q${rep}${side}`, scale.events));
				log(
					`queue ${side} pass ${rep + 1}: ${result.executionsPerSecond.toFixed(1)} executions/s (${(result.ms / 1000).toFixed(1)} s), ${JSON.stringify(result.executions)}`,
				);
				passes.push(result);
			}
		}
		/** rssMb: main's and the workers' resident memory at the end (MB). */
		return {
			scale,
			passes,
			rssMb: cluster.rssMb(),
			clusterStartMs,
			totalMs: Date.now() - started,
			cores: os.cpus().length,
		};
	} finally {
		await cluster?.stop();
		await stop();
		fs.rmSync(temp, { recursive: true, force: true });
	}
}

// ---- the figures ---------------------------------------------------------------------------------------

export function queueFiguresOf(results: QueueResults): SuiteReport {
	const { scale, passes } = results;
	const [node, withoutKey, http] = SIDES.map((side) => passes.filter((pass) => pass.side === side));
	if (!node.length || !withoutKey.length || !http.length)
		return { figures: [], misses: [], setup: [] };
	const rate = (list: QueuePass[]) => med(list, (pass) => pass.executionsPerSecond);
	const rates = (list: QueuePass[]) =>
		spread(
			list.map((pass) => pass.executionsPerSecond),
			(value) => value.toFixed(1),
		);
	const [nodeRate, keylessRate, httpRate] = [rate(node), rate(withoutKey), rate(http)];
	// Every event executed and sent exactly once: the Idempotency Key's promise, at this load.
	const everyEventOnce = node.every(
		(pass) =>
			pass.executions.success === pass.events &&
			pass.eventsSent === pass.events &&
			pass.eventsSentTwice === 0,
	);
	const ok = nodeRate / httpRate >= QUEUE_GOAL && everyEventOnce;
	const cpu = (list: QueuePass[]) => ms(med(list, (pass) => pass.clusterCpuMs / pass.events));
	const postgresCpu = (list: QueuePass[]) =>
		ms(med(list, (pass) => pass.postgresCpuMs / pass.events));
	/** Cores n8n and Postgres kept busy over a pass, on average. */
	const busy = (list: QueuePass[]) =>
		med(list, (pass) => (pass.clusterCpuMs + pass.postgresCpuMs) / pass.ms).toFixed(2);
	const sides = [
		['the ERP example', node],
		['without its Idempotency Key', withoutKey],
		['HTTP Request', http],
	] as const;
	const each = (describe: (list: QueuePass[]) => string) =>
		sides.map(([label, list]) => `${label} ${describe(list)}`).join(', ');
	const name = `Queue mode (main + ${scale.workers} workers, --concurrency=${scale.concurrency}, Postgres, Redis), ${scale.events} webhook events ${scale.atOnce} at a time, https at ${scale.latencyMs} ms round trip`;
	const figures: Figure[] = [
		{
			row: '17',
			figure: `${name}: executions/s, the ERP example (Companion Push) / the same workflow with the HTTP Request node`,
			measured: `${ratio(nodeRate / httpRate)}: ${rates(node)} vs ${rates(http)} executions/s${everyEventOnce ? '' : '; not every event executed and sent once (see context)'}`,
			goal: `>= ${QUEUE_GOAL}x, every event sent once`,
			verdict: verdictOf(ok),
			how: `One cluster (devkit/n8n/queueMode.cts), the workflows published: the ERP example as shipped (Webhook -> Companion Push Send with its Idempotency Key and Retry On Fail), the same without its Idempotency Key, and the same built with the HTTP Request node v${HTTP_REQUEST_VERSION} (same webhook, same message, a bearer token header, the same Retry On Fail, no Idempotency Key); after a warm-up pass of ${scale.warmUpEvents} events each, ${scale.reps} passes of each with new events, in turn (order reversed every other round); a pass lasts from its first POST to its last execution's stoppedAt in Postgres; medians (min–max) of the passes' rates. Events sent: counted in the sandbox log by their title.`,
		},
		{
			row: '17',
			figure: `${name}: context`,
			measured:
				`the ERP example without its Idempotency Key: ${rates(withoutKey)} executions/s (${ratio(keylessRate / httpRate)} of the HTTP Request workflow); ` +
				`executions ${each((list) => list.map((pass) => JSON.stringify(pass.executions)).join(' '))}; ` +
				`events sent ${each((list) => `${constant(list.map((pass) => pass.eventsSent))} (twice ${constant(list.map((pass) => pass.eventsSentTwice))})`)}; ` +
				`CPU per execution, main + workers: ${each(cpu)}; Postgres: ${each(postgresCpu)}; ` +
				`cores n8n and Postgres kept busy (of ${results.cores}): ${each(busy)}; RSS at the end ${Object.entries(
					results.rssMb,
				)
					.map(([process, mb]) => `${process} ${mb} MB`)
					.join(', ')}`,
			goal: '—',
			verdict: '—',
			how: "CPU: user + system time (/proc) over each pass, per execution, of main and the workers (task runners not counted: these workflows have no Code node) and of Postgres's server processes.",
		},
	];
	// Below three quarters of the cores busy, the example's executions waited rather than worked.
	const cpuBound = Number(busy(node)) >= 0.75 * results.cores;
	const cause = cpuBound
		? `n8n and Postgres kept ${busy(node)} of the machine's ${results.cores} cores busy during the ERP example's passes (the sandbox and the link use the rest), so the rate follows the CPU per execution`
		: `n8n and Postgres kept only ${busy(node)} of the machine's ${results.cores} cores busy during the ERP example's passes (${busy(http)} for the HTTP Request workflow): its executions waited rather than worked`;
	const misses = ok
		? []
		: [
				`Row 17 (${ratio(nodeRate / httpRate)}${everyEventOnce ? '' : ', not every event sent once'}): ${cause}. CPU per execution, n8n (main + workers): ${cpu(node)} for the ERP example, ${cpu(withoutKey)} without its Idempotency Key and ${cpu(http)} for the HTTP Request workflow; Postgres ${postgresCpu(node)}, ${postgresCpu(withoutKey)} and ${postgresCpu(http)}. Without its key the example runs ${ratio(keylessRate / httpRate)} of the HTTP Request workflow: the difference is the key's path (per execution a claim and a confirmation in n8n's processed-data store, in Postgres, each in a turn under the workflow's one lock, which a worker's executions waiting at once share, their writes merged, and which the workers take in turn); the rest is the node's work per execution (the credential read from the database and decrypted, parameter and answer checks).`,
			];
	const setup = [
		`- Queue mode (row 17): devkit/n8n/queueMode.cts, main + ${scale.workers} workers (--concurrency=${scale.concurrency}), Postgres 15, Redis, this checkout installed as a community package on each; the https sandbox behind a ${scale.latencyMs} ms link. Cluster start ${(results.clusterStartMs / 1000).toFixed(0)} s; ${(results.totalMs / 1000).toFixed(0)} s in all.`,
	];
	return { figures, misses, setup };
}
