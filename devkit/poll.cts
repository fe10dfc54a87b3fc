/**
 * Runs a polling trigger of this package the way an active workflow in n8n 2.41 runs it: a real
 * n8n-core `PollContext` (activation 'activate', mode 'trigger') over a real `Workflow`, whose node
 * static data therefore lives across polls exactly as in n8n, and the poll function called through
 * n8n-core's own `TriggersAndPollers.runPollFunction`. Like n8n's PollTriggerExecutor: a non-null
 * answer is emitted, an error goes to emitError.
 *
 * No staging of static data here: n8n 2.41's CLI stages it during a poll (and commits it when the
 * poll returns null or its items are emitted, not when it throws), but an older n8n, or a Workflow
 * object kept in memory, sees every in-place change. Without staging, a trigger that wrote its
 * state before a failing read would be caught by the tests.
 */
import { PollContext, TriggersAndPollers } from 'n8n-core';
import { Workflow } from 'n8n-workflow';
import type {
	IDataObject,
	INode,
	INodeExecutionData,
	INodeType,
	IWorkflowExecuteAdditionalData,
} from 'n8n-workflow';

import { buildAdditionalData, nodeTypes, registerNodeType } from './engine.cts';
import type { CredentialStore } from './engine.cts';

export interface PollTarget {
	workflow: Workflow;
	node: INode;
	additionalData: IWorkflowExecuteAdditionalData;
	/** The one poll context of this activation, as n8n keeps it: made by the first poll (the one
	 * n8n runs while activating the workflow) and reused by every later poll. */
	context?: PollContext;
	/** Where the context's emit and emitError put the current poll's outcome. */
	sink: { emitted?: INodeExecutionData[][]; failure?: Error };
}

export interface PollOutcome {
	/** What the poll emitted (empty when it returned null or failed). */
	items: IDataObject[];
	/** True when the poll returned items (n8n starts an execution with them). */
	emitted: boolean;
	/** The error n8n would record (emitError), when the poll failed. */
	error?: Error & { httpCode?: string | null; description?: string | null };
}

let pollWorkflowCounter = 0;

const additionalDataFor = (credentials: CredentialStore) => buildAdditionalData(credentials);

/** An active workflow holding one polling trigger node of type `type` (registered if given). */
export function createPollTarget(options: {
	type: string;
	nodeType?: INodeType;
	parameters: IDataObject;
	credentials: CredentialStore;
	credentialId?: string;
	name?: string;
	staticData?: IDataObject;
}): PollTarget {
	if (options.nodeType) registerNodeType(options.type, options.nodeType);
	const stored = options.credentials.get(options.credentialId ?? 'cred-1');
	const node: INode = {
		id: 'n-trigger',
		name: options.name ?? 'Companion Push Trigger',
		type: options.type,
		typeVersion: 1,
		position: [0, 0],
		parameters: options.parameters as INode['parameters'],
		credentials: { companionPushApi: { id: stored.id, name: stored.name } },
	};
	const workflow = new Workflow({
		id: `wf-poll-${++pollWorkflowCounter}`,
		name: 'poll test workflow',
		nodes: [node],
		connections: {},
		active: true,
		nodeTypes,
		staticData: options.staticData,
		settings: { timezone: 'UTC', executionOrder: 'v1' },
	});
	return { workflow, node, additionalData: additionalDataFor(options.credentials), sink: {} };
}

const triggersAndPollers = new TriggersAndPollers();

const pollObservers = new Set<(outcome: PollOutcome, target: PollTarget) => void>();

/** Calls `observer` with every poll outcome (items or error) and its target (whose workflow holds
 * the trigger's static data) before the caller sees it; returns the function that stops observing
 * (used by test/harness/secretGuard.cts). */
export function observePolls(
	observer: (outcome: PollOutcome, target: PollTarget) => void,
): () => void {
	pollObservers.add(observer);
	return () => pollObservers.delete(observer);
}

/** One poll of an active workflow, as n8n runs it. */
export async function runPoll(target: PollTarget): Promise<PollOutcome> {
	const sink = target.sink;
	sink.emitted = undefined;
	sink.failure = undefined;
	const context = (target.context ??= new PollContext(
		target.workflow,
		target.node,
		target.additionalData,
		'trigger',
		'activate',
		(data) => (sink.emitted = data),
		(error) => (sink.failure = error),
	));
	try {
		const response = await triggersAndPollers.runPollFunction(
			target.workflow,
			target.node,
			context,
		);
		if (response !== null) context.__emit(response);
	} catch (error) {
		context.__emitError(error as Error);
	}
	const { emitted, failure } = sink as PollTarget['sink'];
	const outcome: PollOutcome = {
		items: (emitted?.[0] ?? []).map((item) => item.json),
		emitted: emitted !== undefined,
		error: failure as PollOutcome['error'],
	};
	for (const observer of pollObservers) observer(outcome, target);
	return outcome;
}

/** The trigger node's static data, as a plain copy. */
export function nodeStaticData(target: PollTarget): IDataObject {
	return JSON.parse(
		JSON.stringify(target.workflow.getStaticData('node', target.node)),
	) as IDataObject;
}
