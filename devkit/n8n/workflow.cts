/**
 * Workflows for a real n8n's CLI and what it answers: the nodes and Manual Trigger workflows that
 * the end-to-end tests and the benchmark's peer (n8n's HTTP Request node) import, and the result
 * of a run (printed by `n8n execute --rawOutput`, or read back from n8n).
 */
import { randomUUID } from 'node:crypto';

export type Json = Record<string, any>;

/** One node run of `n8n execute`'s result. */
export interface NodeRun {
	startTime: number;
	executionTime: number;
	executionStatus?: string;
	error?: Json;
	data?: { main?: Array<Array<{ json: Json; pairedItem?: unknown; error?: Json }> | null> };
}

/** The result of `n8n execute --id=... --rawOutput`. */
export class RunResult {
	constructor(
		/** The exit code of `n8n execute` (undefined for a run through the REST API). */
		readonly code: number | null | undefined,
		readonly run: Json,
		readonly output: string,
		readonly durationMs: number,
	) {}

	get status(): string {
		return this.run.status;
	}

	/** The workflow's error, if it stopped on one. */
	get error(): Json | undefined {
		return this.run.data?.resultData?.error;
	}

	nodeRuns(node: string): NodeRun[] {
		const runs = this.run.data?.resultData?.runData?.[node] as NodeRun[] | undefined;
		if (!runs) {
			const ran = Object.keys(this.run.data?.resultData?.runData ?? {}).join(', ');
			throw new Error(
				`Node "${node}" did not run (ran: ${ran}); workflow error: ${JSON.stringify(this.error ?? null)}`,
			);
		}
		return runs;
	}

	/** The output items (json) of a node's first output in its given run. */
	items(node: string, runIndex = 0): Json[] {
		const nodeRun = this.nodeRuns(node)[runIndex];
		if (nodeRun.error)
			throw new Error(`Node "${node}" failed: ${JSON.stringify(nodeRun.error).slice(0, 2000)}`);
		return (nodeRun.data?.main?.[0] ?? []).map((item) => item.json);
	}

	/** [start, end] of a node's runs, in ms (the same clock as the in-process sandbox's real clock). */
	window(node: string): [number, number] {
		const runs = this.nodeRuns(node);
		return [runs[0].startTime, Math.max(...runs.map((run) => run.startTime + run.executionTime))];
	}
}

export interface NodeSpec {
	name: string;
	type: string;
	typeVersion: number;
	parameters: Json;
	credentials?: Json;
	onError?: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput';
	webhookId?: string;
}

/** A Code node (JavaScript, run once for all items). */
export function code(name: string, jsCode: string): NodeSpec {
	return { name, type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { jsCode } };
}

/**
 * A workflow: a Manual Trigger followed by chains of nodes. With execution order v1, n8n runs the
 * chains one after the other, from the top one (the first given) down.
 */
export function manualWorkflow(id: string, name: string, chains: NodeSpec[][]): Json {
	const trigger = {
		name: 'Start',
		type: 'n8n-nodes-base.manualTrigger',
		typeVersion: 1,
		parameters: {},
	};
	const nodes: Json[] = [{ id: randomUUID(), position: [0, 0], ...trigger }];
	const connections: Json = {};
	const link = (from: string, to: string) => {
		connections[from] ??= { main: [[]] };
		connections[from].main[0].push({ node: to, type: 'main', index: 0 });
	};
	chains.forEach((chain, row) => {
		chain.forEach((node, column) => {
			nodes.push({ id: randomUUID(), position: [(column + 1) * 260, row * 200], ...node });
			link(column === 0 ? 'Start' : chain[column - 1].name, node.name);
		});
	});
	return {
		id,
		name,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		active: false,
		pinData: {},
	};
}
