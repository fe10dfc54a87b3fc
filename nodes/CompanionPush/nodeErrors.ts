import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INode, IPairedItemData, NodeApiError } from 'n8n-workflow';

export { asNodeError } from './transport/errors';

/* The errors both nodes (action and trigger) make for the workflow. API errors, and asNodeError
 * that turns anything thrown into an n8n error, are built in transport/errors.ts. */

/** The output item that stands for a failed item under "Continue (using error output)" or "Continue". */
export function errorItem(
	error: NodeApiError | NodeOperationError,
	pairedItem: IPairedItemData | IPairedItemData[],
	extra: IDataObject = {},
) {
	return {
		json: {
			...extra,
			error: error.message,
			...(error.description ? { errorDescription: error.description } : {}),
		},
		pairedItem,
	};
}

/** What a bad value of a Send or Schedule left unsent: the item it is on, or the whole run. */
export type NothingSent = 'item' | 'run';

/** A bad parameter value: names the field and the item, and says how to fix it (and, for Send and
 * Schedule, that nothing was sent because of it). */
export function fieldError(
	context: { getNode(): INode },
	field: string,
	problem: string,
	itemIndex: number,
	nothingSent?: NothingSent,
): NodeOperationError {
	const unsent =
		nothingSent === 'item'
			? 'Nothing was sent for this item. '
			: nothingSent === 'run'
				? 'Nothing was sent. '
				: '';
	return new NodeOperationError(context.getNode(), `"${field}" ${problem} [item ${itemIndex}]`, {
		itemIndex,
		description: `${unsent}Correct "${field}" and run the node again.`,
	});
}
