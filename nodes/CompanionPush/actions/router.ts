import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { readCredentialsAnew } from '../transport';
import * as notification from './notification/notification.resource';
import * as user from './user/user.resource';

/** An operation's run: its items (one output), or, for one with several outputs, each output's. */
type OperationModule =
	| { execute: (this: IExecuteFunctions) => Promise<INodeExecutionData[]> }
	| { executeToOutputs: (this: IExecuteFunctions) => Promise<INodeExecutionData[][]> };

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
	if ('executeToOutputs' in handler) return await handler.executeToOutputs.call(this);
	return [await handler.execute.call(this)];
}
