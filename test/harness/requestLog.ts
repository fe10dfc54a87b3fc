/** What reached the sandbox, read from its request log and counts: how tests count effects. */
import type { IDataObject } from 'n8n-workflow';

import { SEND } from '../../devkit/endpoints';
import type { LoggedRequest, Sandbox } from '../../sandbox';

/** The logged requests, of one endpoint when given (a key of devkit/endpoints.ts). */
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

/** No body nor query of any request carried a tenant_id (the spec: it must not be sent). */
export function expectNoTenantId(sandbox: Sandbox) {
	for (const entry of sandbox.requestLog()) {
		expect(JSON.stringify(entry.body ?? null)).not.toContain('tenant_id');
		expect(Object.keys(entry.query)).not.toContain('tenant_id');
	}
}
