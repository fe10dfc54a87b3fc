/**
 * Public types of the sandbox library. Others code against these names: keep them stable.
 * Every "not shown" clause of the spec that the sandbox decides is a field of SandboxSettings,
 * switchable at start (SandboxOptions), from a test (sandbox.configure) or over HTTP
 * (POST /__sandbox/settings).
 */

/**
 * Body of GET /push-notification/list (spec: "Response body of this endpoint: not shown").
 * - `envelope` (default): `{ ok: true, data: { notifications: [...], total, skip, limit } }`
 * - `bareArray`: `[...]`
 * - `dataArray`: `{ ok: true, data: [...] }`
 * - `dataItems`: `{ ok: true, data: { items: [...], total } }`
 * - `dataNotifications`: `{ ok: true, data: { notifications: [...], total } }`
 */
export type ListShape = 'envelope' | 'bareArray' | 'dataArray' | 'dataItems' | 'dataNotifications';

/**
 * Body of every error answer (spec Errors rule 3: "Shape of the error body: not shown").
 * - `okFalse` (default): `{ ok: false, error: { code, message, field?, details? } }`
 * - `detail`: FastAPI-like. 422 -> `{ detail: [{ loc: ['body', field], msg, type }] }`,
 *   any other status -> `{ detail: "message" }`
 * - `statusMessage`: NestJS-like `{ statusCode, error, message }`
 * - `plainText`: `text/plain` body holding the message only
 */
export type ErrorShape = 'okFalse' | 'detail' | 'statusMessage' | 'plainText';

export const LIST_SHAPES: readonly ListShape[] = ['envelope', 'bareArray', 'dataArray', 'dataItems', 'dataNotifications'];
export const ERROR_SHAPES: readonly ErrorShape[] = ['okFalse', 'detail', 'statusMessage', 'plainText'];

/** Behaviour switches, one per "not shown" choice. Defaults in settings.ts. */
export interface SandboxSettings {
	listShape: ListShape;
	errorShape: ErrorShape;
	/** `expires_in` of newly issued access tokens. Spec: 3600. */
	tokenLifetimeSeconds: number;
	/**
	 * Spec Authentication 8 (refresh behaviour: not shown). false (default): every access token stays
	 * valid until it expires. true: a successful refresh revokes the access tokens issued earlier for
	 * the same credential (they answer 401, logged as `revoked`); the refresh token itself still works.
	 */
	refreshRevokesPreviousTokens: boolean;
	/** List elements carry `target_user_ids` (as sent), so clients can match a send after a network error. */
	listIncludesTargets: boolean;
	/** The notification record (detail and list) also carries `announcement_id` (spec: not shown). */
	recordIncludesAnnouncementId: boolean;
	/** Default page size of GET /push-notification/list (skip/limit paging; limit is clamped to 1000). */
	listDefaultLimit: number;
	/** Default `limit` of GET /user/list (spec: not shown). */
	userListDefaultLimit: number;
	/** What GET /user/list does with limit > 1000 (spec: not shown): clamp to 1000, or answer 400. */
	userListOverLimit: 'clamp' | 'reject';
	/** Status for a `scheduled_at` without time zone (spec Errors rule 4: not shown). */
	scheduledAtWithoutZoneStatus: 400 | 422;
	/** A `tenant_id` in the send body (spec: "must not be sent"): answer 400, or ignore it. */
	tenantIdPolicy: 'reject' | 'ignore';
	/** Enforced maximum lengths (spec: not shown; 50/150 are recommendations). null = no limit. */
	maxTitleLength: number | null;
	maxBodyLength: number | null;
	/** Maximum recipients per request (spec: not shown). null = no limit; above it -> 400. */
	maxRecipients: number | null;
	/** How long after dispatch the first delivery attempts settle; retries follow at the same interval. */
	deliveryMs: number;
	/** Dispatch lateness after `scheduled_at` (spec: "up to a couple of minutes"). */
	scheduleLatenessMs: number;
	/**
	 * Moves out of sent/partially_failed/failed after retries (spec: not shown).
	 * true (default): the send shows its interim state while retries run (e.g. partially_failed
	 * then sent); false: it stays `sending` until every retry is over.
	 */
	retriesVisible: boolean;
	/** Share (0..1) of delivered phones the sandbox taps by itself, autoTapAfterMs after delivery. */
	autoTapShare: number;
	autoTapAfterMs: number;
	/**
	 * Latency of every public API call, the token refresh included, in real time (not the sandbox
	 * clock): the request is processed when it arrives and its answer is held latencyMs plus a whole
	 * number of ms drawn from 0..latencyJitterMs (seeded by `seed` and the request's place in the log).
	 * Default 0 / 0.
	 */
	latencyMs: number;
	latencyJitterMs: number;
	/**
	 * Rate limits: not shown. Requests per second per credential (token bucket holding up to
	 * max(1, rate) requests, refilled by the sandbox clock), null = none (default). A request over it
	 * answers 429 with `Retry-After` and has no effect.
	 */
	rateLimitPerSecond: number | null;
	/** Requests of one credential being processed or held (latency, delay fault) at once; null = none (default). Over it: 429. */
	maxInFlight: number | null;
}

