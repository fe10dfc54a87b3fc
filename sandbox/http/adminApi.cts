import { z } from 'zod';
import { USER_KINDS, type SeededOrg } from '../directory.cts';
import { TapError } from '../notifications/store.cts';
import type { SandboxState } from '../state.cts';
import type { FaultSpec, UserKind } from '../types.cts';

/**
 * The admin API, for tests that run n8n in another process. It lives under its own prefix,
 * which no public path starts with, is never logged or counted, and has one fixed error shape.
 */
export const ADMIN_PREFIX = '/__sandbox';

export interface AdminContext {
	state: SandboxState;
	body: unknown;
	query: URLSearchParams;
	baseUrl: string;
}

export class AdminError extends Error {
	constructor(
		readonly status: number,
		message: string,
	) {
		super(message);
	}
}

type AdminHandler = (context: AdminContext) => unknown;

const ROUTES: Record<string, AdminHandler> = {
	'GET /credentials': ({ state, baseUrl }) => describeSandbox(state, baseUrl),
	'GET /users': ({ state, query }) => {
		const org = state.org(query.get('org') ?? 'primary');
		const kind = query.get('kind');
		const limit = query.has('limit') ? Number(query.get('limit')) : 100;
		if (kind !== null && !USER_KINDS.includes(kind as UserKind)) {
			throw new AdminError(400, `unknown kind ${kind}; one of ${USER_KINDS.join(', ')}`);
		}
		const userIds =
			kind === null ? org.userIds.slice(0, limit) : org.usersOfKind(kind as UserKind, limit);
		return {
			ok: true,
			org: org.id,
			users: userIds.map((id) => ({ id, kind: org.kindOf(id), devices: org.devicesOf(id) })),
		};
	},
	'GET /clock': ({ state }) => clockInfo(state),
	'POST /clock/advance': ({ state, body }) => {
		state.clock.advance(parse(z.object({ ms: z.number().nonnegative() }), body).ms);
		return clockInfo(state);
	},
	'POST /clock/set': ({ state, body }) => {
		state.clock.set(parse(z.object({ iso: z.string() }), body).iso);
		return clockInfo(state);
	},
	// Background steps are computed from the clock, so there is nothing to run: kept for symmetry with the library.
	'GET /settings': ({ state }) => ({ ok: true, settings: state.settings }),
	'POST /settings': ({ state, body }) => {
		state.configure(parse(z.record(z.unknown()), body));
		return { ok: true, settings: state.settings };
	},
	'GET /faults': ({ state }) => ({ ok: true, faults: state.faults.pending() }),
	'POST /faults': ({ state, body }) => {
		for (const fault of Array.isArray(body) ? body : [body]) state.addFault(fault as FaultSpec);
		return { ok: true, faults: state.faults.pending() };
	},
	'DELETE /faults': ({ state }) => {
		state.faults.clear();
		return { ok: true, faults: [] };
	},
	'POST /tap': ({ state, body }) => {
		const tap = parse(
			z.object({
				notificationId: z.string(),
				userId: z.string(),
				deviceIndex: z.number().int().optional(),
			}),
			body,
		);
		state.tap(tap.notificationId, tap.userId, tap.deviceIndex);
		return { ok: true };
	},
	'GET /log': ({ state }) => ({ ok: true, requests: state.log.all() }),
	'GET /counts': ({ state }) => ({ ok: true, counts: state.log.counts() }),
	'GET /notifications': ({ state, query }) => ({
		ok: true,
		notifications: state.notifications(query.get('org') ?? undefined),
	}),
	'GET /deliveries-by-user': ({ state, query }) => ({
		ok: true,
		deliveries_by_user: Object.fromEntries(state.deliveriesByUser(query.get('org') ?? undefined)),
	}),
	'POST /reset': ({ state }) => {
		state.reset();
		return { ok: true };
	},
	'POST /revoke': ({ state, body }) => {
		state.auth.revoke(parse(z.object({ clientId: z.string() }), body).clientId);
		return { ok: true };
	},
	'POST /expire-tokens': ({ state }) => {
		state.auth.expireAll();
		return { ok: true };
	},
};

export function handleAdmin(
	method: string,
	path: string,
	context: AdminContext,
): { status: number; body: unknown } {
	const handler = ROUTES[`${method} ${path.slice(ADMIN_PREFIX.length) || '/'}`];
	if (!handler) {
		return {
			status: 404,
			body: {
				ok: false,
				error: {
					code: 'not_found',
					message: `No admin endpoint ${method} ${path}`,
					endpoints: Object.keys(ROUTES),
				},
			},
		};
	}
	try {
		return { status: 200, body: handler(context) };
	} catch (error) {
		const status = error instanceof AdminError || error instanceof TapError ? error.status : 400;
		return {
			status,
			body: { ok: false, error: { code: 'bad_request', message: (error as Error).message } },
		};
	}
}

/** Base URL, every credential and a few users of each kind: all a test or a demo needs to start. */
export function describeSandbox(state: SandboxState, baseUrl: string) {
	const describeOrg = (org: SeededOrg) => ({
		id: org.id,
		name: org.name,
		clientId: org.clientId,
		clientSecret: org.clientSecret,
		refreshToken: org.refreshToken,
		userCount: org.size,
		sampleUsers: Object.fromEntries(USER_KINDS.map((kind) => [kind, org.usersOfKind(kind, 5)])),
	});
	return {
		ok: true,
		baseUrl,
		orgs: { primary: describeOrg(state.primary), secondary: describeOrg(state.secondary) },
		nonAdminCredential: { ...state.nonAdminCredential, orgId: state.primary.id },
	};
}

/** The sandbox clock (`now`, `ms`) and the API's clock (`apiNow`, `apiMs`: plus clockOffsetMs). */
function clockInfo(state: SandboxState) {
	const now = state.clock.now();
	const apiNow = state.apiNow();
	return {
		ok: true,
		mode: state.clock.mode,
		now: new Date(now).toISOString(),
		ms: now,
		apiNow: new Date(apiNow).toISOString(),
		apiMs: apiNow,
	};
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
	const result = schema.safeParse(body);
	if (!result.success) {
		const issue = result.error.issues[0];
		throw new AdminError(
			400,
			`body ${issue.path.join('.') || ''}: ${issue.message}`.replace(' :', ':'),
		);
	}
	return result.data;
}
