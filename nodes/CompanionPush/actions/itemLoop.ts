import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type {
	IDataObject,
	IExecuteFunctions,
	IGetNodeParameterOptions,
	INodeExecutionData,
} from 'n8n-workflow';

import { runPool } from '../common/pool';
import { asNodeError, errorItem, fieldError } from '../nodeErrors';
import type { NothingSent } from '../nodeErrors';

/** Max Parallel Requests: its default and bound. Over https each request holds its slot for about
 * three round trips (n8n's helper opens a new connection per request), so fewer in flight cost more
 * time than they save (`npm run bench` measures it); a service that answers 429 slows the pace
 * down by itself. */
export const DEFAULT_MAX_PARALLEL_REQUESTS = 100;
export const MAX_PARALLEL_REQUESTS = 100;
/** Max Parallel Requests not set: the node starts its requests as n8n's HTTP Request node does
 * (up to this many, a bound on sockets only), and the credential's pace (transport/retry.ts) keeps
 * in flight what the service admitted at its first 429. */
export const UNSET_MAX_PARALLEL_REQUESTS = 1_000;

/** The option "Max Parallel Requests" of an item's Options. */
export function readMaxParallelRequests(
	context: IExecuteFunctions,
	options: IDataObject,
	itemIndex: number,
	nothingSent?: NothingSent,
): number {
	if (options.maxParallelRequests === undefined) return UNSET_MAX_PARALLEL_REQUESTS;
	const value = Number(options.maxParallelRequests);
	if (!Number.isInteger(value) || value < 1 || value > MAX_PARALLEL_REQUESTS) {
		throw fieldError(
			context,
			'Max Parallel Requests',
			`must be a whole number from 1 to ${MAX_PARALLEL_REQUESTS} (got ${String(options.maxParallelRequests)})`,
			itemIndex,
			nothingSent,
		);
	}
	return value;
}

/**
 * Runs `handle` for each input item, up to `parallel` at once (one at a time by default), started
 * in order. Every output item is paired with its input item, and the output keeps the items'
 * order; a failing item becomes an error item when the node continues on fail. Otherwise nothing
 * new starts after a failure, what runs is finished, and the first failure (in item order) stops
 * the node.
 */
export async function forEachItem(
	context: IExecuteFunctions,
	handle: (itemIndex: number) => Promise<object | object[]>,
	parallel = 1,
): Promise<INodeExecutionData[]> {
	const items = context.getInputData();
	const results = await runPool(items.length, parallel, handle, !context.continueOnFail());
	const output: INodeExecutionData[] = [];
	for (const [itemIndex, result] of results.entries()) {
		if (result === undefined) continue;
		if (result.ok) {
			for (const json of Array.isArray(result.value) ? result.value : [result.value]) {
				output.push({ json: json as IDataObject, pairedItem: { item: itemIndex } });
			}
			continue;
		}
		const nodeError = asNodeError(context, result.error, itemIndex);
		if (!context.continueOnFail()) throw nodeError;
		output.push(errorItem(nodeError, { item: itemIndex }));
	}
	return output;
}

/** Reads a parameter of an item. An expression n8n cannot evaluate (bad syntax, a node that does
 * not exist) is reported like any bad value: naming the field and the item, before anything is sent
 * (n8n's own error says neither, e.g. "invalid syntax"). */
export function readParameter(
	context: IExecuteFunctions,
	name: string,
	field: string,
	itemIndex: number,
	fallback: unknown,
	options?: IGetNodeParameterOptions,
	nothingSent?: NothingSent,
): unknown {
	try {
		return context.getNodeParameter(name, itemIndex, fallback, options);
	} catch (error) {
		if (error instanceof NodeOperationError || error instanceof NodeApiError)
			throw asNodeError(context, error, itemIndex);
		throw fieldError(
			context,
			field,
			`could not be read: ${(error as Error).message}`,
			itemIndex,
			nothingSent,
		);
	}
}
