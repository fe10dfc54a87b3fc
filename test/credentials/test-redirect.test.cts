/**
 * n8n's "Test" button on the credential, run as n8n runs it (n8n-core's RoutingNode and request
 * helpers): the test request follows no redirect, like every other call, so the Bearer token never
 * goes to the address a redirect names (here another host over plain http), and a redirect fails
 * the test with a message that says what to fix.
 */
import { fakeStore, testCredentialAsN8nDoes, useFakeApis } from '../harness/index.cts';

describe('the credential test and redirects', () => {
	const fakeApis = useFakeApis();

	test('a good credential passes the test: one refresh, one GET /user-device/users with the token', async () => {
		const api = await fakeApis.start(() => ({
			body: { ok: true, data: { user_ids: ['u1'], count: 1 } },
		}));
		const result = await testCredentialAsN8nDoes(fakeStore(api));
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(
			api.requests.map((request) => [request.method, request.path, request.authorization]),
		).toEqual([
			['POST', '/auth/oauth/v2/refresh', undefined],
			['GET', '/user-device/users', `Bearer ${api.accessToken}`],
		]);
	});

	test.each([301, 302, 307, 308])(
		'a %i is not followed: the other host gets nothing, and the test fails saying why',
		async (status) => {
			const elsewhere = await fakeApis.start(() => ({
				body: { ok: true, data: { user_ids: [], count: 0 } },
			}));
			const api = await fakeApis.start(() => ({
				status,
				body: '',
				raw: true,
				headers: { location: `${elsewhere.baseUrl}/collect` },
			}));
			const result = await testCredentialAsN8nDoes(fakeStore(api));
			expect(elsewhere.requests).toEqual([]);
			expect(result.status).toBe('Error');
			expect(result.message).toBe(
				`The API answered with a redirect (HTTP ${status}). Redirects are not followed, so the token went nowhere else: check the Base URL (use the address the API is really at).`,
			);
			expect(api.requests.filter((request) => request.path === '/user-device/users')).toHaveLength(
				1,
			);
		},
	);
});
