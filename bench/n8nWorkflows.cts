/**
 * The workflows the real-n8n suites import into n8n 2.41.1: chains of a Code node (the items) and
 * either this package's Companion Push node (Send) or n8n's own HTTP Request node built the way a
 * user builds the job without this package (a POST per item, `Authorization: Bearer <token>`
 * header, JSON body), all in one Manual Trigger workflow (n8n runs the chains one after the other);
 * and the ERP webhook example built with the HTTP Request node instead, for queue mode. Every
 * chain's sends carry a title of its own (how its requests are found in the sandbox's log).
 */
import { randomUUID } from 'node:crypto';

import { code, type Json, manualWorkflow, NODE_TYPE, type NodeSpec } from '../devkit/n8n/index.cts';
import { BODY, sendParameters } from './measure.cts';

/** The HTTP Request node's default version in n8n 2.41.1 (what a new node on the canvas gets). */
export const HTTP_REQUEST_VERSION = 4.5;

export interface ChainSpec {
	/** Unique in its workflow: the nodes are `Items <name>` and `Send <name>`. */
	name: string;
	/** Who makes the sends. */
	side: 'node' | 'httpRequest';
	/** One item per send, one recipient each. */
	userIds: string[];
	/** The node's Max Parallel Requests and Wait for Final Status (default: their defaults). */
	maxParallelRequests?: number;
	waitForFinalStatus?: boolean;
	/** Not a figure: it warms the process up (each `n8n execute` is a new one). */
	warmUp?: boolean;
}

/** Where the chains send: the credential (the node) or the URL and a token (HTTP Request). */
export interface ChainTarget {
	credentialId: string;
	credentialName: string;
	baseUrl: string;
	token: string;
}

export const titleOf = (chain: Pick<ChainSpec, 'name'>) => `Bench ${chain.name}`;
export const sendNodeName = (chain: Pick<ChainSpec, 'name'>) => `Send ${chain.name}`;

/** n8n's HTTP Request node at its defaults: POST, a header parameter, a JSON body (an expression). */
function httpRequestNode(name: string, url: string, token: string, jsonBody: string): NodeSpec {
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
			jsonBody,
			options: {},
		},
	};
}

function chainNodes(chain: ChainSpec, target: ChainTarget): NodeSpec[] {
	const items = code(
		`Items ${chain.name}`,
		`return ${JSON.stringify(chain.userIds.map((to) => ({ json: { to } })))};`,
	);
	const [name, title] = [sendNodeName(chain), titleOf(chain)];
	if (chain.side === 'httpRequest') {
		// The JSON body a user writes: the same message the node sends.
		const body = `={\n  "title": ${JSON.stringify(title)},\n  "body": ${JSON.stringify(BODY)},\n  "target_user_ids": [{{ JSON.stringify($json.to) }}]\n}`;
		return [
			items,
			httpRequestNode(name, `${target.baseUrl}/push-notification/send`, target.token, body),
		];
	}
	const options: Json = {};
	if (chain.maxParallelRequests !== undefined)
		options.maxParallelRequests = chain.maxParallelRequests;
	if (chain.waitForFinalStatus) options.waitForFinalStatus = true;
	const push: NodeSpec = {
		name,
		type: NODE_TYPE,
		typeVersion: 1,
		parameters: sendParameters('={{ $json.to }}', options, title),
		credentials: { companionPushApi: { id: target.credentialId, name: target.credentialName } },
	};
	return [items, push];
}

/** Manual Trigger, then every chain (run one after the other, in this order). */
export function benchWorkflow(id: string, chains: ChainSpec[], target: ChainTarget): Json {
	return manualWorkflow(
		id,
		`Bench: ${chains.length} chains, Companion Push and HTTP Request nodes`,
		chains.map((chain) => chainNodes(chain, target)),
	);
}

/**
 * The ERP webhook example (examples/erp-event-to-push.json) built without this package: the same
 * webhook, check of the event and answers to the ERP, then an HTTP Request node POSTing the same message (the example's title and body
 * templates, the user, the deep link the node would send) with a bearer token header and the
 * example's Retry On Fail settings. No Idempotency Key (the HTTP Request node has none).
 */
export function erpWithHttpRequest(
	example: Json,
	id: string,
	webhookPath: string,
	url: string,
	token: string,
): Json {
	const push = (example.nodes as Json[]).find((node) => node.type === NODE_TYPE)!;
	/** A template such as `=Order {{ $json.body.orderId }}` as a JavaScript string expression. */
	const expression = (template: string) =>
		JSON.stringify(String(template).replace(/^=/, '')).replace(
			/\{\{\s*(.*?)\s*\}\}/g,
			'" + ($1) + "',
		);
	const body =
		'={{ JSON.stringify({\n' +
		`  title: ${expression(push.parameters.title)},\n` +
		`  body: ${expression(push.parameters.body)},\n` +
		'  target_user_ids: [$json.body.userId],\n' +
		"  deeplink: $json.body.announcementId ? 'companionapp://announcement/' + $json.body.announcementId : 'companionapp://home'\n" +
		'}) }}';
	const { retryOnFail, maxTries, waitBetweenTries, position } = push;
	// The example's other nodes as they are (its Webhook, the check of the event and the answers to
	// the ERP), the Companion Push Send replaced by the HTTP Request node under the same name.
	const nodes = (example.nodes as Json[])
		.filter((node) => node.type !== 'n8n-nodes-base.stickyNote')
		.map((node) => {
			if (node === push)
				return {
					...httpRequestNode(push.name, url, token, body),
					retryOnFail,
					maxTries,
					waitBetweenTries,
					id: randomUUID(),
					position,
				};
			if (node.type === 'n8n-nodes-base.webhook')
				return {
					...node,
					id: randomUUID(),
					webhookId: randomUUID(),
					parameters: { ...node.parameters, path: webhookPath },
				};
			return { ...node, id: randomUUID() };
		});
	return {
		id,
		name: `${example.name} (HTTP Request node)`,
		nodes,
		connections: structuredClone(example.connections),
		settings: example.settings,
		active: false,
		pinData: {},
	};
}
