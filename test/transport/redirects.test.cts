/**
 * Redirects are never followed: followed, n8n would carry the token (or, for the token renewal, the
 * secrets) to the other address, and turn a send's POST into a GET whose answer looks like the
 * send's. A redirect is an error that says where it pointed (origin and path: a query or fragment
 * may carry a secret); the other address gets nothing.
 */
import {
	failedSendOutcome,
	listActiveUserIds,
	sendNotification,
} from '../../nodes/CompanionPush/transport';
import { runNode } from '../../devkit/engine.cts';
import {
	errorInNode,
	expectNoSecret,
	fakeCredential,
	fakeStore,
	startFakeApi,
	useFakeApis,
} from '../harness/index.cts';
import type { FakeApi } from '../harness/index.cts';

describe('redirects', () => {
	let elsewhere: FakeApi;
	const running: FakeApi[] = [];
	beforeAll(async () => {
		elsewhere = await startFakeApi(() => ({
			body: { ok: true, data: { user_ids: ['x'], count: 1 } },
		}));
	});
	afterEach(async () => {
		for (const api of running.splice(0)) await api.stop();
	});
	afterAll(async () => await elsewhere.stop());

	async function redirecting(options: { refresh?: boolean; api?: boolean }) {
		const moved = (path: string) => ({
			status: 301,
			body: '',
			raw: true,
			headers: { location: `${elsewhere.baseUrl}${path}` },
		});
		const api = await startFakeApi(
			(request) =>
				options.api
					? moved(request.path)
					: { body: { ok: true, data: { id: 'n1', status: 'sending' } } },
			options.refresh ? (request) => moved(request.path) : undefined,
		);
		running.push(api);
		return { api, store: fakeStore(api) };
	}

	test('the token renewal is not followed: the error says where it pointed, the secrets went nowhere else', async () => {
		const { api, store } = await redirecting({ refresh: true });
		const error = await errorInNode(store, (context) => listActiveUserIds(context));
		expect(error.message).toContain(
			`The API answered the token renewal with a redirect (HTTP 301) to ${elsewhere.baseUrl}/auth/oauth/v2/refresh`,
		);
		expect(api.requests.map((request) => request.path)).toEqual(['/auth/oauth/v2/refresh']);
		expect(elsewhere.requests).toEqual([]);
	});

	test('a read is not followed: the error says where it pointed, no token went there', async () => {
		const { api, store } = await redirecting({ api: true });
		const error = await errorInNode(store, (context) => listActiveUserIds(context));
		expect(error.message).toBe(
			`Reading the users with an active app failed: the API answered with a redirect (HTTP 301) to ${elsewhere.baseUrl}/user-device/users`,
		);
		expect(error.description).toMatch(/Check the Base URL/);
		expect(api.requests.filter((request) => request.path === '/user-device/users')).toHaveLength(1);
		expect(elsewhere.requests).toEqual([]);
	});

	test('a send is not followed: nothing was sent, and nothing went to the other address', async () => {
		const { api, store } = await redirecting({ api: true });
		const error = await errorInNode(store, (context) =>
			sendNotification(context, { title: 't', body: 'b', target_user_ids: ['u1'] }),
		);
		expect(error.message).toContain(
			'Sending the notification failed: the API answered with a redirect (HTTP 301)',
		);
		expect(failedSendOutcome(error)).toBe('notSent');
		expect(
			api.requests.filter((request) => request.path === '/push-notification/send'),
		).toHaveLength(1);
		expect(elsewhere.requests).toEqual([]);
	});
});

describe('a redirect whose address carries a secret', () => {
	const fakeApis = useFakeApis();

	/** An API that redirects every call (and, with `refresh`, the token renewal) to a login page whose
	 * query and fragment hold the token and the credential's secrets. */
	async function leakingRedirect(options: { refresh?: boolean } = {}) {
		let location = '';
		const redirect = () => ({ status: 302, body: '', raw: true, headers: { location } });
		const api = await fakeApis.start(redirect, options.refresh ? redirect : undefined);
		const credential = fakeCredential(api);
		location = `https://login.example.com/sso/callback?access_token=${api.accessToken}&client_secret=${encodeURIComponent(credential.clientSecret)}#refresh=${credential.refreshToken}`;
		return {
			api,
			store: fakeStore(api),
			hidden: [credential.clientSecret, credential.refreshToken, api.accessToken],
		};
	}

	test('a read: the error shows the origin and path only, nothing of the query or fragment', async () => {
		const { store, hidden } = await leakingRedirect();
		const error = await errorInNode(store, (context) => listActiveUserIds(context));
		expect(error.message).toBe(
			'Reading the users with an active app failed: the API answered with a redirect (HTTP 302) to https://login.example.com/sso/callback',
		);
		expectNoSecret(error, hidden);
	});

	test('Continue On Fail: the error item and the run n8n saves hold no secret', async () => {
		const { store, hidden } = await leakingRedirect();
		const result = await runNode({
			type: 'companionPush',
			credentials: store,
			parameters: { resource: 'user', operation: 'getMany', returnAll: true },
			continueOnFail: true,
		});
		expect(result.items).toHaveLength(1);
		expect(String(result.items[0].json.error)).toMatch(
			/redirect \(HTTP 302\) to https:\/\/login\.example\.com\/sso\/callback$/,
		);
		const saved = JSON.stringify(result.run);
		for (const secret of hidden) expect(saved).not.toContain(secret);
	});

	test('the token renewal: the error shows the origin and path only', async () => {
		const { store, hidden } = await leakingRedirect({ refresh: true });
		const error = await errorInNode(store, (context) => listActiveUserIds(context));
		expect(error.message).toContain(
			'The API answered the token renewal with a redirect (HTTP 302) to https://login.example.com/sso/callback.',
		);
		expectNoSecret(error, hidden);
	});
});
