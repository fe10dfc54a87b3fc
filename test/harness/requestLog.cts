/** What reached the sandbox, read from its request log and counts: how tests count effects. */
import type { IDataObject } from 'n8n-workflow';

import { SEND } from '../../devkit/endpoints.cts';
import type { LoggedRequest, Sandbox } from '../../sandbox/index.cts';

/** The logged requests, of one endpoint when given (a key of devkit/endpoints.cts). */
export function logOf(sandbox: Sandbox, endpoint?: string): LoggedRequest[] {
	return sandbox
		.requestLog()
		.filter((entry) => endpoint === undefined || entry.endpoint === endpoint);
}

export function count(sandbox: Sandbox, endpoint: string): number {
	return sandbox.counts()[endpoint] ?? 0;
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