export interface SandboxOptions extends Partial<SandboxSettings> {
	/** Default 0 (random). The host is always 127.0.0.1. */
	port?: number;
	/** Users in the primary organization, default 200. */
	seedUsers?: number;
	/** Users in the secondary organization, default 50. */
	secondaryUsers?: number;
	/** Seed of users, devices and credentials: same seed, same directory. Default 1. */
	seed?: number;
	/** 'real' (default) follows the wall clock (plus any advance); 'manual' moves only via clock.advance/set. */
	clock?: 'real' | 'manual';
	/** ISO start time of the manual clock; default: the wall-clock time at start. */
	startTime?: string;
}

/** The kinds of users the seeded directory holds (see directory.ts for the mix). */
export type UserKind =
	| 'onePhone'
	| 'twoPhones'
	| 'threePhones'
	| 'noPhone'
	| 'loggedOut'
	| 'noPermission'
	| 'uninstalled'
	| 'flaky'
	| 'unreachable'
	| 'partlyUninstalled'
	| 'oneLoggedOutOfTwo';

/** A phone of a user. Only `active` phones get deliveries (spec "What the service does" 7). */
export interface SandboxDevice {
	index: number;
	/** loggedOut / noPermission phones are not active: no delivery entry. */
	session: 'active' | 'loggedOut' | 'noPermission';
	/** What happens when the service pushes to it: ok; uninstalled = permanent failure;
	 * flaky = transient failure then success on retry; unreachable = transient failure on every attempt. */
	behaviour: 'ok' | 'uninstalled' | 'flaky' | 'unreachable';
}

export interface SandboxCredential {
	clientId: string;
	clientSecret: string;
	refreshToken: string;
}

export interface SandboxOrg extends SandboxCredential {
	id: string;
	name: string;
	/** All user ids, in seeded order (built on first access). */
	readonly userIds: string[];
	/** User ids grouped by kind (built on first access). */
	readonly userKinds: Record<UserKind, string[]>;
	usersOfKind(kind: UserKind, limit?: number): string[];
	/** The kind of a user of this org, or undefined for an id of another org. */
	kindOf(userId: string): UserKind | undefined;
	devicesOf(userId: string): SandboxDevice[];
}

export type FaultKind =
	| 'status5xx'
	| 'status4xx'
	| 'forbidden'
	| 'resetBefore'
	| 'resetAfter'
	| 'delay'
	| 'malformedJson'
	| 'rateLimit'
	| 'unauthorized';

