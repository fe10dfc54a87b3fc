import { Auth } from './auth.cts';
import { SandboxClock } from './clock.cts';
import { SeededOrg, makeCredential, type OrgCredential } from './directory.cts';
import { FaultBook } from './http/faults.cts';
import { RateLimiter } from './http/limits.cts';
import { RequestLog } from './http/requestLog.cts';
import {
	internalRecord,
	NotificationStore,
	type StoredNotification,
} from './notifications/store.cts';
import { unitFloat } from './random.cts';
import { validateSend } from './notifications/validation.cts';
import { checkSettingsPatch, DEFAULT_SETTINGS, pickSettings } from './settings.cts';
import type {
	FaultSpec,
	NotificationRecord,
	SandboxCredential,
	SandboxOptions,
	SandboxSettings,
} from './types.cts';

export const PRIMARY_ORG_ID = 'org-primary';
export const SECONDARY_ORG_ID = 'org-secondary';

/**
 * Everything the sandbox knows, shared by the public API, the admin API and the library facade.
 * The seeded part (orgs, users, devices, credentials) never changes; the rest is cleared by reset().
 */
export class SandboxState {
	readonly clock: SandboxClock;
	readonly primary: SeededOrg;
	readonly secondary: SeededOrg;
	readonly nonAdminCredential: SandboxCredential;
	readonly auth: Auth;
	readonly store = new NotificationStore();
	readonly faults = new FaultBook();
	readonly log = new RequestLog();
	readonly limiter = new RateLimiter();
	/** Seed of the directory, and of the latency jitter. */
	readonly seed: number;
	/** The settings at start, which reset() goes back to. */
	private readonly startSettings: SandboxSettings;
	private current: SandboxSettings;

	constructor(options: SandboxOptions = {}) {
		const seed = options.seed ?? 1;
		this.seed = seed;
		this.clock = new SandboxClock(options.clock ?? 'real', options.startTime);
		this.startSettings = { ...DEFAULT_SETTINGS, ...checkSettingsPatch(pickSettings(options)) };
		this.current = { ...this.startSettings };
		this.primary = new SeededOrg(
			PRIMARY_ORG_ID,
			'Primary Org',
			options.seedUsers ?? 200,
			seed,
			'primary.example.com',
		);
		this.secondary = new SeededOrg(
			SECONDARY_ORG_ID,
			'Secondary Org',
			options.secondaryUsers ?? 50,
			seed,
			'secondary.example.com',
		);
		this.nonAdminCredential = makeCredential(seed, PRIMARY_ORG_ID, 'non-admin');
		const credentials: OrgCredential[] = [
			{ ...pickCredential(this.primary), orgId: PRIMARY_ORG_ID, admin: true },
			{ ...pickCredential(this.secondary), orgId: SECONDARY_ORG_ID, admin: true },
			{ ...this.nonAdminCredential, orgId: PRIMARY_ORG_ID, admin: false },
		];
		this.auth = new Auth(credentials);
	}

	get settings(): SandboxSettings {
		return this.current;
	}

	/** The API's clock: the sandbox clock plus clockOffsetMs. Everything the API shows or decides by time reads it. */
	apiNow(): number {
		return this.clock.now() + this.current.clockOffsetMs;
	}

	configure(patch: Partial<SandboxSettings>): void {
		this.current = { ...this.current, ...checkSettingsPatch(patch) };
	}

	org(idOrAlias: string): SeededOrg {
		if (idOrAlias === 'primary' || idOrAlias === PRIMARY_ORG_ID) return this.primary;
		if (idOrAlias === 'secondary' || idOrAlias === SECONDARY_ORG_ID) return this.secondary;
		throw new Error(
			`unknown org ${idOrAlias}; use primary, secondary, ${PRIMARY_ORG_ID} or ${SECONDARY_ORG_ID}`,
		);
	}

	/** Real-time ms to hold the answer of the `sequence`th public request since the last reset. */
	latencyFor(sequence: number): number {
		const { latencyMs, latencyJitterMs } = this.current;
		if (latencyJitterMs === 0) return latencyMs;
		return (
			latencyMs + Math.floor(unitFloat(this.seed, 'latency', sequence) * (latencyJitterMs + 1))
		);
	}

	addFault(fault: FaultSpec): void {
		this.faults.add(fault);
	}

	tap(notificationId: string, userId: string, deviceIndex?: number): void {
		this.store.tap(notificationId, userId, this.apiNow(), deviceIndex);
	}

	/** A send of another client of the org (another integration with its own credential): registered
	 * now on the API's clock and listed like any send, but no public request, so it is neither logged,
	 * counted, limited nor met by a fault. Validated as the public send is; returns its id. */
	sendAsAnotherClient(orgId: string, body: unknown): string {
		const input = validateSend(body, this.current);
		return this.store.create(this.org(orgId), input, this.apiNow(), this.current).id;
	}

	view(stored: StoredNotification, now = this.apiNow()) {
		return this.store.view(stored, now, this.current.retriesVisible);
	}

	/** Every send, those a fault will register later included (their created_at is still ahead). */
	notifications(orgId?: string): NotificationRecord[] {
		const scope = orgId === undefined ? undefined : this.org(orgId).id;
		return this.store
			.list(scope)
			.reverse() // registration order, oldest first
			.map((stored) => internalRecord(stored, this.view(stored)));
	}

	/** In how many sends (not canceled) each user of the org(s) is a recipient, those to be registered later included. */
	deliveriesByUser(orgId?: string): Map<string, number> {
		const scope = orgId === undefined ? undefined : this.org(orgId).id;
		const perUser = new Map<string, number>();
		for (const stored of this.store.list(scope)) {
			if (stored.timeline.canceledAt !== null) continue;
			for (const userId of stored.ownTargetIds) perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
		}
		return perUser;
	}

	/** Back to the seeded state: users, devices and credentials identical; sends, log, counts,
	 * faults, revocations and rate-limit buckets cleared; settings back to the start options. The clock
	 * keeps its time; requests in flight stay counted until they are answered. */
	reset(): void {
		this.store.clear();
		this.log.clear();
		this.faults.clear();
		this.limiter.clearBuckets();
		this.auth.restoreRevoked();
		this.current = { ...this.startSettings };
	}
}

function pickCredential(credential: SandboxCredential): SandboxCredential {
	return {
		clientId: credential.clientId,
		clientSecret: credential.clientSecret,
		refreshToken: credential.refreshToken,
	};
}
