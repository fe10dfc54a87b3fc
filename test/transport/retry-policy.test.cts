/**
 * The pure parts of the retry policy (retry.ts) and of the renewal decision (tokenRenewal.ts): the
 * numbers the integration tests rely on, pinned exactly.
 */
import { secretsFingerprint } from '../../credentials/companionPushApi/token';
import { DEFAULT_TIMINGS } from '../../devkit/processState.cts';
import { redactSecrets, shownAddress } from '../../credentials/companionPushApi/redaction';
import { tokenNeedsRenewal } from '../../nodes/CompanionPush/transport/tokenRenewal';
import { retryAfterMs, serverTimeMs } from '../../nodes/CompanionPush/transport/answers';
import {
	backoffDelayMs,
	isRetryableStatus,
	nextDelayMs,
} from '../../nodes/CompanionPush/transport/retry';

describe('backoff: exponential from 400 ms, capped at 8 s, equal jitter', () => {
	test.each([
		[1, 200, 400],
		[2, 400, 800],
		[3, 800, 1_600],
		[5, 3_200, 6_400],
		[6, 4_000, 8_000],
		[12, 4_000, 8_000],
	])('retry %i waits between %i and %i ms', (retry, low, high) => {
		expect(backoffDelayMs(retry, DEFAULT_TIMINGS.retry, () => 0)).toBe(low);
		expect(backoffDelayMs(retry, DEFAULT_TIMINGS.retry, () => 0.999999)).toBe(high);
		const any = backoffDelayMs(retry);
		expect(any).toBeGreaterThanOrEqual(low);
		expect(any).toBeLessThanOrEqual(high);
	});
});

describe('which statuses are retried', () => {
	test.each([429, 500, 502, 503, 504, 599])('%i: yes', (status) =>
		expect(isRetryableStatus(status)).toBe(true),
	);
	test.each([200, 202, 400, 401, 403, 404, 409, 422])('%i: no', (status) =>
		expect(isRetryableStatus(status)).toBe(false),
	);
});

describe('Retry-After', () => {
	const now = Date.parse('2026-03-02T09:00:00.000Z');
	test.each([
		['2', 2_000],
		['0', 0],
		['1.5', 1_500],
		[' 3 ', 3_000],
		[7, 7_000],
		[['4', '9'], 4_000],
		['Mon, 02 Mar 2026 09:00:05 GMT', 5_000],
	])('%j -> %i ms', (header, ms) => {
		expect(retryAfterMs(header, undefined, now)).toBe(ms);
	});
	test.each([undefined, null, '', 'soon', '-1', {}])('%j is ignored', (header) => {
		expect(retryAfterMs(header, undefined, now)).toBeUndefined();
	});
	test('the obsolete HTTP date forms are read (in GMT, as HTTP dates always are)', () => {
		expect(retryAfterMs('Mon Mar  2 09:00:05 2026', undefined, now)).toBe(5_000); // asctime
		expect(retryAfterMs('Monday, 02-Mar-26 09:00:05 GMT', undefined, now)).toBe(5_000); // RFC 850
		expect(serverTimeMs({ date: 'Mon Mar  2 09:00:05 2026' })).toBe(now + 5_000);
	});
	test('what is not an HTTP date is ignored (the caller backs off), not read as some other date', () => {
		expect(retryAfterMs('Mon, 02 Mar 2026 10:00:05 +0100', undefined, now)).toBeUndefined(); // an offset: not an HTTP date
		expect(retryAfterMs('Tue, 02 Mar 2026 09:00:05 GMT', undefined, now)).toBeUndefined(); // 2 March 2026 is a Monday
		expect(serverTimeMs({ date: '2026-03-02T09:00:05Z' })).toBeUndefined();
	});

	test('a date not in the future is ignored (the caller backs off instead of retrying at once)', () => {
		expect(retryAfterMs('Mon, 02 Mar 2026 08:59:00 GMT', undefined, now)).toBeUndefined();
		expect(retryAfterMs('Mon, 02 Mar 2026 09:00:00 GMT', undefined, now)).toBeUndefined();
	});

	test("a date is measured against the answer's Date header, the API's clock, not n8n's", () => {
		const apiClock = now - 10_000; // the API's clock runs 10 s behind n8n's
		expect(retryAfterMs('Mon, 02 Mar 2026 08:59:53 GMT', apiClock, now)).toBe(3_000);
		const aheadClock = now + 60_000; // the API's clock runs a minute ahead
		expect(retryAfterMs('Mon, 02 Mar 2026 09:01:03 GMT', aheadClock, now)).toBe(3_000);
	});

	test('replaces the backoff when present, up to the cap; beyond it: no retry', () => {
		expect(nextDelayMs(1, 5_000)).toBe(5_000);
		expect(nextDelayMs(1, 60_000)).toBe(60_000);
		expect(nextDelayMs(1, 61_000)).toBeUndefined();
		const backoff = nextDelayMs(1, undefined)!;
		expect(backoff).toBeGreaterThanOrEqual(200);
		expect(backoff).toBeLessThanOrEqual(400);
	});

	test(`after ${DEFAULT_TIMINGS.retry.maxAttempts} tries there is no further wait, even with a Retry-After`, () => {
		expect(nextDelayMs(DEFAULT_TIMINGS.retry.maxAttempts - 1, undefined)).toEqual(
			expect.any(Number),
		);
		expect(nextDelayMs(DEFAULT_TIMINGS.retry.maxAttempts, undefined)).toBeUndefined();
		expect(nextDelayMs(DEFAULT_TIMINGS.retry.maxAttempts, 1_000)).toBeUndefined();
	});
});

