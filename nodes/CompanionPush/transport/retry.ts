/**
 * The retry policy for reads (GET, and the cancel call, which is safe to repeat):
 * - retried on 5xx, 429 and network errors (reset, refused, timeout), at most `maxAttempts` tries;
 * - waits grow exponentially from `baseDelayMs`, capped at `maxDelayMs`, with "equal jitter"
 *   (half fixed, half random) so parallel workflows do not retry in step;
 * - a `Retry-After` header (seconds or an HTTP date) replaces the computed wait, up to
 *   `maxRetryAfterMs`; a longer one is not waited for: the error goes to the workflow.
 * Sends follow their own rule (see safe-send.ts): a send is never blindly repeated.
 */
export const RETRY_POLICY = {
	maxAttempts: 4,
	baseDelayMs: 400,
	maxDelayMs: 8_000,
	maxRetryAfterMs: 60_000,
};

export function isRetryableStatus(status: number): boolean {
	return status === 429 || status >= 500;
}

/** Wait before retry number `retry` (1 for the first retry). */
export function backoffDelayMs(retry: number, random: () => number = Math.random): number {
	const ceiling = Math.min(RETRY_POLICY.maxDelayMs, RETRY_POLICY.baseDelayMs * 2 ** (retry - 1));
	return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Milliseconds asked by a Retry-After header, or undefined when absent or unreadable. */
export function retryAfterMs(header: unknown, nowMs: number): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (typeof value !== 'string' && typeof value !== 'number') return undefined;
	const text = String(value).trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	// An HTTP date names its day or month ("Mon, 02 Mar 2026 09:00:05 GMT"); Date.parse alone would
	// also read "-1" or "7 " as dates in the past, i.e. "retry at once".
	if (!/[a-z]/i.test(text)) return undefined;
	const date = Date.parse(text);
	return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** The wait before the next try, honouring Retry-After; undefined means "do not retry". */
export function nextDelayMs(retry: number, retryAfterHeader: unknown, nowMs: number): number | undefined {
	if (retry >= RETRY_POLICY.maxAttempts) return undefined;
	const asked = retryAfterMs(retryAfterHeader, nowMs);
	if (asked === undefined) return backoffDelayMs(retry);
	return asked > RETRY_POLICY.maxRetryAfterMs ? undefined : asked;
}
