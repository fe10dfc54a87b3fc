import { createHash, randomBytes } from 'node:crypto';
import { ApiError, unauthorized } from './apiError.cts';
import { secretMarker, type OrgCredential } from './directory.cts';
import type { AuthorizationState } from './types.cts';

/**
 * Credentials and access tokens (spec Authentication). Tokens are kept by their SHA-256 only,
 * so neither the store nor the request log ever holds a raw token.
 */
interface IssuedToken {
	credential: OrgCredential;
	expiresAt: number;
	/** Set by expireAll(): the token answers 401 whatever the clock says. */
	forcedExpired: boolean;
	/** The credential's generation when it was issued: a lower one than the credential's now is revoked. */
	generation: number;
}

export interface TokenResponse {
	access_token: string;
	token_type: 'Bearer';
	expires_in: number;
}

export interface BearerCheck {
	state: AuthorizationState;
	credential?: OrgCredential;
}

export class Auth {
	private readonly byClientId = new Map<string, OrgCredential>();
	private readonly revoked = new Set<string>();
	private readonly tokens = new Map<string, IssuedToken>();
	/** Per client id, bumped by each refresh that revokes the tokens issued before it. */
	private readonly generations = new Map<string, number>();

	constructor(credentials: OrgCredential[]) {
		for (const credential of credentials) this.byClientId.set(credential.clientId, credential);
	}

	/**
	 * POST /auth/oauth/v2/refresh. The refresh token never changes (spec Authentication 4). With
	 * `revokePrevious` the access tokens issued earlier for the credential stop working.
	 */
	refresh(
		body: unknown,
		now: number,
		lifetimeSeconds: number,
		revokePrevious = false,
	): TokenResponse {
		const fields = readRefreshBody(body);
		const credential = this.byClientId.get(fields.client_id);
		// One message for an unknown client and a wrong secret: clear, without telling which ids exist.
		if (!credential || credential.clientSecret !== fields.client_secret) {
			throw new ApiError(401, 'invalid_client', 'client_id or client_secret is invalid');
		}
		if (credential.refreshToken !== fields.refresh_token) {
			throw new ApiError(401, 'invalid_grant', 'refresh_token is invalid for this client_id');
		}
		if (this.revoked.has(credential.clientId)) {
			throw new ApiError(
				401,
				'invalid_grant',
				'refresh_token has been revoked; create a new credential',
			);
		}
		if (revokePrevious)
			this.generations.set(credential.clientId, this.generationOf(credential) + 1);
		const accessToken = `cpa_${secretMarker()}${randomBytes(24).toString('hex')}`;
		this.tokens.set(digest(accessToken), {
			credential,
			expiresAt: now + lifetimeSeconds * 1000,
			forcedExpired: false,
			generation: this.generationOf(credential),
		});
		return { access_token: accessToken, token_type: 'Bearer', expires_in: lifetimeSeconds };
	}

	/** Reads `Authorization: Bearer <token>` without throwing: the log records the state of every request. */
	check(header: string | undefined, now: number): BearerCheck {
		const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
		if (!match) return { state: 'missing' };
		const issued = this.tokens.get(digest(match[1]));
		if (!issued) return { state: 'unknown' };
		if (issued.generation < this.generationOf(issued.credential)) return { state: 'revoked' };
		if (issued.forcedExpired || now >= issued.expiresAt) return { state: 'expired' };
		return { state: 'valid', credential: issued.credential };
	}

	/** The credential behind a valid token, or the spec's 401 (Errors: "Token missing, invalid or expired"). */
	require(check: BearerCheck): OrgCredential {
		if (check.credential) return check.credential;
		const reason = {
			missing: 'Bearer token missing',
			unknown: 'Bearer token invalid',
			expired: 'Bearer token expired',
			revoked: 'Bearer token revoked by a newer token of this credential',
		};
		throw unauthorized(
			`${reason[check.state as keyof typeof reason]}; renew it with POST /auth/oauth/v2/refresh`,
		);
	}

	private generationOf(credential: OrgCredential): number {
		return this.generations.get(credential.clientId) ?? 0;
	}

	revoke(clientId: string): void {
		if (!this.byClientId.has(clientId)) throw new Error(`unknown client id ${clientId}`);
		this.revoked.add(clientId);
	}

	expireAll(): void {
		for (const token of this.tokens.values()) token.forcedExpired = true;
	}

	/** Back to the seeded state: no refresh token revoked. Issued access tokens stay as they are. */
	restoreRevoked(): void {
		this.revoked.clear();
	}
}

function digest(token: string): string {
	return createHash('sha256').update(token).digest('hex');
}

function readRefreshBody(body: unknown): {
	client_id: string;
	client_secret: string;
	refresh_token: string;
} {
	const record =
		typeof body === 'object' && body !== null && !Array.isArray(body)
			? (body as Record<string, unknown>)
			: {};
	for (const field of ['client_id', 'client_secret', 'refresh_token']) {
		const value = record[field];
		if (value === undefined || value === null || value === '') {
			throw new ApiError(422, 'validation_error', `${field} is required`, field);
		}
		if (typeof value !== 'string')
			throw new ApiError(400, 'invalid_value', `${field} must be a string`, field);
	}
	return record as { client_id: string; client_secret: string; refresh_token: string };
}
