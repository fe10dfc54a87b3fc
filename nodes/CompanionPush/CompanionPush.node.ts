import { NodeConnectionTypes } from 'n8n-workflow';
import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import * as notification from './actions/notification/notification.resource';
import { outputsOf } from './actions/notification/send.operation';
import { router } from './actions/router';
import * as user from './actions/user/user.resource';
import { searchUsers } from './methods/listSearch';

export class CompanionPush implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Companion Push',
		name: 'companionPush',
		icon: {
			light: 'file:../../icons/companionPush.svg',
			dark: 'file:../../icons/companionPush.dark.svg',
		},
		group: ['output'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description:
			"Send push notifications to the phones of your organization's users and follow their delivery",
		defaults: { name: 'Companion Push' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		// A second output "Capped" with Send's Cap per Person, as n8n's Switch node builds its outputs.
		outputs: `={{(${outputsOf})($parameter)}}`,
		credentials: [{ name: 'companionPushApi', required: true }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				default: 'notification',
				options: [
					{ name: 'Notification', value: 'notification' },
					{ name: 'User', value: 'user' },
				],
			},
			...notification.description,
			...user.description,
		],
	};

	methods = { listSearch: { searchUsers } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
