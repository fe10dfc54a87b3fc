/**
 * The credential is read once per node run (a real n8n queries its database and decrypts at every
 * read), and again only when it may have changed: after the token was renewed, or after a 401
 * (another process may have saved a new token). Counted by the credential store the engine reads.
 */
import {
	count,
	runOn,
	SEND,
	NODE_SANDBOX,
	sendParameters,
	storeFor,
	useSandbox,
} from '../harness/index.cts';

describe('credential reads per run', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 60 });

	test('1,000 one-recipient sends: one read, plus one per renewal', async () => {
		const credentials = storeFor(sandbox);
		const users = sandbox.orgs.primary.userIds;
		const items = Array.from({ length: 1000 }, (_, index) => ({ to: users[index % users.length] }));
		const { error } = await runOn(sandbox, {
			credentials,
			items,
			parameters: sendParameters({ userIds: '={{ $json.to }}' }),
		});
		expect(error).toBeUndefined();
		expect(count(sandbox, SEND)).toBe(1000);
		const stored = credentials.get();
		expect(stored.writes).toBe(1); // the first token
		expect(stored.reads).toBeLessThanOrEqual(stored.writes + 1);
	}, 240_000); // 1,000 runs of the node path in-process: seconds alone, minutes beside the other suites

	test('a 401 in the middle: read again to take a token saved since, at most twice per 401', async () => {
		const credentials = storeFor(sandbox);
		const users = sandbox.orgs.primary.userIds;
		const items = Array.from({ length: 200 }, (_, index) => ({ to: users[index % users.length] }));
		sandbox.addFault({ endpoint: SEND, kind: 'unauthorized', skip: 100, times: 1 });
		const { error } = await runOn(sandbox, {
			credentials,
			items,
			parameters: sendParameters({ userIds: '={{ $json.to }}' }),
		});
		expect(error).toBeUndefined();
		const stored = credentials.get();
		expect(stored.reads).toBeLessThanOrEqual(1 + stored.writes + 2);
		expect(stored.reads).toBeGreaterThan(1);
	}, 240_000);
});
