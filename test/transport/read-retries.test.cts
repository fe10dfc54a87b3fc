/**
 * The retry policy of reads (retry.ts): 5xx, 429, network errors and malformed JSON are retried
 * with backoff (Retry-After honoured up to a cap); 4xx are not; exhausted retries give a
 * NodeApiError naming the action, the HTTP status and a hint. The waits are real (400 ms base).
 */
import {
	getNotification,
	listActiveUserIds,
	listUsersPage,
	sendNotification,
} from '../../nodes/CompanionPush/transport';
import { timings } from '../../devkit/processState.cts';
import {
	ACTIVE_USERS,
	count,
	DETAIL,
	errorInNode,
	expectNoSecret,
	logOf,
	REFRESH,
	secretsOf,
	storeFor,
	tokensSeen,
	TRANSPORT_SANDBOX,
	USER_LIST,
	useSandbox,
	valueInNode,
	type CredentialStore,
} from '../harness/index.cts';

describe('read retries', () => {
	const sandbox = useSandbox({
		...TRANSPORT_SANDBOX,
		clock: 'real',
		seedUsers: 30,
		resetBeforeEach: true,
	});
	let store: CredentialStore;
	let tokens: () => string[];
	beforeAll(async () => {
		store = storeFor(sandbox);
		tokens = tokensSeen(store);
		// Take the token once, so the logs below hold only the calls under test.
		await valueInNode(store, (context) => listActiveUserIds(context));
	});

	const statuses = (endpoint: string) => logOf(sandbox, endpoint).map((entry) => entry.status);

	/** A send registered by the secondary organization (through its own credential). */
	async function sendOfSecondaryOrg(): Promise<string> {
		const other = storeFor(sandbox, { credential: sandbox.orgs.secondary });
		const outcome = await valueInNode(other, (context) =>
			sendNotification(context, {
				title: 't',
				body: 'b',
				target_user_ids: sandbox.orgs.secondary.userIds.slice(0, 1),
			}),
		);
		return outcome.id;
	}

	test('the policy is the documented one', () => {
		expect(timings().retry).toEqual({
			maxAttempts: 4,
			maxRateLimitedTries: 20,
			baseDelayMs: 400,
			maxDelayMs: 8_000,
			maxRetryAfterMs: 60_000,
		});
	});

	test.each([500, 502, 503, 504])(
		'a %i then success: retried once, and the value comes back',
		async (status) => {
			sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'status5xx', status, times: 1 });
			const ids = await valueInNode(store, (context) => listActiveUserIds(context));
			expect(ids.length).toBeGreaterThan(0);
			expect(statuses(ACTIVE_USERS)).toEqual([status, 200]);
			expect(count(sandbox, REFRESH)).toBe(0);
		},
	);

	test('a 429 with Retry-After: waits at least that long, then succeeds', async () => {
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'rateLimit', retryAfterSeconds: 1, times: 1 });
		const ids = await valueInNode(store, (context) => listActiveUserIds(context));
		expect(ids.length).toBeGreaterThan(0);
		const [limited, retried] = logOf(sandbox, ACTIVE_USERS);
		expect([limited.status, retried.status]).toEqual([429, 200]);
		// Real clock: log times are wall-clock ms of arrival.
		expect(retried.time - limited.time).toBeGreaterThanOrEqual(1_000);
	});

	test('a network reset then success: retried once', async () => {
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'resetBefore', times: 1 });
		const ids = await valueInNode(store, (context) => listActiveUserIds(context));
		expect(ids.length).toBeGreaterThan(0);
		expect(statuses(ACTIVE_USERS)).toEqual([0, 200]);
	});

	test('a reset after the server answered (a read is safe to repeat): retried once', async () => {
		sandbox.addFault({ endpoint: USER_LIST, kind: 'resetAfter', times: 1 });
		const users = await valueInNode(store, (context) => listUsersPage(context, 0, 10));
		expect(users).toHaveLength(10);
		expect(statuses(USER_LIST)).toEqual([0, 200]);
	});

	test('malformed JSON then success: retried once, and the parsed value comes back', async () => {
		sandbox.addFault({ endpoint: USER_LIST, kind: 'malformedJson', times: 1 });
		const users = await valueInNode(store, (context) => listUsersPage(context, 0, 7));
		expect(users).toHaveLength(7);
		expect(users.every((user) => typeof user.id === 'string' && user.id.length > 0)).toBe(true);
		expect(logOf(sandbox, USER_LIST).map((entry) => entry.fault ?? null)).toEqual([
			'malformedJson',
			null,
		]);
	});

	test('5xx on every try: 4 requests, then a NodeApiError naming the action, the status and a hint', async () => {
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'status5xx', status: 503, times: 10 });
		const error = await errorInNode(store, (context) => listActiveUserIds(context));

		expect(statuses(ACTIVE_USERS)).toEqual([503, 503, 503, 503]);
		expect(error.constructor.name).toBe('NodeApiError');
		expect(error.httpCode).toBe('503');
		expect(error.message).toMatch(/^Reading the users with an active app failed with HTTP 503/);
		expect(error.description).toMatch(/transient platform error: wait and retry/i);
		expectNoSecret(error, [...secretsOf(sandbox), ...tokens()]);
	});

	test('no answer on every try: 4 requests, then an error naming the action and what happened', async () => {
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'resetBefore', times: 10 });
		const error = await errorInNode(store, (context) => listActiveUserIds(context));

		expect(statuses(ACTIVE_USERS)).toEqual([0, 0, 0, 0]);
		expect(error.constructor.name).toBe('NodeApiError');
		expect(error.message).toMatch(
			/^Reading the users with an active app failed: no answer from the API \(ECONNRESET\)/,
		);
		expect(error.description).toMatch(/Base URL/);
		expectNoSecret(error, [...secretsOf(sandbox), ...tokens()]);
	});

	test.each([
		[
			400,
			'listUsersPage with limit 5000 (limit above 1000 rejected)',
			/Reading the user list failed with HTTP 400/,
		],
		[
			403,
			'getNotification of another organization',
			/Reading notification \S+ failed with HTTP 403/,
		],
		[
			404,
			'getNotification of an unknown id',
			/Reading notification no-such-send failed with HTTP 404/,
		],
	])('a %i is not retried: %s', async (status, _what, message) => {
		sandbox.configure({ userListOverLimit: 'reject' });
		const foreignId = status === 403 ? await sendOfSecondaryOrg() : 'no-such-send';
		const before = sandbox.requestLog().length;
		const error = await errorInNode(store, (context) =>
			status === 400 ? listUsersPage(context, 0, 5000) : getNotification(context, foreignId),
		);
		const calls = sandbox.requestLog().slice(before);
		expect(calls.map((entry) => [entry.endpoint, entry.status])).toEqual([
			[status === 400 ? USER_LIST : DETAIL, status],
		]);
		expect(error.constructor.name).toBe('NodeApiError');
		expect(error.httpCode).toBe(String(status));
		expect(error.message).toMatch(message);
		expect(error.description).toEqual(expect.any(String));
		expect(error.description.length).toBeGreaterThan(10);
	});

	test('a Retry-After longer than the cap is not waited for: one request, then the 429 error', async () => {
		const started = Date.now();
		sandbox.addFault({
			endpoint: ACTIVE_USERS,
			kind: 'rateLimit',
			retryAfterSeconds: 61,
			times: 5,
		});
		const error = await errorInNode(store, (context) => listActiveUserIds(context));
		expect(statuses(ACTIVE_USERS)).toEqual([429]);
		expect(error.httpCode).toBe('429');
		expect(error.message).toMatch(/Reading the users with an active app failed with HTTP 429/);
		expect(error.description).toMatch(/too many requests/i);
		// It did not sit out the 61 s (jest would have timed out long before).
		expect(Date.now() - started).toBeLessThan(30_000);
	});

	test('a token endpoint that fails once (503) is retried like a read; the read then succeeds', async () => {
		const fresh = storeFor(sandbox);
		sandbox.addFault({ endpoint: REFRESH, kind: 'status5xx', status: 503, times: 1 });
		const ids = await valueInNode(fresh, (context) => listActiveUserIds(context));
		expect(ids.length).toBeGreaterThan(0);
		expect(statuses(REFRESH)).toEqual([503, 200]);
		expect(statuses(ACTIVE_USERS)).toEqual([200]);
		expect(fresh.get().writes).toBe(1);
	});
});
