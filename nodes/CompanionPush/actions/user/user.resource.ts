import type { INodeProperties } from 'n8n-workflow';

import * as getActive from './getActive.operation';
import * as getMany from './getMany.operation';

export const operations = { getMany, getActive };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['user'] } },
		default: 'getMany',
		options: [
			{
				name: 'Get Many',
				value: 'getMany',
				action: 'Get many users',
				description: "List the organization's users (their IDs are what notifications target)",
			},
			{
				name: 'Get With Active App',
				value: 'getActive',
				action: 'Get users with an active app',
				description: 'List the users who can receive notifications now',
			},
		],
	},
	...getMany.description,
	...getActive.description,
];
