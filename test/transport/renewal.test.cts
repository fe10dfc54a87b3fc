/**
 * Token renewal by the transport: n8n itself renews only an empty token or after a 401, so the
 * transport forces a renewal shortly before expiry (an emptied token passed as the decrypted
 * credential), shares it across concurrent calls, and on a 401 renews and retries once only. A token
 * goes only to the Base URL it was issued for.
 */
import {
	getNotification,
	listActiveUserIds,
	listUsers,
	sendNotification,
} from '../../nodes/CompanionPush/transport';
import { secretsFingerprint } from '../../credentials/companionPushApi/token';
import {
	ACTIVE_USERS,
	count,
	errorInNode,
	expectNoSecret,
	expectNoTenantId,
	fakeStore,
	inNode,
	logOf,
	REFRESH,
	runProbe,
	secretsOf,
	SEND,
	sendBody,
	storeFor,
	tokensSeen,
	TRANSPORT_SANDBOX,
	useFakeApis,
	USER_LIST,
	useSandbox,
	valueInNode,
	wait,
} from '../harness/index.cts';
import type { FakeRequest } from '../harness/index.cts';

describe('token renewal (manual clock: the token never expires on its own)', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, seedUsers: 30, resetBeforeEach: true });
	/** A send to two users with one phone each. */
	const twoUsersSend = () => sendBody(sandbox.orgs.primary.usersOfKind('onePhone', 2));

	test('the first call with an empty token renews it exactly once, before the API call', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		expect(
			sandbox.requestLog().map((entry) => [entry.endpoint, entry.status, entry.authorization]),
		).toEqual([
			[REFRESH, 200, 'missing'],
			[ACTIVE_USERS, 200, 'valid'],
		]);
		expect(store.get().writes).toBe(1);
	});

	test('many calls over many items of one execution, and a second execution, share that one refresh', async () => {
		const store = storeFor(sandbox);
		const items = Array.from({ length: 12 }, (_, index) => ({ index }));
		const { run } = await inNode(
			store,
			async (context) => {
				for (let itemIndex = 0; itemIndex < context.getInputData().length; itemIndex++) {
					await listActiveUserIds(context, itemIndex);
				}
				await listUsers(context, 5);
			},
			items,
		);
		expect(run.error).toBeUndefined();
		await valueInNode(store, (context) => listActiveUserIds(context));

		expect(count(sandbox, REFRESH)).toBe(1);
		expect(count(sandbox, ACTIVE_USERS)).toBe(13);
		expect(count(sandbox, USER_LIST)).toBe(1);
		expect(store.get().writes).toBe(1);
		expect(
			logOf(sandbox).filter(
				(entry) => entry.endpoint !== REFRESH && entry.authorization !== 'valid',
			),
		).toEqual([]);
	});

	test('a token past its renewal time (still valid at the API) is renewed proactively: no 401 is ever spent', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		const firstToken = store.get().data.accessToken;
		store.get().data.accessTokenRenewAfter = Date.now() - 1;

		await valueInNode(store, (context) => listActiveUserIds(context));

		expect(count(sandbox, REFRESH)).toBe(2);
		expect(store.get().writes).toBe(2);
		expect(store.get().data.accessToken).not.toBe(firstToken);
		expect(Number(store.get().data.accessTokenRenewAfter)).toBeGreaterThan(Date.now() + 3_000_000);
		// Order: the renewal came before the call, and every API call was authorized.
		expect(logOf(sandbox).map((entry) => [entry.endpoint, entry.status])).toEqual([
			[REFRESH, 200],
			[ACTIVE_USERS, 200],
			[REFRESH, 200],
			[ACTIVE_USERS, 200],
		]);
	});

	test('20 concurrent reads with a stale token make exactly one refresh', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		store.get().data.accessTokenRenewAfter = Date.now() - 1;
		await sandbox.reset();

		const results = await valueInNode(store, (context) =>
			Promise.all(Array.from({ length: 20 }, () => listActiveUserIds(context))),
		);

		expect(results).toHaveLength(20);
		expect(new Set(results.map((ids) => ids.join())).size).toBe(1);
		expect(count(sandbox, REFRESH)).toBe(1);
		expect(count(sandbox, ACTIVE_USERS)).toBe(20);
		expect(
			logOf(sandbox, ACTIVE_USERS).every(
				(entry) => entry.status === 200 && entry.authorization === 'valid',
			),
		).toBe(true);
		expect(store.get().writes).toBe(2);
	});

	test('20 concurrent reads with an empty token make exactly one refresh', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) =>
			Promise.all(Array.from({ length: 20 }, () => listActiveUserIds(context))),
		);
		expect(count(sandbox, REFRESH)).toBe(1);
		expect(count(sandbox, ACTIVE_USERS)).toBe(20);
		expect(store.get().writes).toBe(1);
	});

	test('20 concurrent reads whose token the API dropped: every call gets its 401, one refresh serves them all', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		sandbox.expireAccessTokens();
		await sandbox.reset();

		const results = await valueInNode(store, (context) =>
			Promise.all(Array.from({ length: 20 }, () => listActiveUserIds(context))),
		);

		expect(results).toHaveLength(20);
		expect(count(sandbox, REFRESH)).toBe(1);
		const answered = logOf(sandbox, ACTIVE_USERS).filter((entry) => entry.status === 200);
		expect(answered).toHaveLength(20);
		// No call needed more than its one retry.
		expect(count(sandbox, ACTIVE_USERS)).toBeLessThanOrEqual(40);
	});

	test('a 401 that arrives after a concurrent call already renewed the token reuses that token: one refresh', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		sandbox.expireAccessTokens();
		await sandbox.reset();
		// The first call's 401 is held back 300 ms: the others renew meanwhile.
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'delay', delayMs: 300, times: 1 });

		const results = await valueInNode(store, (context) =>
			Promise.all(Array.from({ length: 5 }, () => listActiveUserIds(context))),
		);

		expect(results).toHaveLength(5);
		expect(count(sandbox, REFRESH)).toBe(1);
		expect(logOf(sandbox, ACTIVE_USERS).filter((entry) => entry.status === 200)).toHaveLength(5);
		expect(count(sandbox, ACTIVE_USERS)).toBe(10);
	});

	test('items run through several executions at once (parallel workflows) still share one refresh', async () => {
		const store = storeFor(sandbox);
		await Promise.all(
			Array.from({ length: 5 }, () =>
				runProbe(store, async function () {
					await Promise.all(Array.from({ length: 4 }, () => listActiveUserIds(this)));
					return [[{ json: {} }]];
				}),
			),
		);
		expect(count(sandbox, ACTIVE_USERS)).toBe(20);
		expect(count(sandbox, REFRESH)).toBe(1);
	});

	test('a 401 on a valid token: one refresh, one retry, success', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		await sandbox.reset();
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'unauthorized', times: 1 });

		const ids = await valueInNode(store, (context) => listActiveUserIds(context));

		expect(ids.length).toBeGreaterThan(0);
		expect(logOf(sandbox).map((entry) => [entry.endpoint, entry.status])).toEqual([
			[ACTIVE_USERS, 401],
			[REFRESH, 200],
			[ACTIVE_USERS, 200],
		]);
	});

	test('401s after two renewals of its own are an error: three tries, two refreshes, no more', async () => {
		const store = storeFor(sandbox);
		const seen = tokensSeen(store);
		await valueInNode(store, (context) => listActiveUserIds(context));
		await sandbox.reset();
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'unauthorized', times: 5 });

		const error = await errorInNode(store, (context) => listActiveUserIds(context));

		expect(logOf(sandbox).map((entry) => [entry.endpoint, entry.status])).toEqual([
			[ACTIVE_USERS, 401],
			[REFRESH, 200],
			[ACTIVE_USERS, 401],
			// The second renewal is for a token another process revoked (see the revocation tests).
			[REFRESH, 200],
			[ACTIVE_USERS, 401],
		]);
		expect(error.constructor.name).toBe('NodeApiError');
		expect(error.httpCode).toBe('401');
		expect(error.message).toMatch(/Reading the users with an active app failed with HTTP 401/);
		expect(error.description).toMatch(/refused even after it was renewed/);
		expectNoSecret(error, [...secretsOf(sandbox), ...seen()]);
		expect(seen()).toHaveLength(3);
	});

	test('a send answered 401 is renewed and sent once more: one registered send', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		await sandbox.reset();
		sandbox.addFault({ endpoint: SEND, kind: 'unauthorized', times: 1 });

		const outcome = await valueInNode(store, (context) =>
			sendNotification(context, twoUsersSend()),
		);

		expect(logOf(sandbox).map((entry) => [entry.endpoint, entry.status])).toEqual([
			[SEND, 401],
			[REFRESH, 200],
			[SEND, 202],
		]);
		expect(sandbox.notifications().map((record) => record.id)).toEqual([outcome.id]);
	});

	test('a send answered 401 every time fails after two renewals, registers nothing and is not tried a fourth time', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		await sandbox.reset();
		sandbox.addFault({ endpoint: SEND, kind: 'unauthorized', times: 5 });

		const error = await errorInNode(store, (context) => sendNotification(context, twoUsersSend()));

		expect(error.httpCode).toBe('401');
		expect(count(sandbox, SEND)).toBe(3);
		expect(count(sandbox, REFRESH)).toBe(2);
		expect(sandbox.notifications()).toEqual([]);
	});

	test('tenant_id is never sent: not by the refresh, the reads, or a send, even when a caller slips one in', async () => {
		const store = storeFor(sandbox);
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 1);
		const outcome = await valueInNode(store, async (context) => {
			await listActiveUserIds(context);
			await listUsers(context, 3);
			const sent = await sendNotification(context, {
				...twoUsersSend(),
				tenant_id: 'org-secondary',
			} as never);
			await getNotification(context, sent.id);
			return sent;
		});
		expect(outcome.id).toBeTruthy();
		expect(count(sandbox, SEND)).toBe(1);
		expect(logOf(sandbox, SEND)[0].status).toBe(202);
		expect(users).toHaveLength(1);
		expect(sandbox.requestLog().length).toBeGreaterThanOrEqual(5);
		expectNoTenantId(sandbox);
	});
});

