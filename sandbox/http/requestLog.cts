import type { LoggedRequest } from '../types.cts';

/** Every public API request, in arrival order, plus counts per endpoint key. */
export class RequestLog {
	private entries: LoggedRequest[] = [];
	private perEndpoint = new Map<string, number>();

	/** Adds the entry now (so a lost answer is still logged); the caller fills in status later. */
	add(entry: LoggedRequest): LoggedRequest {
		this.entries.push(entry);
		this.perEndpoint.set(entry.endpoint, (this.perEndpoint.get(entry.endpoint) ?? 0) + 1);
		return entry;
	}

	/** Requests logged since the last clear. */
	get size(): number {
		return this.entries.length;
	}

	all(): LoggedRequest[] {
		return this.entries.map((entry) => ({ ...entry }));
	}

	counts(): Record<string, number> {
		return Object.fromEntries(this.perEndpoint);
	}

	clear(): void {
		this.entries = [];
		this.perEndpoint = new Map();
	}
}

const SECRET_FIELDS = ['client_secret', 'refresh_token'];

/** Refresh bodies keep client_id but not the secrets: the log must never hold a credential. */
export function redactBody(body: unknown): unknown {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
	const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
	for (const field of SECRET_FIELDS) if (field in copy) copy[field] = '[redacted]';
	return copy;
}
