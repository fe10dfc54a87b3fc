import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { readCredentialsAnew } from '../transport';
import * as notification from './notification/notification.resource';
import * as user from './user/user.resource';

type OperationModule = { execute: (this: IExecuteFunctions) => Promise<INodeExecutionData[]> };

const resources: Record<string, Record<string, OperationModule>> = {
	notification: notification.operations,
	user: user.operations,
};

/** Reads the resource and operation and hands the run to that operation's file. */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const handler = resources[resource]?.[operation];
	readCredentialsAnew(this);
	if (!handler) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operation}" is not known for "${resource}"`,
		);
	}
	return [await handler.execute.call(this)];
}
