/**
 * The example workflows as files (examples/*.json): what they hold is the thing checked here.
 * - A trigger anyone can call once published (a Webhook, a Form Trigger) asks for a credential, one
 *   of those `npm start` makes with a secret of its own (devkit/exampleTriggers.cts).
 * - The ERP example checks its event before it sends: every way from its Webhook to its Send passes
 *   the check, and the check's other way answers the ERP with a 4xx and sends nothing. The check and
 *   the answer are evaluated with n8n's own expression engine and filter, as n8n's If node and
 *   Respond to Webhook run them.
 * - The safety alert example escalates only its own alerts: the send IDs its Send got back are kept
 *   in a data table, and every way from its Companion Push Trigger to a step that notifies passes
 *   the check that the notification is one of them (the API keeps no mark of who made a send, so a
 *   title proves nothing).
 * Their run in a real n8n, published, called with and without the credential, a foreign alert
 * left alone: test/e2e/examples.e2e.cts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { executeFilter, Workflow } from 'n8n-workflow';
import type { FilterValue, INode, INodeTypes } from 'n8n-workflow';

import {
	ERP_WEBHOOK_HEADER,
	erpTryCommand,
	erpWebhookHeaders,
	exampleTriggerCredentialEntries,
	keptExampleTriggerSecrets,
	newExampleTriggerSecrets,
} from '../../devkit/exampleTriggers.cts';
import { exampleWorkflows } from '../../devkit/n8n/imports.cts';

type Json = Record<string, any>;

/** Triggers anyone who finds their URL can call once published, and the credential type each of
 * their authentication methods asks for (n8n-nodes-base 1.123 and 2.41: Webhook v2, Form Trigger v2). */
const PUBLIC_TRIGGERS: Record<string, Record<string, string>> = {
	'n8n-nodes-base.webhook': {
		basicAuth: 'httpBasicAuth',
		headerAuth: 'httpHeaderAuth',
		jwtAuth: 'jwtAuth',
	},
	'n8n-nodes-base.formTrigger': { basicAuth: 'httpBasicAuth' },
};
/** Triggers nobody outside n8n can start. */
const CLOSED_TRIGGERS = [
	'n8n-nodes-base.manualTrigger',
	'n8n-nodes-base.scheduleTrigger',
	'n8n-nodes-companion-push.companionPushTrigger',
];
const SEND_TYPE = 'n8n-nodes-companion-push.companionPush';
const TRIGGER_TYPE = 'n8n-nodes-companion-push.companionPushTrigger';
const DATA_TABLE_TYPE = 'n8n-nodes-base.dataTable';
/** Nodes that notify someone: a Companion Push Send, an e-mail. */
const NOTIFIES = [SEND_TYPE, 'n8n-nodes-base.emailSend'];

const example = (file: string): Json => {
	const found = exampleWorkflows().find((entry) => entry.file === file);
	if (!found) throw new Error(`No example ${file}`);
	return found.workflow;
};
const nodeOfType = (workflow: Json, type: string): Json => {
	const nodes = workflow.nodes.filter((node: Json) => node.type === type);
	if (nodes.length !== 1) throw new Error(`${workflow.name} has ${nodes.length} nodes of ${type}`);
	return nodes[0];
};

/** The nodes reachable from `start` through the connections, the outputs `skip` names left out. */
function reachable(
	workflow: Json,
	start: string,
	skip: (node: string, output: number) => boolean = () => false,
): Set<string> {
	const seen = new Set<string>([start]);
	const queue = [start];
	while (queue.length > 0) {
		const name = queue.shift()!;
		const outputs: Json[][] = workflow.connections[name]?.main ?? [];
		outputs.forEach((targets, output) => {
			if (skip(name, output)) return;
			for (const { node } of targets ?? []) {
				if (seen.has(node)) continue;
				seen.add(node);
				queue.push(node);
			}
		});
	}
	return seen;
}

/** The `$json.body` fields an expression reads by name. */
const bodyFieldsIn = (text: string): string[] =>
	[...text.matchAll(/\$json\.body\??\.(\w+)/g)].map((match) => match[1]);

/**
 * Evaluates a node's parameter for one webhook item with n8n's own expression engine (the
 * workflow's nodes need no types for that).
 */
function evaluate(workflow: Json, nodeName: string, value: unknown, body: unknown): any {
	const nodeTypes = {
		getByName: () => undefined,
		getByNameAndVersion: () => undefined,
		getKnownTypes: () => ({}),
	} as unknown as INodeTypes;
	const engine = new Workflow({
		id: workflow.id,
		nodes: workflow.nodes as INode[],
		connections: workflow.connections,
		active: false,
		nodeTypes,
		settings: {},
	});
	const items = [{ json: { headers: {}, params: {}, query: {}, body } as Json }];
	return engine.expression.getParameterValue(
		value as never,
		null,
		0,
		0,
		nodeName,
		items as never,
		'internal',
		{},
	);
}

