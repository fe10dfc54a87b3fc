/**
 * No secret or token in any error: every failure the transport can report is serialized (its JSON,
 * message, description, stack, causes; and the run error n8n keeps) and searched for the client
 * secret, the refresh token and every access token issued during the test.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import {
	cancelNotification,
	failedSendOutcome,
	getNotification,
	listActiveUserIds,
	listNotifications,
	listUsersPage,
	sendNotification,
} from '../../nodes/CompanionPush/transport';
import {
	ACTIVE_USERS,
	CredentialStore,
	DETAIL,
	errorInNode,
	expectNoSecret,
	exposedText,
	fakeCredential,
	fakeStore,
	runNode,
	runProbe,
	SEND,
	SEND_LIST,
	storeFor,
	tokensSeen,
	TRANSPORT_SANDBOX,
	useFakeApis,
	USER_LIST,
	useSandbox,
	valueInNode,
} from '../harness/index.cts';

describe('no secret or token in any error', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, seedUsers: 30, resetBeforeEach: true });
	let store: CredentialStore;
	let tokens: () => string[];
	const secrets = () => [
		sandbox.orgs.primary.clientSecret,
		sandbox.orgs.primary.refreshToken,
		...tokens(),
	];
	beforeAll(async () => {
		store = storeFor(sandbox);
		tokens = tokensSeen(store);
		await valueInNode(store, (context) => listActiveUserIds(context));
	});

	const request = () => ({
		title: 'T',
		body: 'B',
		target_user_ids: sandbox.orgs.primary.usersOfKind('onePhone', 1),
	});

	const cases: Array<[string, () => void, (context: IExecuteFunctions) => Promise<unknown>]> = [
		[
			'a 401 three times (renewed twice in between)',
			() => sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'unauthorized', times: 3 }),
			(c) => listActiveUserIds(c),
		],
		[
			'a 400',
			() => sandbox.configure({ userListOverLimit: 'reject' }),
			(c) => listUsersPage(c, 0, 5000),
		],
		['a 404', () => undefined, (c) => getNotification(c, 'missing')],
		[
			'a 409 on cancel',
			() => undefined,
			async (c) => cancelNotification(c, (await sendNotification(c, request())).id),
		],
		[
			'a 422 on send',
			() => undefined,
			(c) => sendNotification(c, { ...request(), target_user_ids: [] }),
		],
		[
			'a 429 beyond the cap',
			() => sandbox.addFault({ endpoint: USER_LIST, kind: 'rateLimit', retryAfterSeconds: 120 }),
			(c) => listUsersPage(c, 0, 5),
		],
		[
			'a 202 with a malformed body, and the list unreadable',
			() => {
				sandbox.addFault({ endpoint: SEND, kind: 'malformedJson' });
				sandbox.addFault({ endpoint: SEND_LIST, kind: 'malformedJson', times: 4 });
			},
			(c) => sendNotification(c, request()),
		],
		[
			'an unknown outcome (reset, list unreadable)',
			() => {
				sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
				sandbox.addFault({ endpoint: SEND_LIST, kind: 'unauthorized', times: 3 });
			},
			(c) => sendNotification(c, request()),
		],
		[
			'an unexpected body',
			() => sandbox.addFault({ endpoint: DETAIL, kind: 'malformedJson', times: 4 }),
			(c) => getNotification(c, 'x'),
		],
		[
			'a refused renewal',
			() => sandbox.revokeRefreshToken(sandbox.orgs.primary.clientId),
			(c) => listNotifications(c),
		],
	];

	test.each(cases)('%s', async (what, setUp, call) => {
		setUp();
		if (what === 'a refused renewal') store.get().data.accessTokenRenewAfter = 0;
		const error = await errorInNode(store, call);
		expect(error.constructor.name).toBe('NodeApiError');
		expectNoSecret(error, secrets());
	});

	test("a 403 (another organization's send)", async () => {
		const other = storeFor(sandbox, { credential: sandbox.orgs.secondary });
		const otherTokens = tokensSeen(other);
		const theirs = await valueInNode(other, (context) =>
			sendNotification(context, {
				title: 'T',
				body: 'B',
				target_user_ids: sandbox.orgs.secondary.userIds.slice(0, 1),
			}),
		);
		const error = await errorInNode(store, (context) => getNotification(context, theirs.id));
		expect(error.httpCode).toBe('403');
		expectNoSecret(error, [
			...secrets(),
			sandbox.orgs.secondary.clientSecret,
			sandbox.orgs.secondary.refreshToken,
			...otherTokens(),
		]);
	});

	test('the run error n8n keeps for a failed node holds no secret either', async () => {
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'unauthorized', times: 3 });
		const result = await runProbe(store, async function () {
			await listActiveUserIds(this);
			return [[{ json: {} }]];
		});
		expect(result.error).toBeDefined();
		expect(result.error!.message).toMatch(/HTTP 401/);
		expectNoSecret(result.error, secrets());
		expectNoSecret(result.run.data, secrets());
		expect(JSON.stringify(result.run)).not.toContain(sandbox.orgs.primary.clientSecret);
	});
});

describe('an API that echoes what it was sent into its answers', () => {
	const fakeApis = useFakeApis();

	test('a token or secret echoed in an error body or an unexpected body is not shown', async () => {
		// A careless API: errors repeat the Authorization header; the list answers the same.
		const api = await fakeApis.start((request) =>
			request.path === '/user/list'
				? {
						status: 400,
						body: { ok: false, error: { message: `bad request from ${request.authorization}` } },
					}
				: { status: 200, body: { echo: request.authorization } },
		);
		const store = fakeStore(api);
		const credential = fakeCredential(api);
		const hidden = [credential.clientSecret, credential.refreshToken, api.accessToken];

		const badRequest = await errorInNode(store, (context) => listUsersPage(context, 0, 5));
		expect(badRequest.httpCode).toBe('400');
		expect(badRequest.message).toMatch(
			/^Reading the user list failed with HTTP 400: bad request from Bearer /,
		);
		expectNoSecret(badRequest, hidden);

		const unexpected = await errorInNode(store, (context) => listNotifications(context));
		expect(unexpected.description).toMatch(/^What came back: \{"echo":"Bearer /);
		expectNoSecret(unexpected, hidden);
	});

	test('a token echoed in a success body does not reach the node output', async () => {
		const api = await fakeApis.start((request) => ({
			body: [{ id: 'u1', name: 'Ada', note: `called with ${request.authorization}` }],
		}));
		const result = await runNode({
			type: 'companionPush',
			credentials: fakeStore(api),
			parameters: { resource: 'user', operation: 'getMany', limit: 1 },
		});
		expect(result.error).toBeUndefined();
		expect(result.items.map((item) => item.json)).toEqual([
			{ id: 'u1', name: 'Ada', note: 'called with Bearer [redacted]' },
		]);
		expect(JSON.stringify(result.run)).not.toContain(api.accessToken);
	});

	test('a secret shorter than 8 characters, or holding a quote and a backslash, echoed in a text body is not shown', async () => {
		for (const clientSecret of ['s3Cr7', 'se"cr\\et-0123456789']) {
			const api = await fakeApis.start(() => ({
				status: 400,
				raw: true,
				body: `client secret ${clientSecret} is not allowed here`,
			}));
			const store = new CredentialStore();
			store.add({ ...fakeCredential(api), clientSecret });
			const error = await errorInNode(store, (context) => listUsersPage(context, 0, 5));
			expect(error.message).toBe(
				'Reading the user list failed with HTTP 400: client secret [redacted] is not allowed here',
			);
			expect(exposedText(error)).not.toContain(clientSecret);
		}
	});

	describe('a secret echoed in an encoding of its own is not shown', () => {
		const clientSecret = 'k+9/Zq=é-0123456789';
		const lowerCaseEscapes = encodeURIComponent(clientSecret).replace(/%[0-9A-F]{2}/g, (escape) =>
			escape.toLowerCase(),
		);
		const phpJson = JSON.stringify(clientSecret).replace(/\//g, '\\/').replace('é', '\\u00e9');

		test('the encodings are the ones meant', () => {
			expect(lowerCaseEscapes).toBe('k%2b9%2fZq%3d%c3%a9-0123456789');
			expect(phpJson).toBe('"k+9\\/Zq=\\u00e9-0123456789"');
		});

		test.each([
			['URL-encoded with lower-case escapes', `client_secret=${lowerCaseEscapes}&grant=refresh`],
			[
				'in JSON with escaped slashes (PHP)',
				`{"error":"invalid client","client_secret":${phpJson}}`,
			],
		])('%s, in a text body', async (_encoding, echoed) => {
			const api = await fakeApis.start(() => ({
				status: 400,
				raw: true,
				body: `<pre>bad request: ${echoed}</pre>`,
			}));
			const store = new CredentialStore();
			store.add({ ...fakeCredential(api), clientSecret });
			const error = await errorInNode(store, (context) => listUsersPage(context, 0, 5));
			expect(error.httpCode).toBe('400');
			expect(error.message).toContain('[redacted]');
			const shown = exposedText(error);
			for (const form of [clientSecret, lowerCaseEscapes, phpJson.slice(1, -1)])
				expect(shown).not.toContain(form);
		});
	});

	test('a send answered 400 with an error body nested 100,000 deep: the error shows the HTTP status, the send is "not sent"', async () => {
		const depth = 100_000;
		const nested = `${'{"error":'.repeat(depth)}{}${'}'.repeat(depth)}`;
		const api = await fakeApis.start(() => ({
			status: 400,
			raw: true,
			body: nested,
			headers: { 'content-type': 'application/json' },
		}));
		const error = await errorInNode(fakeStore(api), (context) =>
			sendNotification(context, { title: 'T', body: 'B', target_user_ids: ['u1'] }),
		);
		expect(error.message).toBe('Sending the notification failed with HTTP 400');
		expect(error.httpCode).toBe('400');
		expect(failedSendOutcome(error)).toBe('notSent');
		expect(
			api.requests.filter((request) => request.path === '/push-notification/send'),
		).toHaveLength(1);
	});
});
