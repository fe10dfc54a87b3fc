/**
 * The peer measured for real: n8n's own HTTP Request node, in the real n8n 2.41.1 runtime (cached by
 * scripts/n8n-runtime under ~/.cache/n8n-nodes-companion-push), built the way a user builds the job
 * without this package: a Code node produces the items, an HTTP Request node (its default version,
 * its defaults) POSTs `<baseUrl>/push-notification/send` once per item with the header
 * `Authorization: Bearer <token>` (a token the bench got from the sandbox first) and a JSON body.
 * Run with `n8n execute --id --rawOutput`; timed by n8n's own run data (the HTTP Request node's
 * executionTime), so the CLI's start-up is not in the figure. Several chains go in one workflow
 * (n8n runs them one after the other); each chain's requests are told apart by their title.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { createN8nHome, ensureRuntime, executeWorkflow, findFreePort, runN8nCli } from '../scripts/n8n-runtime';
import type { Sandbox } from '../sandbox';
import { code, manualWorkflow, RunResult } from '../devkit/n8nWorkflow';
import type { NodeSpec } from '../devkit/n8nWorkflow';
import { BODY } from './cases';
import { SEND } from '../devkit/endpoints';
import { peakInFlight } from './measure';

/** The HTTP Request node's default version in n8n 2.41.1 (what a new node on the canvas gets). */
export const HTTP_REQUEST_VERSION = 4.5;

export interface PeerChain {
	/** Short name: the nodes are `Items <name>` and `HTTP Request <name>`. */
	name: string;
	/** The title of every send of this chain (how its requests are found in the sandbox's log). */
	title: string;
	/** One item per request, each with the recipients of its send. */
	recipients: string[][];
}

export const httpNodeName = (chain: Pick<PeerChain, 'name'>) => `HTTP Request ${chain.name}`;

/** The HTTP Request node of a chain: POST, a header parameter, a JSON body written as users write it. */
export function httpRequestNode(chain: PeerChain, baseUrl: string, token: string): NodeSpec {
	return {
		name: httpNodeName(chain),
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: HTTP_REQUEST_VERSION,
		parameters: {
			method: 'POST',
			url: `${baseUrl}/push-notification/send`,
			sendHeaders: true,
			headerParameters: { parameters: [{ name: 'Authorization', value: `Bearer ${token}` }] },
			sendBody: true,
			specifyBody: 'json',
			jsonBody: `={\n  "title": ${JSON.stringify(chain.title)},\n  "body": ${JSON.stringify(BODY)},\n  "target_user_ids": {{ JSON.stringify($json.userIds) }}\n}`,
			options: {},
		},
	};
}

/** Manual Trigger, then per chain: Code node (the items) -> HTTP Request node. */
export function httpRequestWorkflow(id: string, baseUrl: string, token: string, chains: PeerChain[]): IDataObject {
	return manualWorkflow(
		id,
		`Bench: HTTP Request node peer (${chains.map((chain) => chain.name).join(', ')})`,
		chains.map((chain) => [
			code(`Items ${chain.name}`, `return ${JSON.stringify(chain.recipients.map((userIds) => ({ json: { userIds } })))};`),
			httpRequestNode(chain, baseUrl, token),
		]),
	) as IDataObject;
}

export interface PeerRun {
	/** The HTTP Request node's executionTime in n8n's run data. */
	ms: number;
	outputItems: number;
	error?: string;
	/** Sends of this chain the sandbox saw, by answer status. */
	statuses: Record<number, number>;
	sends: number;
	/** The most requests the sandbox had in flight at once while the node ran. */
	peakInFlight: number;
}

/** What one chain did in an `n8n execute` run, from n8n's run data and the sandbox's log. */
export function peerRunOf(result: RunResult, chain: PeerChain, sandbox: Pick<Sandbox, 'requestLog'>): PeerRun {
	const [run] = result.nodeRuns(httpNodeName(chain));
	const statuses: Record<number, number> = {};
	let sends = 0;
	for (const entry of sandbox.requestLog()) {
		if (entry.endpoint !== SEND || (entry.body as { title?: unknown } | undefined)?.title !== chain.title) continue;
		sends++;
		statuses[entry.status] = (statuses[entry.status] ?? 0) + 1;
	}
	return {
		ms: run.executionTime,
		outputItems: run.data?.main?.[0]?.length ?? 0,
		error: run.error ? String(run.error.message ?? JSON.stringify(run.error)).slice(0, 300) : undefined,
		statuses,
		sends,
		peakInFlight: peakInFlight(run.startTime, run.startTime + run.executionTime),
	};
}

/** A fresh n8n user folder of the real runtime, to import workflows into and execute them. */
export class N8nPeer {
	private constructor(
		readonly userFolder: string,
		private readonly env: Record<string, string>,
	) {}

	/** Installs the runtime first if it is not cached yet (4 to 7 minutes, once). */
	static async start(log: (line: string) => void = () => {}): Promise<N8nPeer> {
		const runtime = await ensureRuntime({ log });
		const port = await findFreePort();
		const brokerPort = await findFreePort();
		const { userFolder, env } = createN8nHome({ port, brokerPort, runtime });
		return new N8nPeer(userFolder, env);
	}

	/** `n8n import:workflow` of the workflows (the file is removed afterwards: it holds a token). */
	async importWorkflows(workflows: IDataObject[]): Promise<void> {
		const dir = fs.mkdtempSync(path.join(this.userFolder, 'import-'));
		const file = path.join(dir, 'workflows.json');
		try {
			fs.writeFileSync(file, JSON.stringify(workflows), { mode: 0o600 });
			const result = await runN8nCli(this.env, ['import:workflow', `--input=${file}`], { timeoutMs: 180_000 });
			if (result.code !== 0 || !/Successfully imported/.test(result.stdout + result.stderr)) {
				throw new Error(`n8n import:workflow failed (exit ${result.code}):\n${`${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n')}`);
			}
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	}

	/** `n8n execute --id=<id> --rawOutput`, parsed; `durationMs` is the CLI's whole time. */
	async execute(workflowId: string, timeoutMs = 300_000): Promise<RunResult> {
		const { result, run } = await executeWorkflow(this.env, workflowId, timeoutMs);
		return new RunResult(result.code, run as IDataObject, result.stdout, result.durationMs);
	}

	remove(): void {
		fs.rmSync(this.userFolder, { recursive: true, force: true });
	}
}