describe('the example workflows', () => {
	test('every trigger anyone can call asks for a credential that npm start makes with its own secret', () => {
		const made = exampleTriggerCredentialEntries(newExampleTriggerSecrets()) as Json[];
		const guarded: string[][] = [];
		for (const { file, workflow } of exampleWorkflows()) {
			for (const node of workflow.nodes as Json[]) {
				const methods = PUBLIC_TRIGGERS[node.type];
				if (!methods) {
					// A trigger of another kind must be placed in one of the two lists first.
					if (/(trigger|\.webhook)$/i.test(node.type)) expect(CLOSED_TRIGGERS).toContain(node.type);
					continue;
				}
				const method = node.parameters.authentication ?? 'none';
				expect([file, node.name, method]).toEqual([
					file,
					node.name,
					expect.not.stringMatching(/^none$/),
				]);
				const credentialType = methods[method];
				expect([file, node.name, credentialType]).toEqual([file, node.name, expect.any(String)]);
				const reference = node.credentials?.[credentialType];
				expect(
					made.find(
						(entry) =>
							entry.type === credentialType &&
							entry.id === reference?.id &&
							entry.name === reference?.name,
					),
				).toBeDefined();
				guarded.push([file, node.name, method]);
			}
		}
		expect(guarded).toEqual([
			['erp-event-to-push.json', 'ERP Event', 'headerAuth'],
			['safety-alert-escalation.json', 'Send the Alert', 'basicAuth'],
		]);
	});

	test('the trigger secrets: new for each folder, kept there readable by its owner only, the same at the next start, never printed', () => {
		const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-secrets-'));
		try {
			const first = keptExampleTriggerSecrets(folder);
			const again = keptExampleTriggerSecrets(folder);
			expect([again.erpWebhookSecret, again.alertFormPassword]).toEqual([
				first.erpWebhookSecret,
				first.alertFormPassword,
			]);
			expect(first.erpWebhookSecret).not.toBe(first.alertFormPassword);
			for (const file of Object.values(first.files!)) {
				expect(fs.statSync(file).mode & 0o777).toBe(0o600);
			}
			const other = newExampleTriggerSecrets();
			expect(other.erpWebhookSecret).not.toBe(first.erpWebhookSecret);
			expect(first.erpWebhookSecret.length).toBeGreaterThanOrEqual(32);
			expect(erpWebhookHeaders(first)).toEqual({ [ERP_WEBHOOK_HEADER]: first.erpWebhookSecret });
			// The printed command reads the secret from its file: the console never shows it.
			const command = erpTryCommand('http://127.0.0.1:5678', first, 'u1');
			expect(command).not.toContain(first.erpWebhookSecret);
			expect(command).toContain(
				`-H "${ERP_WEBHOOK_HEADER}: $(cat '${first.files!.erpWebhookSecret}')"`,
			);
			// No example holds a secret: the credentials are referenced by id only.
			for (const { workflow } of exampleWorkflows())
				expect(JSON.stringify(workflow)).not.toContain(first.erpWebhookSecret);
		} finally {
			fs.rmSync(folder, { recursive: true, force: true });
		}
	});

	describe('ERP event to push: the event is checked before anything is sent', () => {
		const erp = example('erp-event-to-push.json');
		const webhook = () => nodeOfType(erp, 'n8n-nodes-base.webhook');
		const check = () => nodeOfType(erp, 'n8n-nodes-base.if');
		const send = () => nodeOfType(erp, SEND_TYPE);
		const answers = () =>
			erp.nodes.filter((node: Json) => node.type === 'n8n-nodes-base.respondToWebhook');

		test('every way from the Webhook to the Send passes the check; its other way answers 4xx and sends nothing', () => {
			// The answer waits for the check (a Respond to Webhook node answers).
			expect(webhook().parameters.responseMode).toBe('responseNode');
			const skipPassed = (node: string, output: number) => node === check().name && output === 0;
			expect(reachable(erp, webhook().name).has(send().name)).toBe(true);
			expect(reachable(erp, webhook().name, skipPassed).has(send().name)).toBe(false);
			// The check's "false" way: an answer with a 4xx, and no Send after it.
			const refused = erp.connections[check().name].main[1].map((target: Json) => target.node);
			const refusal = answers().find((node: Json) => refused.includes(node.name));
			expect(refusal.parameters.options.responseCode).toBeGreaterThanOrEqual(400);
			expect(refusal.parameters.options.responseCode).toBeLessThan(500);
			expect(reachable(erp, refusal.name).has(send().name)).toBe(false);
		});

		test("the check covers every event field the Send's title, body, recipients and Idempotency Key read", () => {
			const { title, body, userIds, options } = send().parameters;
			const read = new Set(bodyFieldsIn([title, body, userIds, options.idempotencyKey].join(' ')));
			const checked = new Set(bodyFieldsIn(JSON.stringify(check().parameters.conditions)));
			expect([...read].sort()).toEqual(['orderId', 'status', 'userId']);
			expect([...checked].sort()).toEqual([...read].sort());
		});

		test.each([
			['every field', { orderId: '1042', status: 'shipped', userId: 'u1' }, []],
			['a number as the order', { orderId: 1042, status: 'shipped', userId: 'u1' }, []],
			[
				'order_id instead of orderId',
				{ order_id: '1042', status: 'shipped', userId: 'u1' },
				['orderId'],
			],
			['an empty status', { orderId: '1042', status: '', userId: 'u1' }, ['status']],
			['a blank user', { orderId: '1042', status: 'shipped', userId: '  ' }, ['userId']],
			['a null user', { orderId: '1042', status: 'shipped', userId: null }, ['userId']],
			['no body', undefined, ['orderId', 'status', 'userId']],
			['a text body', 'orderId=1042', ['orderId', 'status', 'userId']],
		])('as n8n runs the check: %s', (_name, body, missing) => {
			const conditions = evaluate(erp, check().name, check().parameters.conditions, body);
			const passes = executeFilter(conditions as FilterValue, { itemIndex: 0 });
			expect(passes).toBe(missing.length === 0);
			if (passes) {
				// What the Send then makes of it: no part of its key or title is empty.
				const key = evaluate(erp, send().name, send().parameters.options.idempotencyKey, body);
				expect(
					String(key)
						.split(':')
						.every((part) => part.trim() !== ''),
				).toBe(true);
				return;
			}
			const refused = erp.connections[check().name].main[1][0].node;
			const answer = evaluate(
				erp,
				refused,
				answers().find((node: Json) => node.name === refused).parameters.responseBody,
				body,
			);
			expect(answer.missing).toEqual(missing);
			for (const field of missing) expect(answer.error).toContain(field);
			expect(answer.error).toContain('Nothing was sent');
		});
	});
	describe('Safety alert with escalation: the ladder follows only the alerts its form sent', () => {
		const alert = example('safety-alert-escalation.json');
		const dataTableNodes = (operation: string) =>
			alert.nodes.filter(
				(node: Json) => node.type === DATA_TABLE_TYPE && node.parameters.operation === operation,
			);

		test("the trigger's filter is not a title: every way from it to a step that notifies passes the check against the alert's own send IDs", () => {
			const trigger = nodeOfType(alert, TRIGGER_TYPE);
			const notifying = alert.nodes
				.filter((node: Json) => NOTIFIES.includes(node.type))
				.map((node: Json) => node.name);
			const [check] = dataTableNodes('rowExists');
			const fromTrigger = reachable(alert, trigger.name);
			expect(notifying.filter((name: string) => fromTrigger.has(name)).length).toBeGreaterThan(3);
			const pastCheck = reachable(alert, trigger.name, (node) => node === check.name);
			expect(notifying.filter((name: string) => pastCheck.has(name))).toEqual([]);
			// The check: a row of the alert register with this notification's ID.
			expect(check.parameters.filters.conditions).toEqual([
				{ keyName: 'notificationId', keyValue: '={{ $json.notificationId }}' },
			]);
		});

		test("the register holds the IDs the alert's Send got back, written right after it sends, in the table the check reads", () => {
			const form = nodeOfType(alert, 'n8n-nodes-base.formTrigger');
			const [check] = dataTableNodes('rowExists');
			const [insert] = dataTableNodes('insert');
			const [create] = dataTableNodes('create');
			const send = alert.nodes.find(
				(node: Json) => node.type === SEND_TYPE && reachable(alert, form.name).has(node.name),
			);
			expect(send.parameters.audience).toBe('allUsers');
			// Send -> make the table when missing -> insert: the insert sees each send's item.
			expect(alert.connections[send.name].main[0].map((target: Json) => target.node)).toEqual([
				create.name,
			]);
			expect(alert.connections[create.name].main[0].map((target: Json) => target.node)).toEqual([
				insert.name,
			]);
			expect(insert.parameters.columns.value).toEqual({
				notificationId: `={{ $('${send.name}').item.json.id }}`,
			});
			const table = create.parameters.tableName;
			expect(create.parameters.options.createIfNotExists).toBe(true);
			expect(create.parameters.columns.column).toEqual([
				{ name: 'notificationId', type: 'string' },
			]);
			for (const node of [insert, check])
				expect(node.parameters.dataTableId).toEqual({ __rl: true, mode: 'name', value: table });
		});
	});
});
