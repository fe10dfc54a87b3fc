import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { fieldError } from '../nodeErrors';
import { DEFAULT_MAX_PARALLEL_REQUESTS, MAX_PARALLEL_REQUESTS, readParameter } from './itemLoop';

/** The "Options" collection of an operation: optional settings behind "Add Option". */
export function optionsCollection(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options,
	};
}

/** n8n's usual "Return All" + "Limit" pair. */
export const returnAllOrLimit: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		default: 50,
		typeOptions: { minValue: 1 },
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
];

/** How many results to read: Infinity for Return All. */
export function readLimit(context: IExecuteFunctions, itemIndex: number): number {
	if (readParameter(context, 'returnAll', 'Return All', itemIndex, false) === true) return Infinity;
	const limit = Number(readParameter(context, 'limit', 'Limit', itemIndex, 50));
	if (!Number.isInteger(limit) || limit < 1) {
		throw fieldError(
			context,
			'Limit',
			`must be a whole number of at least 1 (got ${String(limit)})`,
			itemIndex,
		);
	}
	return limit;
}

/** The "Requests at Once" option (Send, Schedule, Get), stored as maxParallelRequests; see
 * itemLoop.ts for its default. */
export const maxParallelRequestsOption: INodeProperties = {
	displayName: 'Requests at Once',
	name: 'maxParallelRequests',
	type: 'number',
	default: DEFAULT_MAX_PARALLEL_REQUESTS,
	typeOptions: { minValue: 1, maxValue: MAX_PARALLEL_REQUESTS },
	description:
		'At most this many requests to the API at the same time, e.g. to leave room for other systems using it. Without this option the node goes as fast as the API lets it: it slows down by itself when the API answers "too many requests".',
};
