import { ApiError, clientError } from '../apiError.cts';
import type { FaultSpec } from '../types.cts';

/**
 * The error a fault answers instead of the real answer (unauthorized, forbidden, status4xx,
 * rateLimit, status5xx). `apiNow` is the API's clock, which a Retry-After date is written on.
 */
export function faultError(fault: FaultSpec, apiNow: number): ApiError {
	switch (fault.kind) {
		case 'unauthorized':
			return clientError(401);
		case 'forbidden':
			return clientError(403);
		case 'status4xx':
			return clientError(fault.status ?? 400);
		case 'rateLimit':
			return new ApiError(
				429,
				'rate_limited',
				'Too many requests; retry later',
				undefined,
				[],
				retryAfter(fault, apiNow) ?? {},
			);
		default: {
			// status5xx: a Retry-After only when the fault asks for one.
			const status = fault.status ?? 503;
			return new ApiError(
				status,
				'platform_error',
				'Transient platform error; wait and retry',
				undefined,
				[],
				retryAfter(fault, apiNow) ?? {},
			);
		}
	}
}

/**
 * The Retry-After header of a rateLimit fault (always; 1 s by default) or of a status5xx fault (only
 * with retryAfterSeconds or retryAfterAsDate). As a date: the API's now plus the seconds, rounded up
 * to the whole second an HTTP date can say, so a client that waits until it waits at least that long.
 */
function retryAfter(fault: FaultSpec, apiNow: number): { 'retry-after': string } | undefined {
	const asked = fault.retryAfterSeconds !== undefined || fault.retryAfterAsDate === true;
	if (fault.kind !== 'rateLimit' && !asked) return undefined;
	const seconds = fault.retryAfterSeconds ?? 1;
	if (!fault.retryAfterAsDate) return { 'retry-after': String(seconds) };
	const until = Math.ceil((apiNow + seconds * 1000) / 1000) * 1000;
	return { 'retry-after': new Date(until).toUTCString() };
}
