/**
 * A Base URL with a typo in its port or host: the error names the address it tried and which part
 * to check (n8n's own message says neither), whether the token is still good (the request itself
 * fails) or has to be renewed first (the renewal fails, nothing is sent).
 */
import { listActiveUserIds } from '../../nodes/CompanionPush/transport';
import { secretsFingerprint } from '../../credentials/companionPushApi/token';
import {
	credentialData,
	errorInNode,
	storeFor,
	TRANSPORT_SANDBOX,
	useSandbox,
} from '../harness/index.cts';

describe('a typo in the Base URL', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, clock: 'real' });

	/** The sandbox's credential at another address, with a token still good for it. */
	const withTokenAt = (baseUrl: string) => {
		const data = { ...credentialData(sandbox), baseUrl };
		return storeFor(sandbox, {
			overrides: {
				...data,
				accessToken: 'a-token-that-is-never-checked',
				accessTokenRenewAfter: Date.now() + 3_600_000,
				accessTokenIssuedFor: secretsFingerprint(data as never),
			},
		});
	};

	test('a port nothing listens on: the error names the address and the port to check', async () => {
		const error = await errorInNode(withTokenAt('http://127.0.0.1:1'), (context) =>
			listActiveUserIds(context),
		);
		expect(error.message).toBe(
			"Reading the users with an active app failed: nothing answered at http://127.0.0.1:1 (ECONNREFUSED): check the port and host in the credential's Base URL",
		);
	});

	test('a host that does not exist: the error names the address and the host to check', async () => {
		const error = await errorInNode(withTokenAt('https://api.companion-push.invalid'), (context) =>
			listActiveUserIds(context),
		);
		expect(error.message).toMatch(
			/^Reading the users with an active app failed: no host of that name was found for https:\/\/api\.companion-push\.invalid \((ENOTFOUND|EAI_AGAIN)\): check the host in the credential's Base URL$/,
		);
	});

	test('a token to renew first: the renewal names the address, nothing is sent', async () => {
		const data = { ...credentialData(sandbox), baseUrl: 'http://127.0.0.1:1' };
		const error = await errorInNode(
			storeFor(sandbox, { overrides: { ...data, accessToken: '' } }),
			(context) => listActiveUserIds(context),
		);
		expect(error.message).toContain(
			'Could not reach http://127.0.0.1:1 to renew the access token (ECONNREFUSED)',
		);
	});
});