export interface FaultSpec {
	/** Same keys as counts(), e.g. 'POST /push-notification/send', or '*' for every public endpoint. */
	endpoint: string;
	kind: FaultKind;
	/** status5xx: 500-599, default 503. status4xx: 400-499, default 400. No other kind takes one. */
	status?: number;
	/** status5xx only: process the request first (a send IS registered), then answer 5xx. Default false. */
	afterProcessing?: boolean;
	/** rateLimit only: the Retry-After header, default 1. */
	retryAfterSeconds?: number;
	/** delay only: the response is held this long in real time (the request is processed at once). */
	delayMs?: number;
	/** Let the first N matching requests pass (whatever else happens to them); the fault strikes from
	 * the (N+1)th on. Requests to other endpoints, and requests refused by a rate limit, do not count. Default 0. */
	skip?: number;
	/** Next N matching requests (default 1 when no share is given). */
	times?: number;
	/** Or a share 0..1 of matching requests, drawn with a PRNG seeded by `seed` (default 1). */
	share?: number;
	seed?: number;
}

/** `revoked`: the token was replaced by a newer one of its credential (refreshRevokesPreviousTokens). */
export type AuthorizationState = 'valid' | 'expired' | 'revoked' | 'unknown' | 'missing';

export interface LoggedRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	/** Parsed JSON, the raw text when it is not JSON, or undefined without a body.
	 * client_secret and refresh_token of refresh bodies are replaced by '[redacted]'. */
	body: unknown;
	/** Clock time (ms) of arrival. */
	time: number;
	/** Endpoint key, as in counts(). */
	endpoint: string;
	/** Answer status; 0 when the connection was reset without an answer. */
	status: number;
	/** State of the bearer token; the raw token is never stored. */
	authorization: AuthorizationState;
	orgId?: string;
	/** The fault applied to this request, if any. */
	fault?: FaultSpec['kind'];
	/** Set when a limit refused the request (status 429, no effect): the setting that did. */
	limitedBy?: 'rateLimitPerSecond' | 'maxInFlight';
	/** Real-time ms the answer was held for latencyMs + jitter (absent when 0). */
	latencyMs?: number;
	/** Id of the send this request registered (POST /push-notification/send), even when the answer was lost. */
	notificationId?: string;
}

export type SendStatus = 'scheduled' | 'sending' | 'sent' | 'partially_failed' | 'failed' | 'canceled';
export type DeliveryStatus = 'sent' | 'opened' | 'failed' | 'no_device';

export interface NotificationStats {
	targeted_users: number;
	devices: number;
	sent: number;
	failed: number;
	opened: number;
	no_device: number;
}

export interface DeliveryRecord {
	user_id: string;
	status: DeliveryStatus;
	sent_at: string;
	opened_at: string | null;
}

/** Internal view of a send for tests: the public record plus what the API does not show. */
export interface NotificationRecord {
	id: string;
	orgId: string;
	title: string;
	body: string;
	image_url: string | null;
	deeplink: string | null;
	announcement_id: string | null;
	status: SendStatus;
	scheduled_at: string | null;
	sent_at: string | null;
	created_at: string;
	stats: NotificationStats;
	/** As sent, including ids of other organizations. */
	target_user_ids: string[];
	deliveries: DeliveryRecord[];
}

export interface SandboxClockControl {
	now(): number;
	advance(ms: number): Promise<void>;
	set(iso: string): Promise<void>;
}

export interface Sandbox {
	/** e.g. http://127.0.0.1:PORT; the public API is at the root, the admin API under /__sandbox/. */
	baseUrl: string;
	orgs: { primary: SandboxOrg; secondary: SandboxOrg };
	/** A credential of the primary org tied to a non-admin user: 403 on send. */
	nonAdminCredential: SandboxCredential;
	clock: SandboxClockControl;
	settle(): Promise<void>;
	reset(): Promise<void>;
	stop(): Promise<void>;
	settings(): SandboxSettings;
	configure(settings: Partial<SandboxSettings>): void;
	setListShape(shape: ListShape): void;
	setErrorShape(shape: ErrorShape): void;
	setTokenLifetime(seconds: number): void;
	revokeRefreshToken(clientId: string): void;
	expireAccessTokens(): void;
	addFault(fault: FaultSpec): void;
	clearFaults(): void;
	tap(notificationId: string, userId: string, deviceIndex?: number): void;
	requestLog(): LoggedRequest[];
	counts(): Record<string, number>;
	deliveriesByUser(orgId?: string): Map<string, number>;
	notifications(orgId?: string): NotificationRecord[];
}
