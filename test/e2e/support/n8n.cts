/**
 * A real n8n for the end-to-end tests: a fresh user folder with the packed package installed the
 * way n8n installs a community package, a credential pointing at the in-process sandbox,
 * generated workflows, runs with `n8n execute --rawOutput`, and what each node asked the sandbox.
 * What drives n8n itself is devkit/n8n (npm start and the benchmark use it too).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';

import {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	credentialEntry,
	N8nHome as DevkitN8nHome,
	NODE_TYPE,
	TRIGGER_TYPE,
	type Json,
	type NodeRun,
	type NodeSpec,
	type RunResult,
	type RuntimeLine,
} from '../../../devkit/n8n/index.cts';
import {
	erpWebhookHeaders,
	exampleTriggerCredentialEntries,
	newExampleTriggerSecrets,
} from '../../../devkit/exampleTriggers.cts';
import type { LoggedRequest, Sandbox, SandboxOrg } from '../../../sandbox/index.cts';
// The sandbox's API with plain fetch, as the unit tests call it (not the whole harness: it loads n8n-core).
import { send, tokenFor } from '../../harness/api.cts';

/** The `npm pack` tarball made by the global setup. */
export function packedTarball(): string {
	const tarball = process.env.COMPANION_PUSH_E2E_TARBALL;
	if (!tarball || !fs.existsSync(tarball)) {
		throw new Error(
			'No packed tarball: run the end-to-end tests with `npx jest -c jest.e2e.config.js` (its global setup packs the package).',
		);
	}
	return tarball;
}

/**
 * The requests the sandbox logged while a node ran (the sandbox runs on the real clock): each
 * logged request belongs to the node run that started last before it arrived (nodes run one after
 * the other).
 */
export function requestsDuring(sandbox: Sandbox, result: RunResult, node: string): LoggedRequest[] {
	const runData = (result.run.data?.resultData?.runData ?? {}) as Record<string, NodeRun[]>;
	const starts = Object.entries(runData)
		.flatMap(([name, runs]) => runs.map((run) => ({ name, start: run.startTime })))
		.sort((a, b) => a.start - b.start);
	const [first, last] = result.window(node);
	return sandbox.requestLog().filter((request) => {
		if (request.time < first || request.time > last) return false;
		const owner = starts.filter((run) => run.start <= request.time).pop();
		return owner?.name === node;
	});
}

/** Short form of a logged request: `GET /user/list 200`. */
export const brief = (request: LoggedRequest) =>
	`${request.method} ${request.path} ${request.status}`;

/** The credential of the sandbox's secondary org (another organization, with sends of its own). */
export const SECONDARY_CREDENTIAL = {
	id: 'cpSandboxSecondary',
	name: 'Companion Push secondary org',
};

/** The secrets of the examples' ERP webhook and alert form in this test file's n8n: new for each file. */
export const EXAMPLE_SECRETS = newExampleTriggerSecrets();
/** The header the ERP example's webhook asks for (its copies in the tests too). */
export const ERP_HEADERS = erpWebhookHeaders(EXAMPLE_SECRETS);

/** What a user types into the safety alert's form (it comes empty): headline, instructions. */
export const ALERT_FORM_ANSWERS = [
	'leave building B',
	'Gas leak in building B. Leave by the nearest exit now and gather at assembly point 3.',
];

/**
 * Credential entries for `n8n import:credentials`: the sandbox's primary org (id
 * cpSandboxCredential), its secondary org when asked, and the two that guard the examples' ERP
 * webhook and alert form (with EXAMPLE_SECRETS), so that every example imports as `npm start` has it.
 */
export function sandboxCredentials(sandbox: Sandbox, { secondaryOrg = false } = {}): object[] {
	const entry = (
		{ clientId, clientSecret, refreshToken }: SandboxOrg,
		ids?: { id: string; name: string },
	) => credentialEntry({ baseUrl: sandbox.baseUrl, clientId, clientSecret, refreshToken }, ids);
	return [
		entry(sandbox.orgs.primary),
		...(secondaryOrg ? [entry(sandbox.orgs.secondary, SECONDARY_CREDENTIAL)] : []),
		...exampleTriggerCredentialEntries(EXAMPLE_SECRETS),
	];
}

