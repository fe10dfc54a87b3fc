/**
 * What the real-n8n benchmark cases run in n8n 2.41.1: chains of a Code node (the items) and either
 * this package's Companion Push node (Send) or n8n's own HTTP Request node built the way a user
 * builds the job without this package (POST per item, `Authorization: Bearer <token>` header, JSON
 * body), all in one Manual Trigger workflow (n8n runs the chains one after the other); and the ERP
 * webhook example built with the HTTP Request node instead, for queue mode. Every chain's sends
 * carry a title of its own (how its requests are found in the sandbox's log).
 */
import { randomUUID } from 'node:crypto';

import { code, type Json, manualWorkflow, NODE_TYPE, type NodeSpec } from '../devkit/n8n';
import { BODY } from './cases';

/** The HTTP Request node's default version in n8n 2.41.1 (what a new node on the canvas gets). */
export const HTTP_REQUEST_VERSION = 4.5;

export type Scheme = 'http' | 'https';

/** Who makes the sends of a chain. */
export type ChainSide = 'node' | 'httpRequest';

export interface ChainSpec {
	/** Unique in its workflow: the nodes are `Items <name>` and `Send <name>`. */
	name: string;
	side: ChainSide;
	scheme: Scheme;
	/** One item per send, one recipient each. */
	userIds: string[];
	/** The node's Max Parallel Requests (default: its default). */
	maxParallelRequests?: number;
	/** The node's Wait for Final Status. */
	waitForFinalStatus?: boolean;
	/** Not a figure: it warms the process up (each `n8n execute` is a new one). */
	warmUp?: boolean;
}

/** Where a chain's side sends: the credential's id (the node) or the URL and token (HTTP Request). */
export interface ChainTarget {
	credentialId: string;
	credentialName: string;
	baseUrl: string;
	token: string;
}

export const titleOf = (chain: Pick<ChainSpec, 'name'>) => `Bench ${chain.name}`;
export const sendNodeName = (chain: Pick<ChainSpec, 'name'>) => `Send ${chain.name}`;

/** The JSON body a user writes in the HTTP Request node: the same message the node sends. */
const jsonBody = (title: string, recipients: string) =>
	`={\n  "title": ${JSON.stringify(title)},\n  "body": ${JSON.stringify(BODY)},\n  "target_user_ids": ${recipients}\n}`;

/** n8n's HTTP Request node at its defaults: POST, a header parameter, a JSON body. */
export function httpRequestNode(name: string, url: string, token: string, body: string): NodeSpec {
	return {
		name,
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: HTTP_REQUEST_VERSION,
		parameters: {
			method: 'POST',
			url,
			sendHeaders: true,
			headerParameters: { parameters: [{ name: 'Authorization', value: `Bearer ${token}` }] },
			sendBody: true,
			specifyBody: 'json',
			jsonBody: body,
			options: {},
		},
	};
}

/** The Companion Push node: Send, one send per item, its other options at their defaults unless given. */
export function pushSendNode(name: string, target: Pick<ChainTarget, 'credentialId' | 'credentialName'>, title: string, userIds: string, options: Json = {}): NodeSpec {
	return {
		name,
		type: NODE_TYPE,
		typeVersion: 1,
		parameters: { resource: 'notification', operation: 'send', title, body: BODY, audience: 'userIds', userIds, sendMode: 'perItem', options },
		credentials: { companionPushApi: { id: target.credentialId, name: target.credentialName } },
	};
}

function chainNodes(chain: ChainSpec, target: ChainTarget): NodeSpec[] {
	const items = code(`Items ${chain.name}`, `return ${JSON.stringify(chain.userIds.map((to) => ({ json: { to } })))};`);
	const title = titleOf(chain);
	if (chain.side === 'httpRequest') {
		return [items, httpRequestNode(sendNodeName(chain), `${target.baseUrl}/push-notification/send`, target.token, jsonBody(title, '[{{ JSON.stringify($json.to) }}]'))];
	}
	const options: Json = {};
	if (chain.maxParallelRequests !== undefined) options.maxParallelRequests = chain.maxParallelRequests;
	if (chain.waitForFinalStatus) options.waitForFinalStatus = true;
	return [items, pushSendNode(sendNodeName(chain), target, title, '={{ $json.to }}', options)];
}

/** Manual Trigger, then every chain (run one after the other, in this order). */
export function benchWorkflow(id: string, chains: ChainSpec[], targets: Record<Scheme, ChainTarget>): Json {
	return manualWorkflow(
		id,
		`Bench: ${chains.length} chains, Companion Push and HTTP Request nodes`,
		chains.map((chain) => chainNodes(chain, targets[chain.scheme])),
	);
}

/**
 * The ERP webhook example (examples/erp-event-to-push.json) built without this package: the same
 * webhook, then an HTTP Request node POSTing the same message (the example's title and body
 * templates, the user, the deep link the node would send) with a bearer token header, with the
 * example's Retry On Fail settings. No Idempotency Key (the HTTP Request node has none): a
 * redelivered event notifies again.
 */
export function erpWithHttpRequest(example: Json, id: string, webhookPath: string, url: string, token: string): Json {
	const webhook = (example.nodes as Json[]).find((node) => node.type === 'n8n-nodes-base.webhook')!;
	const push = (example.nodes as Json[]).find((node) => node.type === NODE_TYPE)!;
	/** A template such as `=Order {{ $json.body.orderId }}` as a JavaScript string expression. */
	const expression = (template: string) => JSON.stringify(String(template).replace(/^=/, '')).replace(/\{\{\s*(.*?)\s*\}\}/g, '" + ($1) + "');
	const body =
		'={{ JSON.stringify({\n' +
		`  title: ${expression(push.parameters.title)},\n` +
		`  body: ${expression(push.parameters.body)},\n` +
		'  target_user_ids: [$json.body.userId],\n' +
		"  deeplink: $json.body.announcementId ? 'companionapp://announcement/' + $json.body.announcementId : 'companionapp://home'\n" +
		'}) }}';
	const http = {
		...httpRequestNode('Notify the User', url, token, body),
		retryOnFail: push.retryOnFail,
		maxTries: push.maxTries,
		waitBetweenTries: push.waitBetweenTries,
	};
	return {
		id,
		name: `${example.name} (HTTP Request node)`,
		nodes: [
			{ ...webhook, id: randomUUID(), webhookId: randomUUID(), parameters: { ...webhook.parameters, path: webhookPath } },
			{ ...http, id: randomUUID(), position: push.position },
		],
		connections: { [webhook.name]: { main: [[{ node: 'Notify the User', type: 'main', index: 0 }]] } },
		settings: example.settings,
		active: false,
		pinData: {},
	};
}
