/**
 * Shared helpers of the action node tests: a sandbox, a credential store holding its credential
 * the way n8n's database would, and `run` that executes the Companion Push node through n8n-core's
 * real WorkflowExecute (test/harness/engine.ts) and returns its output next to the request log.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { CompanionPush } from '../../nodes/CompanionPush/CompanionPush.node';
import { startSandbox } from '../../sandbox';
import type { LoggedRequest, Sandbox, SandboxCredential, SandboxOptions } from '../../sandbox';
import { CredentialStore, registerNodeType, runNode } from '../harness/engine';
import { send, tokenFor } from '../sandbox/helpers';
import type { NodeRunResult } from '../harness/engine';
import { ACTIVE_USERS, CANCEL, credentialData, DETAIL, REFRESH, SEND, SEND_LIST, USER_LIST } from '../harness/fixtures';

registerNodeType('companionPush', new CompanionPush());

export { ACTIVE_USERS, CANCEL, credentialData, DETAIL, REFRESH, SEND, SEND_LIST, USER_LIST };

/** A sandbox on a random port, on the real clock (the node compares times with Date.now()),
 * with deliveries settled quickly. */
export function sandboxFor(options: SandboxOptions = {}): Promise<Sandbox> {
	return startSandbox({ port: 0, clock: 'real', seedUsers: 60, deliveryMs: 20, ...options });
}

/** A credential store holding the credential as n8n keeps it before its first use: no token yet. */
export function storeFor(sandbox: Sandbox, credential: SandboxCredential = sandbox.orgs.primary): CredentialStore {
	const store = new CredentialStore();
	store.add(credentialData(sandbox, credential));
	return store;
}

export interface RunOptions {
	parameters: IDataObject;
	items?: IDataObject[];
	continueOnFail?: boolean;
	timezone?: string;
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

export function logOf(sandbox: Sandbox, endpoint?: string): LoggedRequest[] {
	return sandbox.requestLog().filter((entry) => endpoint === undefined || entry.endpoint === endpoint);
}

export function count(sandbox: Sandbox, endpoint: string): number {
	return sandbox.counts()[endpoint] ?? 0;
}

/** The bodies of the sends that reached the sandbox, in order. */
export function sentBodies(sandbox: Sandbox): IDataObject[] {
	return logOf(sandbox, SEND).map((entry) => entry.body as IDataObject);
}

/** A send the sandbox registered: its log names the send a request registered, even when the
 * answer was lost or the send is registered a moment later. */
export interface RegisteredSend {
	id: string;
	title: string;
	userIds: string[];
	scheduledAt?: string;
}

/** The sends the sandbox registered, in the order their requests came. */
export function registeredSends(sandbox: Sandbox): RegisteredSend[] {
	return logOf(sandbox, SEND)
		.filter((entry) => entry.notificationId !== undefined)
		.map((entry) => {
			const body = entry.body as IDataObject;
			const scheduledAt = body.scheduled_at as string | undefined;
			return { id: entry.notificationId!, title: String(body.title), userIds: body.target_user_ids as string[], ...(scheduledAt ? { scheduledAt } : {}) };
		});
}

/** How many registered sends reached each user. */
export function notificationsPerUser(sandbox: Sandbox): Map<string, number> {
	const perUser = new Map<string, number>();
	for (const send of registeredSends(sandbox)) for (const userId of send.userIds) perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
	return perUser;
}

/** Each of `userIds` got exactly one registered send, and nobody else got any. */
export function expectEachOnce(sandbox: Sandbox, userIds: string[]) {
	const perUser = notificationsPerUser(sandbox);
	expect(Object.fromEntries(userIds.map((userId) => [userId, perUser.get(userId) ?? 0]))).toEqual(
		Object.fromEntries(userIds.map((userId) => [userId, 1])),
	);
	expect([...perUser.keys()].sort()).toEqual([...userIds].sort());
}

/** No body nor query of any request carried a tenant_id (the spec: it must not be sent). */
export function expectNoTenantId(sandbox: Sandbox) {
	for (const entry of sandbox.requestLog()) {
		expect(JSON.stringify(entry.body ?? null)).not.toContain('tenant_id');
		expect(Object.keys(entry.query)).not.toContain('tenant_id');
	}
}

export function jsonOf(items: INodeExecutionData[]): IDataObject[] {
	return items.map((item) => item.json);
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

export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Parameters of a Send with the given fields. */
export function sendParameters(fields: IDataObject = {}): IDataObject {
	return { resource: 'notification', operation: 'send', title: 'Shift change', body: 'Your shift starts at 9:00.', ...fields };
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
		const sent = await send(sandbox, token, org.usersOfKind('onePhone', 1), { title: `Send ${index}`, ...extra });
		ids.push(sent.id);
	}
	return ids;
}
