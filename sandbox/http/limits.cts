import type { SandboxSettings } from '../types.cts';

/**
 * Rate limits (spec Limits: "Rate limits: not shown"), both off by default, both per credential:
 * - `rateLimitPerSecond`: a token bucket per credential holding up to max(1, rate) requests, refilled
 *   at `rate` per second of the sandbox clock (so with the manual clock only an advance refills it).
 *   A refused request takes no token. Retry-After = the whole seconds until the bucket holds one
 *   request again (at least 1).
 * - `maxInFlight`: requests of the credential admitted and not answered yet (held by latency or a
 *   delay fault). Retry-After: 1.
 * The credential of a request is the one of its valid bearer token, or the `client_id` of a refresh
 * body; requests with neither (no, unknown or expired token) share one bucket.
 */

export interface Refusal {
	limitedBy: 'rateLimitPerSecond' | 'maxInFlight';
	retryAfterSeconds: number;
	message: string;
}

interface Bucket {
	/** The rate the bucket was made for: a new rate starts a full bucket. */
	rate: number;
	tokens: number;
	at: number;
}

export const ANONYMOUS_CALLER = '(no credential)';

export class RateLimiter {
	private buckets = new Map<string, Bucket>();
	private readonly inFlight = new Map<string, number>();

	/**
	 * Admits the request of `caller` at clock time `now`, or says which limit refuses it. An admitted
	 * request is in flight until the returned release is called (calling it again does nothing).
	 */
	admit(
		caller: string,
		now: number,
		settings: SandboxSettings,
	): { release: () => void } | { refusal: Refusal } {
		const { maxInFlight, rateLimitPerSecond: rate } = settings;
		const inFlight = this.inFlight.get(caller) ?? 0;
		if (maxInFlight !== null && inFlight >= maxInFlight) {
			return {
				refusal: {
					limitedBy: 'maxInFlight',
					retryAfterSeconds: 1,
					message: `Too many requests in flight (at most ${maxInFlight}); retry later`,
				},
			};
		}
		if (rate !== null) {
			const capacity = Math.max(1, rate);
			const previous = this.buckets.get(caller);
			const bucket: Bucket =
				previous && previous.rate === rate
					? {
							rate,
							tokens: Math.min(capacity, previous.tokens + ((now - previous.at) / 1000) * rate),
							at: now,
						}
					: { rate, tokens: capacity, at: now };
			this.buckets.set(caller, bucket);
			if (bucket.tokens < 1) {
				const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / rate));
				return {
					refusal: {
						limitedBy: 'rateLimitPerSecond',
						retryAfterSeconds,
						message: `Rate limit of ${rate} requests per second exceeded; retry after ${retryAfterSeconds} s`,
					},
				};
			}
			bucket.tokens -= 1;
		}
		this.inFlight.set(caller, inFlight + 1);
		let released = false;
		return {
			release: () => {
				if (released) return;
				released = true;
				const left = (this.inFlight.get(caller) ?? 1) - 1;
				if (left > 0) this.inFlight.set(caller, left);
				else this.inFlight.delete(caller);
			},
		};
	}

	/** Full buckets again (reset). Requests in flight stay counted until they are answered. */
	clearBuckets(): void {
		this.buckets = new Map();
	}
}
