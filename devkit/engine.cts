/**
 * Runs real workflows of this package's nodes in-process, through n8n-core's WorkflowExecute
 * (the engine n8n itself runs), against the sandbox. No mock of IExecuteFunctions: nodes get the
 * same contexts, helpers, parameter resolution, continue-on-fail and paired-item handling as in n8n.
 */
import { ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import { Workflow } from 'n8n-workflow';
import type {
	ExecutionError,
	IConnections,
	IDataObject,
	IExecuteFunctions,
	INode,
	INodeExecutionData,
	INodeType,
	INodeTypes,
	IRun,
	IVersionedNodeType,
	IWorkflowExecuteAdditionalData,
} from 'n8n-workflow';

import { TestCredentialsHelper } from './credentialsHelper.cts';
import type { StoredCredential } from './credentialsHelper.cts';

/** Emits the items given in its `items` parameter: the input of the node under test. */
class TestItemsNode implements INodeType {
	description = {
		displayName: 'Test Items',
		name: 'testItems',
		group: ['input'],
		version: 1,
		description: 'Emits the items of its parameter',
		defaults: { name: 'Test Items' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [{ displayName: 'Items', name: 'items', type: 'json' as const, default: '[]' }],
	} as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const raw = this.getNodeParameter('items', 0) as string | IDataObject[];
		const items = (typeof raw === 'string' ? JSON.parse(raw) : raw) as IDataObject[];
		return [items.map((json) => ({ json }))];
	}
}

class ManualTriggerNode implements INodeType {
	description = {
		displayName: 'Manual Trigger',
		name: 'manualTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Starts the run',
		defaults: { name: 'Start' },
		inputs: [],
		outputs: ['main'],
		properties: [],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [[{ json: {} }]];
	}
}

/** A node whose execute is a function given by the test: drives the transport from a real node context. */
export type ProbeFunction = (this: IExecuteFunctions) => Promise<INodeExecutionData[][]>;
const probes = new Map<string, ProbeFunction>();

class ProbeNode implements INodeType {
	description = {
		displayName: 'Probe',
		name: 'probe',
		group: ['transform'],
		version: 1,
		description: 'Runs a test function',
		defaults: { name: 'Probe' },
		inputs: ['main'],
		outputs: ['main'],
		credentials: [{ name: 'companionPushApi', required: true }],
		properties: [{ displayName: 'Probe', name: 'probe', type: 'string' as const, default: '' }],
	} as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const probe = probes.get(this.getNodeParameter('probe', 0) as string);
		if (!probe) throw new Error('unknown probe');
		return await probe.call(this);
	}
}

const registry = new Map<string, INodeType | IVersionedNodeType>([
	['test.items', new TestItemsNode()],
	['test.manualTrigger', new ManualTriggerNode()],
	['test.probe', new ProbeNode()],
]);

/** Makes a node type of this package runnable in workflows, under `type`. */
export function registerNodeType(type: string, nodeType: INodeType | IVersionedNodeType) {
	registry.set(type, nodeType);
}

export const nodeTypes: INodeTypes = {
	getByName: (type) => {
		const found = registry.get(type);
		if (!found) throw new Error(`Unknown node type ${type}`);
		return found;
	},
	getByNameAndVersion: (type) => {
		const found = registry.get(type);
		if (!found) throw new Error(`Unknown node type ${type}`);
		return 'nodeVersions' in found ? found.nodeVersions[found.currentVersion] : found;
	},
	getKnownTypes: () => ({}),
};

/** The credentials n8n would hold: one Companion Push API credential per test, by default. */
export class CredentialStore {
	readonly map = new Map<string, StoredCredential>();

	add(data: IDataObject, id = 'cred-1', name = 'Companion Push test'): StoredCredential {
		const stored: StoredCredential = {
			id,
			name,
			type: 'companionPushApi',
			data: { ...data } as never,
			reads: 0,
			writes: 0,
		};
		this.map.set(id, stored);
		return stored;
	}

	get(id = 'cred-1'): StoredCredential {
		return this.map.get(id)!;
	}
}

