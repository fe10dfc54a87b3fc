import type { INodeProperties } from 'n8n-workflow';

import * as cancel from './cancel.operation';
import * as get from './get.operation';
import * as getMany from './getMany.operation';
import * as getReport from './getReport.operation';
import * as schedule from './schedule.operation';
import * as send from './send.operation';

export const operations = { send, schedule, cancel, get, getMany, getReport };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['notification'] } },
		default: 'send',
		options: [
			{
				name: 'Cancel',
				value: 'cancel',
				action: 'Cancel a scheduled notification',
				description: 'Cancel a send that is still scheduled',
			},
			{
				name: 'Get',
				value: 'get',
				action: 'Get the status of a notification',
				description:
					'Get a send with its counters and deliveries, optionally waiting for its final status',
			},
			{
				name: 'Get Many',
				value: 'getMany',
				action: 'Get many notifications',
				description: "List the organization's sends, newest first",
			},
			{
				name: 'Get Report',
				value: 'getReport',
				action: 'Get a delivery report for notifications',
				description:
					'One report for several sends (e.g. every batch of a Send): the counters added up, and per user whether they were reached and opened it',
			},
			{
				name: 'Schedule',
				value: 'schedule',
				action: 'Schedule a notification',
				description: 'Send a notification at a set date and time',
			},
			{
				name: 'Send',
				value: 'send',
				action: 'Send a notification',
				description:
					'Send a notification now to the phones of the given users; returns the send ID and its status',
			},
		],
	},
	...send.description,
	...schedule.description,
	...cancel.description,
	...get.description,
	...getMany.description,
	...getReport.description,
];
