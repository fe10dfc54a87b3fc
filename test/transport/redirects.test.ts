/**
 * Redirects are never followed: followed, n8n would carry the token (or, for the token renewal, the
 * secrets) to the other address, and turn a send's POST into a GET whose answer looks like the
 * send's. A redirect is an error that says where it pointed; the other address gets nothing.
 */
import { failedSendOutcome, listActiveUserIds, sendNotification } from '../../nodes/CompanionPush/transport';
import { errorInNode, fakeStore, startFakeApi } from '../harness';
import type { FakeApi } from '../harness';

describe('redirects', () => {
	let elsewhere: FakeApi;
	const running: FakeApi[] = [];
	beforeAll(async () => {
		elsewhere = await startFakeApi(() => ({ body: { ok: true, data: { user_ids: ['x'], count: 1 } } }));
	});
	afterEach(async () => {
		for (const api of running.splice(0)) await api.stop();
	});
	afterAll(async () => await elsewhere.stop());

	async function redirecting(options: { refresh?: boolean; api?: boolean }) {
		const moved = (path: string) => ({ status: 301, body: '', raw: true, headers: { location: `${elsewhere.baseUrl}${path}` } });
		const api = await startFakeApi(
			(request) => (options.api ? moved(request.path) : { body: { ok: true, data: { id: 'n1', status: 'sending' } } }),
			options.refresh ? (request) => moved(request.path) : undefined,
		);
		running.push(api);
		return { api, store: fakeStore(api) };
	}

	test('the token renewal is not followed: the error says where it pointed, the secrets went nowhere else', async () => {
		const { api, store } = await redirecting({ refresh: true });
		const error = await errorInNode(store, (context) => listActiveUserIds(context));
		expect(error.message).toContain(`The API answered the token renewal with a redirect (HTTP 301) to ${elsewhere.baseUrl}/auth/oauth/v2/refresh`);
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
		const error = await errorInNode(store, (context) => sendNotification(context, { title: 't', body: 'b', target_user_ids: ['u1'] }));
		expect(error.message).toContain('Sending the notification failed: the API answered with a redirect (HTTP 301)');
		expect(failedSendOutcome(error)).toBe('notSent');
		expect(api.requests.filter((request) => request.path === '/push-notification/send')).toHaveLength(1);
		expect(elsewhere.requests).toEqual([]);
	});
});