/** What n8n's CLI hands the engine: the credentials helper, URLs, and stubs of what tests never use. */
export function buildAdditionalData(
	credentials: CredentialStore,
	executionId?: string,
): IWorkflowExecuteAdditionalData {
	return {
		credentialsHelper: new TestCredentialsHelper(credentials.map),
		executionId,
		currentNodeExecutionIndex: 0,
		restApiUrl: 'http://127.0.0.1/rest',
		instanceBaseUrl: 'http://127.0.0.1/',
		formBaseUrl: 'http://127.0.0.1:5678/formBaseUrl',
		formWaitingBaseUrl: 'http://127.0.0.1:5678/formWaitingBaseUrl',
		formTestBaseUrl: 'http://127.0.0.1:5678/formTestBaseUrl',
		webhookBaseUrl: 'http://127.0.0.1:5678/webhookBaseUrl',
		webhookWaitingBaseUrl: 'http://127.0.0.1:5678/webhookWaitingBaseUrl',
		webhookTestBaseUrl: 'http://127.0.0.1:5678/webhookTestBaseUrl',
		mcpBaseUrl: 'http://127.0.0.1:5678/mcpBaseUrl',
		mcpTestBaseUrl: 'http://127.0.0.1:5678/mcpTestBaseUrl',
		variables: {},
		userId: 'user-1',
		executeWorkflow: async () => {
			throw new Error('not supported in tests');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		logAiEvent: () => {},
		startRunnerTask: async () => {
			throw new Error('not supported in tests');
		},
	} as unknown as IWorkflowExecuteAdditionalData;
}

let executionCounter = 0;

/** What a finished run hands its observers: the run, the nodes of its workflow, and the workflow's
 * static data as the run left it (what n8n would save with the workflow). */
export interface ObservedRun {
	run: IRun;
	nodes: INode[];
	staticData: IDataObject;
}
const runObservers = new Set<(observed: ObservedRun) => void>();

/** Calls `observer` with every run this harness finishes (runWorkflow, runNode, runProbe), before
 * the caller sees it; returns the function that stops observing. The secret guard of the unit
 * tests (test/harness/secretGuard.cts) reads every output, error and static data through it. */
export function observeRuns(observer: (observed: ObservedRun) => void): () => void {
	runObservers.add(observer);
	return () => runObservers.delete(observer);
}

export interface WorkflowRunOptions {
	nodes: INode[];
	connections: IConnections;
	credentials: CredentialStore;
	timezone?: string;
	staticData?: IDataObject;
}

export async function runWorkflow(options: WorkflowRunOptions): Promise<IRun> {
	return await execute(options);
}

/**
 * Retries a failed run as n8n's "Retry" on the Executions list does (executions service, retry):
 * the failed run's data, as saved (a JSON copy), without the error and without the failed node's
 * last run, is run again in mode `retry` from the node that failed.
 */
export async function retryWorkflow(options: WorkflowRunOptions, failed: IRun): Promise<IRun> {
	const data = JSON.parse(JSON.stringify(failed.data)) as IRun['data'];
	const { lastNodeExecuted } = data.resultData;
	delete data.resultData.error;
	const nodeRuns = lastNodeExecuted ? data.resultData.runData[lastNodeExecuted] : undefined;
	if (nodeRuns && nodeRuns.length > 0 && nodeRuns[nodeRuns.length - 1].error !== undefined)
		nodeRuns.pop();
	return await execute(options, data);
}

async function execute(options: WorkflowRunOptions, retryOf?: IRun['data']): Promise<IRun> {
	const executionId = String(++executionCounter);
	const mode = retryOf ? 'retry' : 'manual';
	const workflowData = {
		id: 'wf-test',
		name: 'test workflow',
		active: false,
		isArchived: false,
		nodes: options.nodes,
		connections: options.connections,
		settings: { timezone: options.timezone ?? 'UTC', executionOrder: 'v1' as const },
		createdAt: new Date(),
		updatedAt: new Date(),
	};
	const workflow = new Workflow({
		id: workflowData.id,
		name: workflowData.name,
		nodes: options.nodes,
		connections: options.connections,
		active: false,
		nodeTypes,
		staticData: options.staticData,
		settings: workflowData.settings,
	});
	const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowData as never);
	const finished = new Promise<IRun>((resolve) =>
		hooks.addHandler('workflowExecuteAfter', (run) => resolve(run)),
	);
	const additionalData = buildAdditionalData(options.credentials, executionId);
	additionalData.hooks = hooks;
	if (retryOf) {
		await new WorkflowExecute(additionalData, mode, retryOf).processRunExecutionData(workflow);
	} else {
		const startNode = workflow.getNode(options.nodes[0].name) ?? undefined;
		await new WorkflowExecute(additionalData, mode).run({ workflow, startNode });
	}
	const run = await finished;
	for (const observer of runObservers)
		observer({ run, nodes: options.nodes, staticData: workflow.staticData });
	return run;
}

