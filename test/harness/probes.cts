/** Transport functions run inside a real node execution (a probe node in n8n-core's
 * WorkflowExecute, see devkit/engine.cts), with what they returned or threw. */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runProbe } from '../../devkit/engine.cts';
import type { CredentialStore, NodeRunResult } from '../../devkit/engine.cts';

/**
 * Runs `body` once inside a real node execution and hands back what it returned or threw (the raw
 * error object, before n8n turns it into the run's error). The node itself always succeeds.
 */
export async function inNode<T>(
	store: CredentialStore,
	body: (context: IExecuteFunctions) => Promise<T>,
	items: IDataObject[] = [{}],
): Promise<{ value?: T; error?: unknown; run: NodeRunResult }> {
	let value: T | undefined;
	let error: unknown;
	const run = await runProbe(
		store,
		async function (this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
			try {
				value = await body(this);
			} catch (caught) {
				error = caught;
			}
			return [[{ json: {} }]];
		},
		items,
	);
	if (run.error) throw new Error(`the probe node failed: ${run.error.message}`);
	return { value, error, run };
}

/** Like inNode, but fails the test when `body` throws. */
export async function valueInNode<T>(
	store: CredentialStore,
	body: (context: IExecuteFunctions) => Promise<T>,
): Promise<T> {
	const { value, error } = await inNode(store, body);
	if (error) throw error;
	return value as T;
}

/** Like inNode, but fails the test unless `body` throws; returns the error. */
export async function errorInNode(
	store: CredentialStore,
	body: (context: IExecuteFunctions) => Promise<unknown>,
): Promise<any> {
	const { error, value } = await inNode(store, body);
	if (error === undefined) throw new Error(`expected an error, got ${JSON.stringify(value)}`);
	return error;
}
