/**
 * An error that is not a network failure (a fault of this package or of n8n, say) is reported as an
 * unexpected error with its own words, not as "no answer from the API": a user must not go looking
 * for an outage that is not there. A real network failure still names its code.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import {
	failedSendOutcome,
	listActiveUserIds,
	sendNotification,
} from '../../nodes/CompanionPush/transport';
import { secretsFingerprint } from '../../credentials/companionPushApi/token';
import {
	ACTIVE_USERS,
	count,
	credentialData,
	errorInNode,
	SEND,
	storeFor,
	TRANSPORT_SANDBOX,
	useSandbox,
	valueInNode,
} from '../harness/index.cts';

/** The node's context, with n8n's authenticated request helper throwing `thrown`. */
function throwingHelper(context: IExecuteFunctions, thrown: unknown): IExecuteFunctions {
	const helpers = {
		...context.helpers,
		httpRequestWithAuthentication: async () => Promise.reject(thrown),
	};
	return Object.assign(Object.create(context) as IExecuteFunctions, { helpers });
}

describe('an unexpected error on the way to the API', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, clock: 'real' });

	test('a read says it was an unexpected error, with its message, after the retries', async () => {
		const store = storeFor(sandbox);
		const error = await errorInNode(store, (context) =>
			listActiveUserIds(
				throwingHelper(
					context,
					new TypeError("Cannot read properties of undefined (reading 'statusCode')"),
				),
			),
		);
		expect(error.message).toBe(
			"Reading the users with an active app failed: an unexpected error, not an answer from the API (Cannot read properties of undefined (reading 'statusCode'))",
		);
		expect(error.message).not.toMatch(/ECONNRESET|no answer/);
		expect(count(sandbox, ACTIVE_USERS)).toBe(0);
	});

	test('a send with an unexpected error is not sent again blindly: its outcome is unknown', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context)); // takes the token
		await sandbox.reset();
		const error = await errorInNode(store, (context) =>
			sendNotification(throwingHelper(context, new Error('something broke')), {
				title: 't',
				body: 'b',
				target_user_ids: sandbox.orgs.primary.userIds.slice(0, 1),
			}),
		);
		expect(failedSendOutcome(error)).toBe('unknown');
		expect(count(sandbox, SEND)).toBe(0);
	});

	test('a real network failure still names its code', async () => {
		// A usable token for a base URL where nothing listens: no renewal, the request itself fails.
		const unreachable = { ...credentialData(sandbox), baseUrl: 'http://127.0.0.1:1' };
		const store = storeFor(sandbox, {
			overrides: {
				...unreachable,
				accessToken: 'a-token-that-is-never-checked',
				accessTokenRenewAfter: Date.now() + 3_600_000,
				accessTokenIssuedFor: secretsFingerprint(unreachable as never),
			},
		});
		const error = await errorInNode(store, (context) => listActiveUserIds(context));
		expect(error.message).toBe(
			"Reading the users with an active app failed: nothing answered at http://127.0.0.1:1 (ECONNREFUSED): check the port and host in the credential's Base URL",
		);
	});
});
