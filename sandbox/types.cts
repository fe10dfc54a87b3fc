/**
 * Public types of the sandbox library. Others code against these names: keep them stable.
 * The switches (SandboxSettings) are in settingsTypes.ts and re-exported here.
 */

import type { ErrorShape, ListShape, SandboxSettings } from './settingsTypes.cts';

export * from './settingsTypes.cts';

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
	/** Serve https instead of http: `true` makes a certificate authority and a server certificate
	 * for 127.0.0.1 / localhost at start (sandbox/certificates.cts), or give your own. */
	tls?: true | SandboxTls;
}

/** PEM texts of an https sandbox: the server's certificate and key, and the authority that signed it. */
export interface SandboxTls {
	/** The certificate authority a client must trust (e.g. NODE_EXTRA_CA_CERTS=<a file holding it>). */
	ca: string;
	cert: string;
	key: string;
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
	| 'unauthorized'
	| 'listLag'
	| 'trickle'
	| 'oversized';

export interface FaultSpec {
	/** Same keys as counts(), e.g. 'POST /push-notification/send', or '*' for every public endpoint. */
	endpoint: string;
	kind: FaultKind;
	/** status5xx: 500-599, default 503. status4xx: 400-499, default 400. No other kind takes one. */
	status?: number;
	/** status5xx only: process the request first (a send IS registered), then answer 5xx. Default false. */
	afterProcessing?: boolean;
	/** rateLimit: the Retry-After header, default 1. status5xx: a Retry-After header only when this or
	 * retryAfterAsDate is given (default 1). No other kind takes one. */
	retryAfterSeconds?: number;
	/** rateLimit and status5xx: Retry-After as an HTTP date on the API's clock (that clock's now plus
	 * retryAfterSeconds, rounded up to the whole second) instead of seconds. Default false. */
	retryAfterAsDate?: boolean;
	/** delay only: the response is held this long in real time (the request is processed at once). */
	delayMs?: number;
	/** trickle only: the status and headers go out at once, then the body one byte every this many ms
	 * of real time (default 1000), so a client's idle-socket timeout never fires. */
	intervalMs?: number;
	/** trickle only: this many spaces (JSON whitespace) before the real body, to make the trickle last
	 * (default 0). */
	padBytes?: number;
	/** oversized only: the real answer followed by spaces (JSON whitespace) up to this many bytes
	 * (default 64 MiB): it still parses to the real answer, so only a client that bounds what it reads
	 * refuses it. */
	sizeBytes?: number;
	/**
	 * Sends only (endpoint POST /push-notification/send or '*'): the send this request registers
	 * appears in the list this many ms (API clock) after its registration, instead of listLagMs. Taken
	 * by listLag (required there; the request is otherwise untouched) and by the kinds that let the
	 * send be registered: resetAfter, delay, malformedJson, status5xx with afterProcessing.
	 */
	listDelayMs?: number;
	/**
	 * Sends only, status5xx with afterProcessing or resetAfter: the answer (or reset) comes at once and
	 * the send is registered this many ms (API clock) later, with that time as created_at. Until
	 * then neither the list nor the detail shows it.
	 */
	registerAfterMs?: number;
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

export type SendStatus =
	| 'scheduled'
	| 'sending'
	| 'sent'
	| 'partially_failed'
	| 'failed'
	| 'canceled';
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
	/** The sandbox clock (ms): what advance and set move, and the time of the request log. */
	now(): number;
	/** The API's clock: now() plus clockOffsetMs; what the API shows and answers by. */
	apiNow(): number;
	advance(ms: number): Promise<void>;
	set(iso: string): Promise<void>;
}

export interface Sandbox {
	/** e.g. http://127.0.0.1:PORT (https:// with `tls`); the public API is at the root, the admin API under /__sandbox/. */
	baseUrl: string;
	/** With `tls`: the certificate authority (PEM) that signed the sandbox's certificate, which a
	 * client must trust. Undefined over http. */
	caCertificate?: string;
	orgs: { primary: SandboxOrg; secondary: SandboxOrg };
	/** A credential of the primary org tied to a non-admin user: 403 on send. */
	nonAdminCredential: SandboxCredential;
	clock: SandboxClockControl;
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
	/** Registers a send of another client of the org (a busy organization): listed like any send, not
	 * in the request log or counts, met by no fault or limit. Throws an ApiError for an invalid body. */
	sendAsAnotherClient(orgId: string, body: Record<string, unknown>): string;
	requestLog(): LoggedRequest[];
	counts(): Record<string, number>;
	deliveriesByUser(orgId?: string): Map<string, number>;
	notifications(orgId?: string): NotificationRecord[];
}
