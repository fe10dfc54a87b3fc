/**
 * The queue-mode suite (row 17): executions per second of the ERP webhook example
 * (examples/erp-event-to-push.json: Companion Push with its Idempotency Key and Retry On Fail)
 * against the same workflow built with n8n's HTTP Request node (bench/n8nWorkflows.ts), and the
 * example without its Idempotency Key (what the key costs), in one real
 * queue-mode cluster (scripts/queueMode.ts: Postgres, Redis, main and 2 workers, the package
 * installed as a community package), at the same load: N events posted K at a time to each
 * workflow's webhook, passes alternating (A B C C B A ...). The sandbox serves https through a link
 * with a 40 ms round trip (bench/linkDelay.ts); every n8n process trusts its authority through
 * NODE_EXTRA_CA_CERTS. A pass lasts from its first POST to the last execution's stop (Postgres);
 * the sandbox is reset before each (its sends and log; tokens stay valid).
 */
import '../devkit/env';

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSandbox } from '../sandbox';
import type { Sandbox } from '../sandbox';
import { SEND } from '../devkit/endpoints';
import { credentialEntry, exampleWorkflows, type QueueCluster, request, startQueueCluster } from '../devkit/n8n';
import { processCpuMs } from './cpuTimeline';
import { startDelayedLink } from './linkDelay';
import { erpWithHttpRequest } from './n8nWorkflows';
import { rawClient } from './raw';

export interface QueueScale {
	/** Events per pass, and how many are posted at once. */
	events: number;
	atOnce: number;
	workers: number;
	/** Jobs each worker runs at once (`n8n worker --concurrency`). */
	concurrency: number;
	/** Passes of each workflow (alternating). */
	reps: number;
	/** Round trip of the link to the https sandbox. */
	latencyMs: number;
	/** Events of each workflow's warm-up pass (not a figure). */
	warmUpEvents: number;
}

export const FULL_QUEUE_SCALE: QueueScale = { events: 300, atOnce: 20, workers: 2, concurrency: 10, reps: 2, latencyMs: 40, warmUpEvents: 20 };

/** The ERP example as shipped, the same without its Idempotency Key (what the key costs), and with the HTTP Request node. */
export type QueueSide = 'node' | 'nodeWithoutKey' | 'httpRequest';
const SIDES: QueueSide[] = ['node', 'nodeWithoutKey', 'httpRequest'];

export interface QueuePass {
	side: QueueSide;
	rep: number;
	events: number;
	/** Answers of the webhook POSTs, by status. */
	postAnswers: Record<string, number>;
	/** From the first POST to the last execution's stop (ms), and executions per second over it. */
	ms: number;
	executionsPerSecond: number;
	executions: Record<string, number>;
	/** Events the sandbox registered a send for, and events sent more than once. */
	eventsSent: number;
	eventsSentTwice: number;
	/** CPU time of main and the workers over the pass (ms), and of Postgres (its server processes). */
	clusterCpuMs: number;
	postgresCpuMs: number;
}

export interface QueueResults {
	scale: QueueScale;
	passes: QueuePass[];
	/** Main's and the workers' resident memory at the end (MB). */
	rssMb: Record<string, number>;
	clusterStartMs: number;
	totalMs: number;
	/** CPU cores of the machine. */
	cores: number;
}

const WORKFLOWS: Record<QueueSide, { id: string; path: string }> = {
	node: { id: 'benchErpNode', path: 'bench-erp-node' },
	nodeWithoutKey: { id: 'benchErpNodeWithoutKey', path: 'bench-erp-node-without-key' },
	httpRequest: { id: 'benchErpHttpRequest', path: 'bench-erp-http-request' },
};
const ERP_EXAMPLE = 'cpExampleErpEvent';

type ErpEvent = { orderId: string; status: string; userId: string };
/** The title both workflows give an event's send (the example's title template). */
const titleOf = (event: ErpEvent) => `Order ${event.orderId}: ${event.status}`;

/** A timestamp as psql prints it ("2026-11-23 21:30:01.123+00"), in ms. */
export function parsePgTime(text: string): number {
	return Date.parse(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
}

async function postEvents(url: string, events: ErpEvent[], atOnce: number): Promise<Record<string, number>> {
	let next = 0;
	const answers: Record<string, number> = {};
	await Promise.all(
		Array.from({ length: Math.min(atOnce, events.length) }, async () => {
			while (next < events.length) {
				const event = events[next++];
				const status = await request(url, { method: 'POST', body: event, timeoutMs: 120_000 }).then((answer) => answer.status, () => 0);
				answers[status] = (answers[status] ?? 0) + 1;
			}
		}),
	);
	return answers;
}

/** Postgres's server processes: the postmaster and its children (n8n's pooled sessions stay for the pass). */
function postgresProcesses(postmasterPid: number): number[] {
	const pids = [postmasterPid];
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
			if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmasterPid) pids.push(Number(entry));
		} catch {
			// gone meanwhile
		}
	}
	return pids;
}