describe('token renewal on a real clock with a short token life', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, clock: 'real', tokenLifetimeSeconds: 3 });

	test('a call inside the renewal margin renews first: the API never sees an expired token', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		const renewAfter = Number(store.get().data.accessTokenRenewAfter);
		// 3 s life: renewed 250 ms (a twelfth) before it expires.
		const expiresAt = renewAfter + 250;

		// A call well before the renewal point reuses the token.
		await valueInNode(store, (context) => listActiveUserIds(context));
		expect(count(sandbox, REFRESH)).toBe(1);

		await wait(Math.max(0, renewAfter - Date.now() + 20));
		const calledAt = Date.now();
		await valueInNode(store, (context) => listActiveUserIds(context));

		expect(count(sandbox, REFRESH)).toBe(2);
		expect(
			logOf(sandbox).map((entry) => [entry.endpoint, entry.status, entry.authorization]),
		).toEqual([
			[REFRESH, 200, 'missing'],
			[ACTIVE_USERS, 200, 'valid'],
			[ACTIVE_USERS, 200, 'valid'],
			[REFRESH, 200, 'missing'],
			[ACTIVE_USERS, 200, 'valid'],
		]);
		// The proof is only meaningful if the call was made while the old token still worked.
		expect(calledAt).toBeLessThan(expiresAt);
	});
});

