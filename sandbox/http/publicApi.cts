import { ApiError, forbidden, notFound } from '../apiError.cts';
import type { BearerCheck } from '../auth.cts';
import type { OrgCredential } from '../directory.cts';
import { shownDelivery } from '../notifications/shownTimes.cts';
import { publicRecord } from '../notifications/store.cts';
import { validateSend } from '../notifications/validation.cts';
import type { SandboxState } from '../state.cts';
import type { FaultSpec } from '../types.cts';
import { shownEntries } from './detailEntries.cts';
import { listPage } from './listPage.cts';
import { renderList } from './listShapes.cts';

/** What a handler sees of the request. */
export interface RequestContext {
	state: SandboxState;
	query: URLSearchParams;
	/** Throws 400 invalid_json when the body is not JSON; an empty body reads as {}. */
	json(): unknown;
	bearer: BearerCheck;
	/** Arrival time on the API's clock. */
	now: number;
	/** The fault this request took, when it lets the request be processed (it may shift the send's registration or listing). */
	fault?: FaultSpec;
	/** Set by the send handler: the log shows which send a request registered, even if its answer is lost. */
	registeredId?: string;
}

export interface Reply {
	status: number;
	body: unknown;
}

interface Route {
	method: string;
	pattern: RegExp;
	/** Key of counts() and of FaultSpec.endpoint. */
	endpoint: string;
	handle(context: RequestContext, params: string[]): Reply;
}

const ok = (body: unknown, status = 200): Reply => ({ status, body });

export const REFRESH_ENDPOINT = 'POST /auth/oauth/v2/refresh';

