import { FIRST_NAMES, LAST_NAMES } from './names.cts';
import { hash32, hexFrom, unitFloat } from './random.cts';
import type { SandboxDevice, SandboxOrg, UserKind } from './types.cts';

/**
 * The seeded organizations: users and their phones, derived from (seed, org, index) so nothing
 * per user is stored but one byte (its kind). 100,000 users cost ~100 KB until userIds is read.
 */

/** The first users of every org take each kind once, in this order, so even a tiny org has all kinds. */
export const USER_KINDS: readonly UserKind[] = [
	'onePhone',
	'twoPhones',
	'threePhones',
	'noPhone',
	'loggedOut',
	'noPermission',
	'uninstalled',
	'flaky',
	'unreachable',
	'partlyUninstalled',
	'oneLoggedOutOfTwo',
];

/** Share (in %) of each kind among the remaining users. */
const KIND_WEIGHTS: Record<UserKind, number> = {
	onePhone: 40,
	twoPhones: 15,
	threePhones: 5,
	noPhone: 10,
	loggedOut: 8,
	noPermission: 5,
	uninstalled: 5,
	flaky: 5,
	unreachable: 2,
	partlyUninstalled: 3,
	oneLoggedOutOfTwo: 2,
};

const active = (behaviour: SandboxDevice['behaviour'] = 'ok') => ({
	session: 'active' as const,
	behaviour,
});

/** Phones of each kind of user, in device order. */
const PHONES_OF_KIND: Record<UserKind, Array<Omit<SandboxDevice, 'index'>>> = {
	onePhone: [active()],
	twoPhones: [active(), active()],
	threePhones: [active(), active(), active()],
	noPhone: [],
	loggedOut: [{ session: 'loggedOut', behaviour: 'ok' }],
	noPermission: [{ session: 'noPermission', behaviour: 'ok' }],
	// The service still believes the app is there (its push token is registered): it is listed as
	// active and the push fails permanently (spec Delivery states, `failed`).
	uninstalled: [active('uninstalled')],
	flaky: [active('flaky')],
	unreachable: [active('unreachable')],
	partlyUninstalled: [active(), active('uninstalled')],
	oneLoggedOutOfTwo: [{ session: 'loggedOut', behaviour: 'ok' }, active()],
};

export interface UserRecord {
	id: string;
	name: string;
	lastname: string;
	username: string;
	email: string;
}

export interface OrgCredential {
	clientId: string;
	clientSecret: string;
	refreshToken: string;
	orgId: string;
	/** The user the credential acts for is an administrator (spec Authentication 1). */
	admin: boolean;
}

export class SeededOrg implements SandboxOrg {
	readonly clientId: string;
	readonly clientSecret: string;
	readonly refreshToken: string;
	/** 8 hex chars that start every user id of this org. */
	private readonly idPrefix: string;
	private readonly kinds: Uint8Array;
	private cachedUserIds?: string[];
	private cachedKinds?: Record<UserKind, string[]>;

	constructor(
		readonly id: string,
		readonly name: string,
		readonly size: number,
		private readonly seed: number,
		private readonly domain: string,
	) {
		const credential = makeCredential(seed, id, 'admin');
		this.clientId = credential.clientId;
		this.clientSecret = credential.clientSecret;
		this.refreshToken = credential.refreshToken;
		this.idPrefix = hexFrom(8, seed, id, 'users');
		this.kinds = new Uint8Array(size);
		for (let index = 0; index < size; index++) this.kinds[index] = this.pickKind(index);
	}

	get userIds(): string[] {
		if (!this.cachedUserIds)
			this.cachedUserIds = Array.from({ length: this.size }, (_, index) => this.userIdAt(index));
		return this.cachedUserIds;
	}

	get userKinds(): Record<UserKind, string[]> {
		if (!this.cachedKinds) {
			const grouped = Object.fromEntries(
				USER_KINDS.map((kind) => [kind, [] as string[]]),
			) as Record<UserKind, string[]>;
			for (let index = 0; index < this.size; index++)
				grouped[USER_KINDS[this.kinds[index]]].push(this.userIdAt(index));
			this.cachedKinds = grouped;
		}
		return this.cachedKinds;
	}

	usersOfKind(kind: UserKind, limit = Infinity): string[] {
		const found: string[] = [];
		const wanted = USER_KINDS.indexOf(kind);
		for (let index = 0; index < this.size && found.length < limit; index++) {
			if (this.kinds[index] === wanted) found.push(this.userIdAt(index));
		}
		return found;
	}

