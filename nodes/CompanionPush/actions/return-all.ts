import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { fieldError, readParameter } from './item-loop';

/** n8n's usual "Return All" + "Limit" pair. */
export function returnAllOrLimit(resource: string, operation: string): INodeProperties[] {
	const show = { resource: [resource], operation: [operation] };
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			default: false,
			description: 'Whether to return all results or only up to a given limit',
			displayOptions: { show },
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			default: 50,
			typeOptions: { minValue: 1 },
			description: 'Max number of results to return',
			displayOptions: { show: { ...show, returnAll: [false] } },
		},
	];
}

/** How many results to read: Infinity for Return All. */
export function readLimit(context: IExecuteFunctions, itemIndex: number): number {
	if (readParameter(context, 'returnAll', 'Return All', itemIndex, false) === true) return Infinity;
	const limit = Number(readParameter(context, 'limit', 'Limit', itemIndex, 50));
	if (!Number.isInteger(limit) || limit < 1) {
		throw fieldError(context, 'Limit', `must be a whole number of at least 1 (got ${String(limit)})`, itemIndex);
	}
	return limit;
}