export interface NodeRunOptions {
	type: string;
	parameters: IDataObject;
	/** Input items; the node gets one empty item when omitted. */
	items?: IDataObject[];
	credentials: CredentialStore;
	credentialId?: string;
	continueOnFail?: boolean;
	timezone?: string;
	name?: string;
	/** Node settings such as Retry On Fail (`retryOnFail`, `maxTries`, `waitBetweenTries`). */
	settings?: Partial<Pick<INode, 'retryOnFail' | 'maxTries' | 'waitBetweenTries'>>;
}

export interface NodeRunResult {
	/** Items of each output of the node under test. */
	outputs: INodeExecutionData[][];
	/** The items of the first output. */
	items: INodeExecutionData[];
	error?: ExecutionError;
	run: IRun;
}

/** The workflow `Test Items -> node under test`. */
export function nodeWorkflow(options: NodeRunOptions): WorkflowRunOptions {
	const nodeName = options.name ?? 'Companion Push';
	const credentialId = options.credentialId ?? 'cred-1';
	const stored = options.credentials.get(credentialId);
	const nodes: INode[] = [
		{
			id: 'n-items',
			name: 'Input',
			type: 'test.items',
			typeVersion: 1,
			position: [0, 0],
			parameters: { items: JSON.stringify(options.items ?? [{}]) },
		},
		{
			id: 'n-test',
			name: nodeName,
			type: options.type,
			typeVersion: 1,
			position: [200, 0],
			parameters: options.parameters as INode['parameters'],
			credentials: stored ? { companionPushApi: { id: stored.id, name: stored.name } } : undefined,
			continueOnFail: options.continueOnFail,
			onError: options.continueOnFail ? 'continueRegularOutput' : undefined,
			...options.settings,
		},
	];
	return {
		nodes,
		connections: { Input: { main: [[{ node: nodeName, type: 'main' as never, index: 0 }]] } },
		credentials: options.credentials,
		timezone: options.timezone,
	};
}

/** What the node under test produced in a run (its last run). */
export function nodeResult(run: IRun, nodeName = 'Companion Push'): NodeRunResult {
	const runs = run.data.resultData.runData[nodeName] ?? [];
	const task = runs[runs.length - 1];
	const outputs = (task?.data?.main ?? []).map((output) => output ?? []);
	return { outputs, items: outputs[0] ?? [], error: task?.error ?? run.data.resultData.error, run };
}

/** Runs `Test Items -> node under test` and returns what the node produced. */
export async function runNode(options: NodeRunOptions): Promise<NodeRunResult> {
	return nodeResult(await runWorkflow(nodeWorkflow(options)), options.name ?? 'Companion Push');
}

/** Runs `Test Items -> Probe` where the probe executes `probe` in a real node context. */
export async function runProbe(
	credentials: CredentialStore,
	probe: ProbeFunction,
	items: IDataObject[] = [{}],
): Promise<NodeRunResult> {
	const key = `probe-${++executionCounter}`;
	probes.set(key, probe);
	try {
		return await runNode({
			type: 'test.probe',
			parameters: { probe: key },
			items,
			credentials,
			name: 'Probe',
		});
	} finally {
		probes.delete(key);
	}
}
