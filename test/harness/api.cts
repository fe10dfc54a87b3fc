/** The sandbox's public API called with plain fetch, as another client of the organization calls
 * it (not through the transport under test). */
import type { Sandbox, SandboxCredential } from '../../sandbox/index.cts';

export interface Answer {
	status: number;
	headers: Headers;
	/** Parsed JSON, or the raw text when the body is not JSON. */
	body: any;
	text: string;
}

/** Plain fetch with JSON in and out. */
export async function call(
	sandbox: Sandbox,
	method: string,
	path: string,
	options: { token?: string; body?: unknown; rawBody?: string; signal?: AbortSignal } = {},
): Promise<Answer> {
	const headers: Record<string, string> = {};
	if (options.token) headers.authorization = `Bearer ${options.token}`;
	let body: string | undefined = options.rawBody;
	if (options.body !== undefined) {
		headers['content-type'] = 'application/json';
		body = JSON.stringify(options.body);
	}
	const response = await fetch(`${sandbox.baseUrl}${path}`, {
		method,
		headers,
		body,
		signal: options.signal,
	});
	const text = await response.text();
	let parsed: unknown = text;
	try {
		parsed = JSON.parse(text);
	} catch {
		// keep the text
	}
	return { status: response.status, headers: response.headers, body: parsed, text };
}

export async function tokenFor(
	sandbox: Sandbox,
	credential: SandboxCredential = sandbox.orgs.primary,
): Promise<string> {
	const answer = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
		body: {
			client_id: credential.clientId,
			client_secret: credential.clientSecret,
			refresh_token: credential.refreshToken,
		},
	});
	if (answer.status !== 200) throw new Error(`refresh failed: ${answer.status} ${answer.text}`);
	return answer.body.access_token;
}

/** A valid send body. */
export function sendBody(targetUserIds: string[], extra: Record<string, unknown> = {}) {
	return {
		title: 'Shift change',
		body: 'Your shift starts at 9:00 tomorrow.',
		target_user_ids: targetUserIds,
		...extra,
	};
}

export async function send(
	sandbox: Sandbox,
	token: string,
	targetUserIds: string[],
	extra: Record<string, unknown> = {},
) {
	const answer = await call(sandbox, 'POST', '/push-notification/send', {
		token,
		body: sendBody(targetUserIds, extra),
	});
	if (answer.status !== 202) throw new Error(`send failed: ${answer.status} ${answer.text}`);
	return answer.body.data as { id: string; status: string };
}

export async function detail(sandbox: Sandbox, token: string, id: string) {
	const answer = await call(sandbox, 'GET', `/push-notification/${id}`, { token });
	if (answer.status !== 200) throw new Error(`detail failed: ${answer.status} ${answer.text}`);
	return answer.body.data as { notification: any; deliveries: any[] };
}

/** Advances past every round of delivery and retry (3 rounds of deliveryMs). */
export async function settleDeliveries(sandbox: Sandbox): Promise<void> {
	await sandbox.clock.advance(sandbox.settings().deliveryMs * 3 + 1);
}
