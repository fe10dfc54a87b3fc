/**
 * The Companion Push action node run through n8n-core's real WorkflowExecute (devkit/engine.cts)
 * against a sandbox, and what tests read from its output.
 */
import type { IDataObject, INodeExecutionData, IRun } from 'n8n-workflow';

import { registerNodeType, runNode } from '../../devkit/engine.cts';
import type { CredentialStore, NodeRunResult } from '../../devkit/engine.cts';
import { storeFor } from '../../devkit/fixtures.cts';
import { CompanionPush } from '../../nodes/CompanionPush/CompanionPush.node';
import type { Sandbox, SandboxCredential } from '../../sandbox/index.cts';
import { send, tokenFor } from './api.cts';

registerNodeType('companionPush', new CompanionPush());

export interface RunOptions {
	parameters: IDataObject;
	items?: IDataObject[];
	continueOnFail?: boolean;
	timezone?: string;
	/** The sandbox's primary credential before its first use unless given. */
	credentials?: CredentialStore;
}

/** Runs `Input -> Companion Push` in n8n's engine against the sandbox. */
export async function runOn(sandbox: Sandbox, options: RunOptions): Promise<NodeRunResult> {
	return await runNode({
		type: 'companionPush',
		credentials: options.credentials ?? storeFor(sandbox),
		items: options.items,
		parameters: options.parameters,
		continueOnFail: options.continueOnFail,
		timezone: options.timezone,
	});
}

export function jsonOf(items: INodeExecutionData[]): IDataObject[] {
	return items.map((item) => item.json);
}

/** The node's own context data (`this.getContext('node')`) as the run left it: what n8n saves with
 * the execution, and what a retry of it starts from. */
export function nodeContextOf(run: IRun, nodeName = 'Companion Push'): IDataObject | undefined {
	return run.data.executionData?.contextData[`node:${nodeName}`];
}

/** The input items each output item is paired with, as lists of indexes (n8n accepts one
 * pairing or a list of them). */
export function pairedOf(items: INodeExecutionData[]): number[][] {
	return items.map((item) => {
		const paired = item.pairedItem;
		if (paired === undefined) return [];
		const list = Array.isArray(paired) ? paired : [paired];
		return list.map((entry) => (typeof entry === 'number' ? entry : entry.item));
	});
}

/** Parameters of a Send with the given fields. */
export function sendParameters(fields: IDataObject = {}): IDataObject {
	return {
		resource: 'notification',
		operation: 'send',
		title: 'Shift change',
		body: 'Your shift starts at 9:00.',
		...fields,
	};
}

/** Registers sends straight at the sandbox's public API (plain fetch, not the node), as another
 * client of the organization would; returns their ids in order. */
export async function seedSends(
	sandbox: Sandbox,
	howMany: number,
	extra: IDataObject = {},
	credential: SandboxCredential = sandbox.orgs.primary,
): Promise<string[]> {
	const token = await tokenFor(sandbox, credential);
	const org = credential === sandbox.orgs.secondary ? sandbox.orgs.secondary : sandbox.orgs.primary;
	const ids: string[] = [];
	for (let index = 0; index < howMany; index++) {
		const sent = await send(sandbox, token, org.usersOfKind('onePhone', 1), {
			title: `Send ${index}`,
			...extra,
		});
		ids.push(sent.id);
	}
	return ids;
}

/** Real time passing, for what runs on the sandbox's real clock (deliveries, token lives). */
export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
