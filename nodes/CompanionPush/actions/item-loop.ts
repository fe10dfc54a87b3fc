import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type {
	IDataObject,
	IExecuteFunctions,
	IGetNodeParameterOptions,
	INode,
	INodeExecutionData,
	IPairedItemData,
} from 'n8n-workflow';

/** An n8n error (for this item, when there is one): API and node errors keep their text; anything
 * else is wrapped. Also used by the trigger, whose polls have no item. */
export function asNodeError(
	context: { getNode(): INode },
	error: unknown,
	itemIndex?: number,
): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) {
		if (itemIndex !== undefined) error.context.itemIndex ??= itemIndex;
		return error;
	}
	return new NodeOperationError(context.getNode(), error as Error, { itemIndex });
}

/** The output item that stands for a failed item under "Continue (using error output)" or "Continue". */
export function errorItem(error: NodeApiError | NodeOperationError, pairedItem: IPairedItemData | IPairedItemData[], extra: IDataObject = {}) {
	return {
		json: { ...extra, error: error.message, ...(error.description ? { errorDescription: error.description } : {}) },
		pairedItem,
	};
}

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

/** A bad parameter value: names the field and the item, and says how to fix it. */
export function fieldError(context: IExecuteFunctions, field: string, problem: string, itemIndex: number): NodeOperationError {
	return new NodeOperationError(context.getNode(), `"${field}" ${problem} [item ${itemIndex}]`, {
		itemIndex,
		description: `Nothing was sent for this item. Correct "${field}" and run the node again.`,
	});
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
