/**
 * The credential test run the way n8n's "Test" button runs it (n8n's CredentialsTester, for a
 * credential with a `test` request): a temporary node whose one property routes that request,
 * executed by n8n-core's RoutingNode in an ExecuteContext, so the request goes through n8n-core's
 * real request helpers (preAuthentication, authenticate, redirects as n8n handles them); a thrown
 * answer is matched against the test's `responseCode` rules as the tester does.
 */
import { ExecuteContext, RoutingNode } from 'n8n-core';
import { createEmptyRunExecutionData, Workflow } from 'n8n-workflow';
import type { IAuthenticateRuleResponseCode, INode, INodeType, INodeTypes } from 'n8n-workflow';

import { buildAdditionalData } from '../../devkit/engine.cts';
import type { CredentialStore } from '../../devkit/engine.cts';
import { CompanionPushApi } from '../../credentials/CompanionPushApi.credentials';

export interface CredentialTestResult {
	status: 'OK' | 'Error';
	message: string;
}

export async function testCredentialAsN8nDoes(
	store: CredentialStore,
): Promise<CredentialTestResult> {
	const testRequest = new CompanionPushApi().test;
	const nodeType = {
		description: {
			displayName: 'Temp',
			name: 'temp',
			group: ['transform'],
			version: 1,
			description: '',
			defaults: {},
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: 'companionPushApi', required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: testRequest.request },
					default: '',
				},
			],
		},
	} as unknown as INodeType;
	const nodeTypes = {
		getByName: () => nodeType,
		getByNameAndVersion: () => nodeType,
		getKnownTypes: () => ({}),
	} as unknown as INodeTypes;
	const stored = store.get();
	const node: INode = {
		id: 'temp',
		name: 'Temp-Node',
		type: 'temp',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: { companionPushApi: { id: stored.id, name: stored.name } },
	};
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	const inputData = { main: [[{ json: {} }]] };
	const context = new ExecuteContext(
		workflow,
		node,
		buildAdditionalData(store),
		'internal',
		createEmptyRunExecutionData(),
		0,
		[],
		inputData,
		{ node, data: {}, source: null } as never,
		[],
	);
	const credentialsDecrypted = {
		id: stored.id,
		name: stored.name,
		type: stored.type,
		data: structuredClone(stored.data),
	};
	try {
		await new RoutingNode(context, nodeType, credentialsDecrypted).runNode();
	} catch (error) {
		const status = (error as { cause?: { response?: { status?: number; statusText?: string } } })
			.cause?.response?.status;
		if (status !== undefined) {
			const rule = (testRequest.rules as IAuthenticateRuleResponseCode[] | undefined)?.find(
				(candidate) => candidate.type === 'responseCode' && candidate.properties.value === status,
			);
			if (rule) return { status: 'Error', message: rule.properties.message };
			if (status < 199 || status > 299)
				return { status: 'Error', message: `Received HTTP status code: ${status}` };
		}
		return { status: 'Error', message: (error as Error).message };
	}
	return { status: 'OK', message: 'Connection successful!' };
}
