import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

/** The "Options" collection of an operation: optional settings behind "Add Option". */
export function optionsCollection(show: NonNullable<IDisplayOptions['show']>, options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show },
		options,
	};
}