describe('a token is only sent to the Base URL it was issued for', () => {
	const fakeApis = useFakeApis();

	test('the Base URL edited mid-run, its new token saved: after a 401 the old address never gets the new token, and the edit stays', async () => {
		let revoked = false;
		const answer = (request: FakeRequest) =>
			revoked || request.authorization !== 'Bearer token-old-0123456789'
				? { status: 401, body: { error: 'invalid_token' } }
				: { body: { ok: true, data: { user_ids: ['u1'], count: 1 } } };
		const oldApi = await fakeApis.start(answer, () => ({
			body: { access_token: 'token-renewed-at-old-0123', expires_in: 3600 },
		}));
		const newApi = await fakeApis.start(() => ({
			body: { ok: true, data: { user_ids: ['u2'], count: 1 } },
		}));
		const store = fakeStore(oldApi);
		const issue = (baseUrl: string, accessToken: string) => {
			const data = {
				...store.get().data,
				baseUrl,
				accessToken,
				accessTokenRenewAfter: Date.now() + 3_000_000,
			};
			store.get().data = { ...data, accessTokenIssuedFor: secretsFingerprint(data) };
		};
		issue(oldApi.baseUrl, 'token-old-0123456789');

		const { value, error } = await inNode(store, async (context) => {
			const first = await listActiveUserIds(context);
			// Meanwhile the credential is edited to the new address, and another process saves a token for it.
			issue(newApi.baseUrl, 'token-new-0123456789');
			revoked = true;
			return [first, await listActiveUserIds(context)];
		});

		expect(value).toBeUndefined();
		expect((error as Error).message).toMatch(
			/^Reading the users with an active app failed with HTTP 401/,
		);
		expect(oldApi.requests.map((request) => request.authorization)).not.toContain(
			'Bearer token-new-0123456789',
		);
		expect(
			oldApi.requests.filter((request) => request.path === '/auth/oauth/v2/refresh'),
		).toHaveLength(0);
		expect(store.get().data).toMatchObject({
			baseUrl: newApi.baseUrl,
			accessToken: 'token-new-0123456789',
		});
		// The next run reads the edited credential: the new address, with its own token.
		expect(await valueInNode(store, (context) => listActiveUserIds(context))).toEqual(['u2']);
		expect(newApi.requests.map((request) => request.authorization)).toEqual([
			'Bearer token-new-0123456789',
		]);
	});
});
