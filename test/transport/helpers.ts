/**
 * Shared helpers of the transport and credential tests: a sandbox, a credential store holding the
 * sandbox's credential the way n8n's database would, and probes that run transport functions in a
 * real n8n node context (n8n-core's WorkflowExecute, see devkit/engine.ts).
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { startSandbox } from '../../sandbox';
import type { LoggedRequest, Sandbox, SandboxCredential, SandboxOptions } from '../../sandbox';
import { CredentialStore, runProbe } from '../../devkit/engine';
import type { NodeRunResult } from '../../devkit/engine';
import { ACTIVE_USERS, CANCEL, DETAIL, REFRESH, SEND, SEND_LIST, USER_LIST } from '../../devkit/endpoints';
import { credentialData } from '../../devkit/fixtures';

export const START = '2026-03-02T09:00:00.000Z';

export { ACTIVE_USERS, CANCEL, credentialData, DETAIL, REFRESH, SEND, SEND_LIST, USER_LIST };

/** A sandbox on a random port; the manual clock unless told otherwise. */
export function sandboxFor(options: SandboxOptions = {}): Promise<Sandbox> {
	return startSandbox({ clock: 'manual', startTime: START, seedUsers: 60, deliveryMs: 0, ...options });
}

export function storeFor(sandbox: Sandbox, data: IDataObject = {}): CredentialStore {
	const store = new CredentialStore();
	store.add({ ...credentialData(sandbox), ...data });
	return store;
}

/**
 * Runs `body` once inside a real node execution and hands back what it returned or threw (the raw
 * error object, before n8n turns it into the run's error). The node itself always succeeds.
 */
export async function inNode<T>(
	store: CredentialStore,
	body: (context: IExecuteFunctions) => Promise<T>,
	items: IDataObject[] = [{}],
): Promise<{ value?: T; error?: unknown; run: NodeRunResult }> {
	let value: T | undefined;
	let error: unknown;
	const run = await runProbe(
		store,
		async function (this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
			try {
				value = await body(this);
			} catch (caught) {
				error = caught;
			}
			return [[{ json: {} }]];
		},
		items,
	);
	if (run.error) throw new Error(`the probe node failed: ${run.error.message}`);
	return { value, error, run };
}

/** Like inNode, but fails the test when `body` throws. */
export async function valueInNode<T>(store: CredentialStore, body: (context: IExecuteFunctions) => Promise<T>): Promise<T> {
	const { value, error } = await inNode(store, body);
	if (error) throw error;
	return value as T;
}

/** Like inNode, but fails the test unless `body` throws; returns the error. */
export async function errorInNode(store: CredentialStore, body: (context: IExecuteFunctions) => Promise<unknown>): Promise<any> {
	const { error, value } = await inNode(store, body);
	if (error === undefined) throw new Error(`expected an error, got ${JSON.stringify(value)}`);
	return error;
}

export function logOf(sandbox: Sandbox, endpoint?: string): LoggedRequest[] {
	return sandbox.requestLog().filter((entry) => endpoint === undefined || entry.endpoint === endpoint);
}

export function count(sandbox: Sandbox, endpoint: string): number {
	return sandbox.counts()[endpoint] ?? 0;
}

/** Every string an error exposes: message, description, stack, its JSON, and the same for each cause. */
export function exposedText(error: unknown): string {
	const parts: string[] = [];
	const seen = new Set<unknown>();
	let current: any = error;
	while (current !== undefined && current !== null && !seen.has(current)) {
		seen.add(current);
		parts.push(String(current));
		if (typeof current === 'object') {
			for (const key of ['message', 'description', 'stack', 'context', 'errorResponse', 'messages']) {
				try {
					parts.push(typeof current[key] === 'string' ? current[key] : JSON.stringify(current[key]) ?? '');
				} catch {
					parts.push(String(current[key]));
				}
			}
			try {
				parts.push(JSON.stringify(current) ?? '');
			} catch {
				parts.push('[unserializable]');
			}
			// Own properties too, including non-enumerable ones JSON leaves out.
			for (const key of Object.getOwnPropertyNames(current)) {
				const value = current[key];
				if (typeof value === 'string') parts.push(value);
			}
		}
		current = typeof current === 'object' ? current.cause : undefined;
	}
	return parts.join('\n');
}

/** Fails when any of `secrets` appears in what the error exposes. */
export function expectNoSecret(error: unknown, secrets: Array<string | undefined>) {
	const text = exposedText(error);
	expect(text.length).toBeGreaterThan(0);
	for (const secret of secrets) {
		if (!secret) continue;
		expect(secret.length).toBeGreaterThan(8);
		if (text.includes(secret)) throw new Error(`a secret leaked into the error: ${text}`);
	}
}

/** Collects every access token n8n stored for the credential (each write-back), to prove none leaks. */
export function tokensSeen(store: CredentialStore): () => string[] {
	const stored = store.get();
	const seen = new Set<string>();
	let data = stored.data;
	Object.defineProperty(stored, 'data', {
		configurable: true,
		enumerable: true,
		get: () => data,
		set: (value) => {
			data = value;
			if (typeof value?.accessToken === 'string' && value.accessToken !== '') seen.add(value.accessToken);
		},
	});
	return () => [...seen];
}

export function secretsOf(sandbox: Sandbox, credential: SandboxCredential = sandbox.orgs.primary): string[] {
	return [credential.clientSecret, credential.refreshToken];
}

/** Items for a send from the seeded users of kind onePhone. */
export function sendRequest(sandbox: Sandbox, users = 2, extra: IDataObject = {}) {
	return {
		title: 'Shift change',
		body: 'Your shift starts at 9:00 tomorrow.',
		target_user_ids: sandbox.orgs.primary.usersOfKind('onePhone', users),
		...extra,
	};
}

/** Every send body that reached the sandbox, and every body at all, must be free of tenant_id. */
export function expectNoTenantId(sandbox: Sandbox) {
	for (const entry of sandbox.requestLog()) {
		expect(JSON.stringify(entry.body ?? null)).not.toContain('tenant_id');
		expect(Object.keys(entry.query)).not.toContain('tenant_id');
	}
}
