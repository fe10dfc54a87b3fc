/**
 * The switches of the sandbox. Every "not shown" clause of the API specification that the sandbox
 * decides is a field of SandboxSettings, switchable at start (SandboxOptions), from a test
 * (sandbox.configure) or over HTTP (POST /__sandbox/settings). Defaults in settings.ts.
 */
import type { StoredFormSwitches } from './notifications/storedForms.cts';

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

export const LIST_SHAPES: readonly ListShape[] = [
	'envelope',
	'bareArray',
	'dataArray',
	'dataItems',
	'dataNotifications',
];
export const ERROR_SHAPES: readonly ErrorShape[] = [
	'okFalse',
	'detail',
	'statusMessage',
	'plainText',
];

/** Fields a list element may leave out (`listOmitsFields`); only `id` is always there. */
export type ListField =
	| 'title'
	| 'body'
	| 'image_url'
	| 'deeplink'
	| 'status'
	| 'scheduled_at'
	| 'sent_at'
	| 'stats'
	| 'created_at'
	| 'announcement_id'
	| 'target_user_ids';

export const LIST_FIELDS: readonly ListField[] = [
	'title',
	'body',
	'image_url',
	'deeplink',
	'status',
	'scheduled_at',
	'sent_at',
	'stats',
	'created_at',
	'announcement_id',
	'target_user_ids',
];

/** Behaviour switches, one per "not shown" choice. Defaults in settings.ts. */
export interface SandboxSettings extends StoredFormSwitches {
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
	/**
	 * A new send shows up in GET /push-notification/list only this many ms (API clock) after its
	 * registration; the detail endpoint shows it at once. Default 0. A `listDelayMs` of the fault that
	 * let the send through replaces it for that send.
	 */
	listLagMs: number;
	/** The list answers the newest page whatever `skip` asks (the envelope still echoes the `skip` asked). Default false. */
	listIgnoresSkip: boolean;
	/** The list holds at most this many elements per page, whatever `limit` asks, without saying so
	 * (the envelope echoes the `limit` asked). null = no cap beyond 1000 (default). */
	listMaxPageSize: number | null;
	/** Fields left out of every list element (the detail keeps them). Default none. `target_user_ids`
	 * is also left out when listIncludesTargets is false, `announcement_id` unless recordIncludesAnnouncementId. */
	listOmitsFields: ListField[];
	/** Default `limit` of GET /user/list (spec: not shown). */
	userListDefaultLimit: number;
	/** What GET /user/list does with limit > 1000 (spec: not shown): clamp to 1000, or answer 400. */
	userListOverLimit: 'clamp' | 'reject';
	/** GET /user/list answers the first page whatever `skip` asks, so it never comes back empty
	 * (the spec's end of the list) once there are users. Default false. */
	userListIgnoresSkip: boolean;
	/** Status for a `scheduled_at` without time zone (spec Errors rule 4: not shown). */
	scheduledAtWithoutZoneStatus: 400 | 422;
	/** A `tenant_id` in the send body (spec: "must not be sent"): answer 400, or ignore it. */
	tenantIdPolicy: 'reject' | 'ignore';
	/** Enforced maximum lengths (spec: not shown; 50/150 are recommendations). null = no limit. */
	maxTitleLength: number | null;
	maxBodyLength: number | null;
	/**
	 * What the API stores may differ from what was sent (the record table says "As sent"; these
	 * switches model an API that does not keep to it). Both list and detail show the stored text.
	 * storageTrimsText: title and body are stored without surrounding white space. Default false.
	 */
	storageTrimsText: boolean;
	/** Titles / bodies longer than this many characters (code points, or UTF-16 units with
	 * storedTextCutsBy) are stored cut to it, with no error (applied after the trim). null = stored
	 * whole (default). */
	storedTitleMaxLength: number | null;
	storedBodyMaxLength: number | null;
	/**
	 * A send none of whose recipients is a user of the organization (spec: such ids "do not receive the
	 * notification"; whether the send is then registered is not shown). `accept` (default): registered,
	 * notifying nobody; `reject`: 422 on `target_user_ids`, nothing registered.
	 */
	sendWithoutOrganizationUser: 'accept' | 'reject';
	/** Maximum recipients per request (spec: not shown). null = no limit; above it -> 400. */
	maxRecipients: number | null;
	/** How long after dispatch the first delivery attempts settle; retries follow at the same interval. */
	deliveryMs: number;
	/** Dispatch lateness after `scheduled_at` (spec: "up to a couple of minutes"). */
	scheduleLatenessMs: number;
	/**
	 * What the record shows as `scheduled_at` for a send whose `scheduled_at` was already past (on
	 * the API's clock) when it was registered, and so went out at once. The record table says "Null
	 * when the send was not scheduled", which does not say whether such a send counts as scheduled.
	 * `null` (default): null, as for a send without `scheduled_at`; `asSent`: the time that was sent.
	 */
	pastScheduledAtShownAs: 'null' | 'asSent';
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
	/**
	 * The API's clock runs this many ms ahead of (negative: behind) the sandbox clock: created_at,
	 * sent_at, delivery times, the `scheduled_at` in-the-future check, token expiry, dispatch and
	 * delivery progress, Retry-After dates and the `Date` header of every answer follow it. Default 0.
	 * Changing it moves the API's clock at once (backwards too), so set it before the sends of a test.
	 */
	clockOffsetMs: number;
	/**
	 * Spec: times are "ISO 8601", which allows a time without a zone. null (default): every time the
	 * API shows is UTC with `Z`. A zone name (IANA, e.g. `'UTC'`, `'Europe/Berlin'`): every time it
	 * shows (`created_at`, `sent_at`, `scheduled_at`, a delivery's `sent_at` and `opened_at`) is the
	 * wall time of that zone without a zone designator (`2026-11-25T19:04:18.123`). What it reads
	 * (`scheduled_at` of a send) and the `Date` header are unchanged.
	 */
	timesWithoutZone: string | null;
	/** Order of the detail's delivery entries (spec: not shown): `planned` (default) or `lastUpdate`
	 * (the entry updated last at the end). See http/detailEntries.cts. */
	deliveryOrder: 'planned' | 'lastUpdate';
	/** The detail lists at most this many delivery entries while its counters count them all (spec:
	 * not shown); null = every entry (default). See http/detailEntries.cts. */
	detailMaxDeliveries: number | null;
}