	kindOf(userId: string): UserKind | undefined {
		const index = this.indexOf(userId);
		return index === undefined ? undefined : USER_KINDS[this.kinds[index]];
	}

	devicesOf(userId: string): SandboxDevice[] {
		const kind = this.kindOf(userId);
		if (!kind) return [];
		return PHONES_OF_KIND[kind].map((phone, index) => ({ index, ...phone }));
	}

	/** Spec "What the service does" 7: installed, logged in, permission granted on some phone. */
	hasActiveApp(userId: string): boolean {
		return this.devicesOf(userId).some((device) => device.session === 'active');
	}

	/** Users with an active app, in seeded order (GET /user-device/users). */
	activeUserIds(): string[] {
		const ids: string[] = [];
		for (let index = 0; index < this.size; index++) {
			const phones = PHONES_OF_KIND[USER_KINDS[this.kinds[index]]];
			if (phones.some((phone) => phone.session === 'active')) ids.push(this.userIdAt(index));
		}
		return ids;
	}

	/** One page of user records, generated on demand (GET /user/list). */
	userPage(skip: number, limit: number): UserRecord[] {
		const page: UserRecord[] = [];
		for (let index = skip; index < Math.min(this.size, skip + limit); index++)
			page.push(this.userAt(index));
		return page;
	}

	userAt(index: number): UserRecord {
		const name = FIRST_NAMES[hash32(this.seed, this.id, index, 'first') % FIRST_NAMES.length];
		const lastname = LAST_NAMES[hash32(this.seed, this.id, index, 'last') % LAST_NAMES.length];
		const username = `${name}.${lastname}.${index + 1}`.toLowerCase();
		return {
			id: this.userIdAt(index),
			name,
			lastname,
			username,
			email: `${username}@${this.domain}`,
		};
	}

	hasUser(userId: string): boolean {
		return this.indexOf(userId) !== undefined;
	}

	/** Ids are prefix (org) + scramble + index, all hex: unique, parseable, ObjectId-like. */
	private userIdAt(index: number): string {
		return (
			this.idPrefix + hexFrom(8, this.seed, this.id, index) + index.toString(16).padStart(8, '0')
		);
	}

	private indexOf(userId: string): number | undefined {
		if (typeof userId !== 'string' || userId.length !== 24 || !userId.startsWith(this.idPrefix))
			return undefined;
		const index = Number.parseInt(userId.slice(16), 16);
		if (!Number.isInteger(index) || index >= this.size || this.userIdAt(index) !== userId)
			return undefined;
		return index;
	}

	private pickKind(index: number): number {
		if (index < USER_KINDS.length) return index;
		let draw = unitFloat(this.seed, this.id, index, 'kind') * 100;
		for (let kind = 0; kind < USER_KINDS.length; kind++) {
			draw -= KIND_WEIGHTS[USER_KINDS[kind]];
			if (draw < 0) return kind;
		}
		return 0;
	}
}

/**
 * `SANDBOX_SECRET_MARKER` (letters and digits, at most 32): when set, every client secret, refresh
 * token and access token starts with `cps_`/`cpr_`/`cpa_` followed by it, so a test run can find
 * any of them in outputs and logs by that mark alone (test/harness/secretGuard.cts). Client IDs
 * are not secret and keep their form. Unset (the default): no mark.
 */
export function secretMarker(): string {
	const marker = process.env.SANDBOX_SECRET_MARKER ?? '';
	if (!/^[A-Za-z0-9]{0,32}$/.test(marker)) {
		throw new Error('SANDBOX_SECRET_MARKER must be letters and digits only, at most 32 of them');
	}
	return marker;
}

/** Deterministic credential values (same seed, same credentials: handy for a saved n8n credential). */
export function makeCredential(
	seed: number,
	orgId: string,
	role: string,
): Omit<OrgCredential, 'orgId' | 'admin'> {
	const marker = secretMarker();
	return {
		clientId: `cpc_${hexFrom(16, seed, orgId, role, 'client')}`,
		clientSecret: `cps_${marker}${hexFrom(32, seed, orgId, role, 'secret')}`,
		refreshToken: `cpr_${marker}${hexFrom(40, seed, orgId, role, 'refresh')}`,
	};
}