async function pass(cluster: QueueCluster, sandbox: Sandbox, side: QueueSide, rep: number, events: ErpEvent[], atOnce: number, postmasterPid: number): Promise<QueuePass> {
	const { id, path: webhookPath } = WORKFLOWS[side];
	await sandbox.reset();
	const afterId = await cluster.lastExecutionId();
	const pids = [cluster.main.process.pid as number, ...cluster.workers.map((worker) => worker.pid)];
	const sum = (list: number[]) => list.reduce((total, pid) => total + (processCpuMs(pid) ?? 0), 0);
	const cpu = () => sum(pids);
	const postgresPids = postgresProcesses(postmasterPid);
	const postgresBefore = sum(postgresPids);
	const cpuBefore = cpu();
	const started = Date.now();
	const postAnswers = await postEvents(`${cluster.url}/webhook/${webhookPath}`, events, atOnce);
	const rows = await cluster.waitForExecutions(id, postAnswers['200'] ?? 0, { afterId, timeoutMs: 120_000 + events.length * 2000 });
	const clusterCpuMs = cpu() - cpuBefore;
	const postgresCpuMs = sum(postgresPids) - postgresBefore;
	const lastStop = Math.max(...rows.map((row) => (row.stoppedAt ? parsePgTime(row.stoppedAt) : NaN)).filter(Number.isFinite));
	const ms = (Number.isFinite(lastStop) ? lastStop : Date.now()) - started;
	const titles = new Map(events.map((event) => [titleOf(event), 0]));
	for (const entry of sandbox.requestLog()) {
		const title = (entry.body as { title?: string } | undefined)?.title;
		if (entry.endpoint === SEND && entry.notificationId && title !== undefined && titles.has(title)) titles.set(title, titles.get(title)! + 1);
	}
	const executions = rows.reduce<Record<string, number>>((counts, row) => ({ ...counts, [row.status]: (counts[row.status] ?? 0) + 1 }), {});
	return {
		side,
		rep,
		events: events.length,
		postAnswers,
		ms,
		executionsPerSecond: (rows.length * 1000) / ms,
		executions,
		eventsSent: [...titles.values()].filter((count) => count > 0).length,
		eventsSentTwice: [...titles.values()].filter((count) => count > 1).length,
		clusterCpuMs,
		postgresCpuMs,
	};
}

export async function runQueueSuite(scale: QueueScale, tarball: string, log: (line: string) => void = () => {}): Promise<QueueResults> {
	const started = Date.now();
	const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-bench-queue-'));
	const sandbox = await startSandbox({ port: 0, seedUsers: scale.events, clock: 'real', tls: true });
	const link = await startDelayedLink(sandbox.baseUrl, scale.latencyMs);
	let cluster: QueueCluster | undefined;
	try {
		const caFile = path.join(temp, 'sandbox-ca.pem');
		fs.writeFileSync(caFile, sandbox.caCertificate!);
		const client = rawClient(sandbox);
		const token = await client.token().finally(() => client.close());
		const { primary } = sandbox.orgs;
		const example = exampleWorkflows().find((entry) => entry.workflow.id === ERP_EXAMPLE)?.workflow;
		if (!example) throw new Error(`examples/ has no workflow with id ${ERP_EXAMPLE} (the ERP webhook example)`);
		/** A copy of the example with its own id and webhook path; `withoutKey`: its Idempotency Key left out. */
		const copyOf = (side: QueueSide, withoutKey = false) => {
			const copy = JSON.parse(JSON.stringify(example));
			copy.id = WORKFLOWS[side].id;
			for (const node of copy.nodes as Array<{ type: string; parameters: { path?: string; options?: { idempotencyKey?: string } } }>) {
				if (node.type === 'n8n-nodes-base.webhook') node.parameters.path = WORKFLOWS[side].path;
				if (withoutKey) delete node.parameters.options?.idempotencyKey;
			}
			return copy;
		};
		const withHttpRequest = erpWithHttpRequest(example, WORKFLOWS.httpRequest.id, WORKFLOWS.httpRequest.path, `${link.baseUrl}/push-notification/send`, token);
		const clusterStarted = Date.now();
		cluster = await startQueueCluster({
			tarball,
			workers: scale.workers,
			concurrency: scale.concurrency,
			credentials: [credentialEntry({ baseUrl: link.baseUrl, clientId: primary.clientId, clientSecret: primary.clientSecret, refreshToken: primary.refreshToken })],
			workflows: [copyOf('node'), copyOf('nodeWithoutKey', true), withHttpRequest],
			publish: SIDES.map((side) => WORKFLOWS[side].id),
			extraEnv: { NODE_EXTRA_CA_CERTS: caFile },
			log,
		});
		const clusterStartMs = Date.now() - clusterStarted;
		log(`queue mode: main + ${scale.workers} workers up (${Math.round(clusterStartMs / 1000)} s)`);
		const [[dataDirectory]] = await cluster.psql('show data_directory');
		const postmasterPid = Number(fs.readFileSync(path.join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
		const eventsOf = (label: string, count: number): ErpEvent[] =>
			Array.from({ length: count }, (_, index) => ({ orderId: `${label}-${index + 1}`, status: 'shipped', userId: primary.userIds[index % primary.userIds.length] }));
		for (const side of SIDES) await pass(cluster, sandbox, side, -1, eventsOf(`W${side}`, scale.warmUpEvents), scale.atOnce, postmasterPid);
		const passes: QueuePass[] = [];
		for (let rep = 0; rep < scale.reps; rep++) {
			const sides = rep % 2 === 0 ? SIDES : [...SIDES].reverse();
			for (const side of sides) {
				const result = await pass(cluster, sandbox, side, rep, eventsOf(`Q${rep}${side}`, scale.events), scale.atOnce, postmasterPid);
				log(`queue ${side} pass ${rep + 1}: ${result.executionsPerSecond.toFixed(1)} executions/s (${(result.ms / 1000).toFixed(1)} s), ${JSON.stringify(result.executions)}`);
				passes.push(result);
			}
		}
		return { scale, passes, rssMb: cluster.rssMb(), clusterStartMs, totalMs: Date.now() - started, cores: os.cpus().length };
	} finally {
		await cluster?.stop();
		await link.close();
		await sandbox.stop();
		fs.rmSync(temp, { recursive: true, force: true });
	}
}