/**
 * A fresh, isolated n8n user folder with the packed package installed as a community package, run by
 * the runtime of an n8n release line (default 2.x; '1.x' is n8n 1.123.81, installed by the global
 * setup). Its runs are what `n8n execute --rawOutput` printed, with that output kept (the tests check
 * that no secret shows in it).
 */
export class N8nHome extends DevkitN8nHome {
	static async create({ line = '2.x' }: { line?: RuntimeLine } = {}): Promise<N8nHome> {
		return (await super.create({
			tarball: packedTarball(),
			line,
			runsFrom: 'output',
			runTimeoutMs: 240_000,
		})) as N8nHome;
	}

	/**
	 * Imports the Companion Push API credential (id cpSandboxCredential) for the sandbox's primary org,
	 * the one of its secondary org too when asked (SECONDARY_CREDENTIAL), the examples' trigger
	 * credentials (see sandboxCredentials), and any `more` credential entries: one CLI call.
	 */
	async useSandbox(
		sandbox: Sandbox,
		{ secondaryOrg = false, more = [] }: { secondaryOrg?: boolean; more?: object[] } = {},
	): Promise<void> {
		await this.importCredentials([...sandboxCredentials(sandbox, { secondaryOrg }), ...more]);
	}
}

// ---------------------------------------------------------------------------------------------
// Workflow builders
// ---------------------------------------------------------------------------------------------

const credentials = { companionPushApi: { id: CREDENTIAL_ID, name: CREDENTIAL_NAME } };

/** A Companion Push node. */
export function push(name: string, parameters: Json, extra: Partial<NodeSpec> = {}): NodeSpec {
	return { name, type: NODE_TYPE, typeVersion: 1, parameters, credentials, ...extra };
}

/** A Wait node that waits in the running execution (under 65 s n8n does not park it). */
export function wait(name: string, seconds: number): NodeSpec {
	return {
		name,
		type: 'n8n-nodes-base.wait',
		typeVersion: 1.1,
		parameters: { amount: seconds, unit: 'seconds' },
		webhookId: randomUUID(),
	};
}

/**
 * A workflow whose Companion Push Trigger ('Settled Or Failed') polls every minute for settled sends
 * and failed deliveries (with `tag` in their title, when one is given), one item per event, into a
 * No Op ('Received'). `credential` is the test credential unless another is named.
 */
export function triggerWorkflow(
	id: string,
	tag: string,
	credential = credentials.companionPushApi,
): Json {
	return {
		id,
		name: 'e2e: trigger',
		nodes: [
			{
				id: 'a0c4f6a2-5d0e-4f53-9a57-3e9d2b7c0001',
				name: 'Settled Or Failed',
				type: TRIGGER_TYPE,
				typeVersion: 1,
				position: [0, 0],
				parameters: {
					pollTimes: { item: [{ mode: 'everyMinute' }] },
					events: ['notificationSettled', 'deliveryFailed'],
					output: 'perEvent',
					filters: tag ? { titleContains: tag } : {},
					options: {},
				},
				credentials: { companionPushApi: credential },
			},
			{
				id: 'a0c4f6a2-5d0e-4f53-9a57-3e9d2b7c0002',
				name: 'Received',
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [260, 0],
				parameters: {},
			},
		],
		connections: {
			'Settled Or Failed': { main: [[{ node: 'Received', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
		active: false,
		pinData: {},
	};
}

/** A send made straight against the sandbox API (as another system of the organization would); returns its id. */
export async function sendFromOutside(
	sandbox: Sandbox,
	title: string,
	userIds: string[],
	org: SandboxOrg = sandbox.orgs.primary,
): Promise<string> {
	const token = await tokenFor(sandbox, org);
	return (await send(sandbox, token, userIds, { title, body: 'Sent from outside n8n' })).id;
}
