/** What reached the sandbox, read from its request log and counts: how tests count effects. */
import type { IDataObject } from 'n8n-workflow';

import { CANCEL, SEND } from '../../devkit/endpoints.cts';
import { isListProbe } from '../../nodes/CompanionPush/transport/safeSend/probe';
import type { LoggedRequest, Sandbox } from '../../sandbox/index.cts';

/** Whether a logged request is the send of a list probe (transport/safeSend/probe.ts): a send to
 * nobody a lookup made. */
export function isProbeSend(entry: LoggedRequest): boolean {
	return (
		entry.endpoint === SEND &&
		typeof entry.body === 'object' &&
		entry.body !== null &&
		isListProbe(entry.body)
	);
}

/** The entries of `log` that list probes made: their sends, and their cancels. */
function probesIn(log: LoggedRequest[]): Set<LoggedRequest> {
	const probes = log.filter(isProbeSend);
	const cancels = new Set(
		probes.map((entry) => `/push-notification/${entry.notificationId}/cancel`),
	);
	return new Set([
		...probes,
		...log.filter((entry) => entry.endpoint === CANCEL && cancels.has(entry.path)),
	]);
}

/** The requests of list probes, of one endpoint when given. */
export function probeRequests(sandbox: Sandbox, endpoint?: string): LoggedRequest[] {
	const log = sandbox.requestLog();
	const probes = probesIn(log);
	return log.filter(
		(entry) => probes.has(entry) && (endpoint === undefined || entry.endpoint === endpoint),
	);
}

/** The logged requests, of one endpoint when given (a key of devkit/endpoints.cts), list probes left
 * out (probeRequests): they notify nobody. */
export function logOf(sandbox: Sandbox, endpoint?: string): LoggedRequest[] {
	const log = sandbox.requestLog();
	const probes = probesIn(log);
	return log.filter(
		(entry) => !probes.has(entry) && (endpoint === undefined || entry.endpoint === endpoint),
	);
}

/** How many requests of `endpoint` the sandbox saw, list probes left out. */
export function count(sandbox: Sandbox, endpoint: string): number {
	const all = sandbox.counts()[endpoint] ?? 0;
	return endpoint === SEND || endpoint === CANCEL
		? all - probeRequests(sandbox, endpoint).length
		: all;
}

/** The bodies of the sends that reached the sandbox, in order. */
export function sentBodies(sandbox: Sandbox): IDataObject[] {
	return logOf(sandbox, SEND).map((entry) => entry.body as IDataObject);
}

/** No body nor query of any request carried a tenant_id (the spec: it must not be sent). */
export function expectNoTenantId(sandbox: Sandbox) {
	for (const entry of sandbox.requestLog()) {
		expect(JSON.stringify(entry.body ?? null)).not.toContain('tenant_id');
		expect(Object.keys(entry.query)).not.toContain('tenant_id');
	}
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
			return {
				id: entry.notificationId!,
				title: String(body.title),
				userIds: body.target_user_ids as string[],
				...(scheduledAt ? { scheduledAt } : {}),
			};
		});
}

/** How many registered sends reached each user. */
export function notificationsPerUser(sandbox: Sandbox): Map<string, number> {
	const perUser = new Map<string, number>();
	for (const send of registeredSends(sandbox))
		for (const userId of send.userIds) perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
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