describe('tokenNeedsRenewal', () => {
	const now = 1_000_000;
	const secrets = {
		baseUrl: 'https://api.example.com',
		clientId: 'c',
		clientSecret: 's',
		refreshToken: 'r',
	};
	const issuedFor = secretsFingerprint(secrets);
	test.each([
		[
			{ accessToken: '', accessTokenRenewAfter: now + 10_000, accessTokenIssuedFor: issuedFor },
			true,
		],
		[
			{ accessToken: 'tok', accessTokenRenewAfter: now + 10_000, accessTokenIssuedFor: issuedFor },
			false,
		],
		[{ accessToken: 'tok', accessTokenRenewAfter: now, accessTokenIssuedFor: issuedFor }, true],
		[{ accessToken: 'tok', accessTokenRenewAfter: now - 1, accessTokenIssuedFor: issuedFor }, true],
		[
			{
				accessToken: 'tok',
				accessTokenRenewAfter: String(now + 10_000),
				accessTokenIssuedFor: issuedFor,
			},
			false,
		],
		[{ accessToken: 'tok', accessTokenIssuedFor: issuedFor }, true],
		[{ accessToken: 'tok', accessTokenRenewAfter: 'later', accessTokenIssuedFor: issuedFor }, true],
		// Issued for other secrets (the credential was edited), or before the fingerprint existed.
		[
			{ accessToken: 'tok', accessTokenRenewAfter: now + 10_000, accessTokenIssuedFor: 'other' },
			true,
		],
		[{ accessToken: 'tok', accessTokenRenewAfter: now + 10_000 }, true],
	])('%j -> %s', (token, expected) => {
		expect(tokenNeedsRenewal({ ...secrets, ...token } as never, now)).toBe(expected);
	});
});

describe('redactSecrets', () => {
	const secret = 'cps_0123456789abcdef';
	test('replaces a secret in a string, in nested JSON, and in an escaped form', () => {
		expect(redactSecrets(`token ${secret}!`, [secret])).toBe('token [redacted]!');
		expect(redactSecrets({ a: [{ b: `x${secret}y` }], n: 1 }, [secret])).toEqual({
			a: [{ b: 'x[redacted]y' }],
			n: 1,
		});
		const quoted = 'se"cret\\value-long';
		expect(redactSecrets({ m: `was ${quoted}` }, [quoted])).toEqual({ m: 'was [redacted]' });
	});
	test('leaves bodies without secrets untouched (same object), ignores missing or empty values', () => {
		const body = { ok: true, data: [1, 2], users: [{ id: 'u1' }] };
		expect(redactSecrets(body, [secret, undefined, ''])).toBe(body);
		expect(redactSecrets(undefined, [secret])).toBeUndefined();
		expect(redactSecrets('abc', [''])).toBe('abc');
	});
	test('a secret shorter than 8 characters is hidden too', () => {
		expect(redactSecrets('refused: s3cr', ['s3cr'])).toBe('refused: [redacted]');
		expect(redactSecrets({ detail: ['client s3cr unknown'] }, ['s3cr'])).toEqual({
			detail: ['client [redacted] unknown'],
		});
	});
	test('a secret with a quote or a backslash: hidden as is in text, escaped in JSON text, URL-encoded in an address', () => {
		const quoted = 'a"b\\c';
		expect(redactSecrets(`bad secret ${quoted}`, [quoted])).toBe('bad secret [redacted]');
		expect(redactSecrets(JSON.stringify({ secret: quoted }), [quoted])).toBe(
			'{"secret":"[redacted]"}',
		);
		expect(redactSecrets(`https://x.example/cb?s=${encodeURIComponent(quoted)}`, [quoted])).toBe(
			'https://x.example/cb?s=[redacted]',
		);
		expect(redactSecrets({ [`key ${quoted}`]: 1 }, [quoted])).toEqual({ 'key [redacted]': 1 });
	});
	test('a body nested 100,000 deep does not throw: it is cut where nothing is shown any more', () => {
		let deep: unknown = { message: 'bottom' };
		for (let level = 0; level < 100_000; level++) deep = { error: deep };
		const redacted = redactSecrets(deep, [secret]) as Record<string, unknown>;
		expect(JSON.stringify(redacted)).toContain('[nested too deep to show]');
		expect(() => JSON.stringify(deep)).toThrow(RangeError);
	});
});

describe('shownAddress: origin and path only', () => {
	test.each([
		['https://login.example.com/cb?access_token=tok123&x=1#frag', 'https://login.example.com/cb'],
		['http://ops:pass@10.0.0.1:8080/a/b?c', 'http://10.0.0.1:8080/a/b'],
		['/login?client_secret=abc', '/login'],
		['//elsewhere.example/x?y=1', '//elsewhere.example/x'],
	])('%s -> %s', (address, shown) => {
		expect(shownAddress(address)).toBe(shown);
	});
});