/** Spec Endpoints. Order matters: /push-notification/list before /push-notification/{id}. */
export const PUBLIC_ROUTES: Route[] = [
	{
		method: 'POST',
		pattern: /^\/auth\/oauth\/v2\/refresh$/,
		endpoint: REFRESH_ENDPOINT,
		handle: ({ state, json, now }) =>
			ok(
				state.auth.refresh(
					json(),
					now,
					state.settings.tokenLifetimeSeconds,
					state.settings.refreshRevokesPreviousTokens,
				),
			),
	},
	{
		method: 'GET',
		pattern: /^\/user\/list$/,
		endpoint: 'GET /user/list',
		handle: (context) => {
			const org = orgOf(context, caller(context));
			const { settings } = context.state;
			const skip = intParam(context.query, 'skip', 0, 0);
			let limit = intParam(context.query, 'limit', settings.userListDefaultLimit, 1);
			if (limit > 1000) {
				if (settings.userListOverLimit === 'reject')
					throw new ApiError(400, 'invalid_value', 'limit must be at most 1000', 'limit');
				limit = 1000; // spec: "Pages hold up to 1000 users"
			}
			return ok(org.userPage(settings.userListIgnoresSkip ? 0 : skip, limit)); // a bare array (spec GET /user/list)
		},
	},
	{
		method: 'GET',
		pattern: /^\/user-device\/users$/,
		endpoint: 'GET /user-device/users',
		handle: (context) => {
			const userIds = orgOf(context, caller(context)).activeUserIds();
			return ok({ ok: true, data: { user_ids: userIds, count: userIds.length } });
		},
	},
	{
		method: 'POST',
		pattern: /^\/push-notification\/send$/,
		endpoint: 'POST /push-notification/send',
		handle: (context) => {
			const credential = requireAdmin(caller(context), 'send push notifications');
			const input = validateSend(context.json(), context.state.settings);
			const org = orgOf(context, credential);
			if (
				context.state.settings.sendWithoutOrganizationUser === 'reject' &&
				!input.target_user_ids.some((userId) => org.hasUser(userId))
			)
				throw new ApiError(
					422,
					'invalid_value',
					'target_user_ids holds no user of the organization',
					'target_user_ids',
				);
			const { fault } = context;
			const registeredAt = context.now + (fault?.registerAfterMs ?? 0);
			const stored = context.state.store.create(
				org,
				input,
				registeredAt,
				context.state.settings,
				fault?.listDelayMs,
			);
			context.registeredId = stored.id;
			// Spec Send transitions: the answer says `sending` or `scheduled`, even if delivery is instant (deliveryMs 0).
			return ok(
				{ ok: true, data: { id: stored.id, status: stored.scheduled ? 'scheduled' : 'sending' } },
				202,
			);
		},
	},
	{
		method: 'GET',
		pattern: /^\/push-notification\/list$/,
		endpoint: 'GET /push-notification/list',
		handle: (context) => {
			const credential = caller(context);
			const { settings } = context.state;
			const skip = intParam(context.query, 'skip', 0, 0);
			const limit = Math.min(1000, intParam(context.query, 'limit', settings.listDefaultLimit, 1));
			return ok(
				renderList(
					listPage(context.state, credential.orgId, { skip, limit }, context.now),
					settings.listShape,
				),
			);
		},
	},
	{
		method: 'GET',
		pattern: /^\/push-notification\/([^/]+)$/,
		endpoint: 'GET /push-notification/:id',
		handle: (context, [id]) => {
			// Not delayed by listLagMs: the detail shows a send as soon as it is registered.
			const stored = context.state.store.getForOrg(
				id,
				caller(context).orgId,
				context.now,
				context.state.settings.clockOffsetMs,
			);
			const view = context.state.view(stored, context.now);
			return ok({
				ok: true,
				data: {
					notification: publicRecord(stored, view, context.state.settings),
					deliveries: shownEntries(view.deliveries, context.state.settings).map((delivery) =>
						shownDelivery(delivery, context.state.settings),
					),
				},
			});
		},
	},
	{
		method: 'POST',
		pattern: /^\/push-notification\/([^/]+)\/cancel$/,
		endpoint: 'POST /push-notification/:id/cancel',
		handle: (context, [id]) => {
			// Not shown whether cancel needs the admin role; the sandbox treats it like send (a write).
			const credential = requireAdmin(caller(context), 'cancel push notifications');
			const stored = context.state.store.getForOrg(
				id,
				credential.orgId,
				context.now,
				context.state.settings.clockOffsetMs,
			);
			context.state.store.cancel(stored, context.now);
			return ok({ ok: true, message: 'Push notification canceled' });
		},
	},
];

export function matchRoute(
	method: string,
	path: string,
): { route?: Route; params: string[]; endpoint: string } {
	for (const route of PUBLIC_ROUTES) {
		if (route.method !== method) continue;
		const match = route.pattern.exec(path);
		if (match) return { route, params: match.slice(1).map(safeDecode), endpoint: route.endpoint };
	}
	return { params: [], endpoint: `${method} ${path}` };
}

export function unknownRoute(method: string, path: string): never {
	throw notFound(`No endpoint ${method} ${path}`);
}

function safeDecode(segment: string): string {
	try {
		return decodeURIComponent(segment);
	} catch {
		return segment;
	}
}

function caller(context: RequestContext): OrgCredential {
	return context.state.auth.require(context.bearer);
}

function orgOf(context: RequestContext, credential: OrgCredential) {
	return context.state.org(credential.orgId);
}

/** Spec Authentication 1: the credential's user must be an administrator, "otherwise the API rejects the send". */
function requireAdmin(credential: OrgCredential, action: string): OrgCredential {
	if (!credential.admin)
		throw forbidden(`The credential's user is not an administrator and cannot ${action}`);
	return credential;
}

function intParam(query: URLSearchParams, name: string, fallback: number, min: number): number {
	const raw = query.get(name);
	if (raw === null || raw === '') return fallback;
	if (!/^\d+$/.test(raw) || Number(raw) < min) {
		throw new ApiError(400, 'invalid_value', `${name} must be an integer >= ${min}`, name);
	}
	return Number(raw);
}
