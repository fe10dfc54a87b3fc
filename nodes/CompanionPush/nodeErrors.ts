import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INode, IPairedItemData } from 'n8n-workflow';

/* The errors both nodes (action and trigger) make for the workflow. API errors are built in
 * transport/errors.ts. */

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

/** A bad parameter value: names the field and the item, and says how to fix it. */
export function fieldError(context: { getNode(): INode }, field: string, problem: string, itemIndex: number): NodeOperationError {
	return new NodeOperationError(context.getNode(), `"${field}" ${problem} [item ${itemIndex}]`, {
		itemIndex,
		description: `Nothing was sent for this item. Correct "${field}" and run the node again.`,
	});
}
