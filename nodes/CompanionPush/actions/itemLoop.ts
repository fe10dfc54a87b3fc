import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, IGetNodeParameterOptions, INodeExecutionData } from 'n8n-workflow';

import { asNodeError, errorItem, fieldError } from '../nodeErrors';

/**
 * Runs `handle` for each input item, in order (one at a time: the token is renewed once for all
 * of them, and nothing is sent in parallel that could be sent twice). Every output item is paired
 * with its input item; a failing item becomes an error item when the node continues on fail.
 */
export async function forEachItem(
	context: IExecuteFunctions,
	handle: (itemIndex: number) => Promise<object | object[]>,
): Promise<INodeExecutionData[]> {
	const output: INodeExecutionData[] = [];
	const items = context.getInputData();
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const result = await handle(itemIndex);
			for (const json of Array.isArray(result) ? result : [result]) {
				output.push({ json: json as IDataObject, pairedItem: { item: itemIndex } });
			}
		} catch (error) {
			const nodeError = asNodeError(context, error, itemIndex);
			if (!context.continueOnFail()) throw nodeError;
			output.push(errorItem(nodeError, { item: itemIndex }));
		}
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
): unknown {
	try {
		return context.getNodeParameter(name, itemIndex, fallback, options);
	} catch (error) {
		throw unreadableParameter(context, error, field, itemIndex);
	}
}

function unreadableParameter(context: IExecuteFunctions, error: unknown, field: string, itemIndex: number) {
	if (error instanceof NodeOperationError || error instanceof NodeApiError) return error;
	return fieldError(context, field, `could not be read: ${(error as Error).message}`, itemIndex);
}
