/**
 * The first hundreds of sends: without Max Parallel Requests set, the node starts its requests at
 * once, as n8n's HTTP Request node does, until the service says it is busy (a 429: the pace then
 * keeps in flight what the service admitted); set, the option bounds them. The sandbox refuses with 429 any request
 * beyond `maxInFlight` in flight at once, and logs which ones it refused.
 */
import {
	jsonOf,
	logOf,
	NODE_SANDBOX,
	runOn,
	SEND,
	sendParameters,
	useTestSandboxes,
} from '../harness/index.cts';

describe('the first hundreds of sends', () => {
	const sandboxes = useTestSandboxes();

	/** 130 one-recipient sends, each held 2.5 s by the sandbox, which takes 110 at once at most (a
	 * loaded machine took more than 400 ms to start them all, so fewer than 111 overlapped). */
	const sendAll = async (options: Record<string, unknown>) => {
		const sandbox = await sandboxes.start({
			...NODE_SANDBOX,
			seedUsers: 400,
			latencyMs: 2_500,
			maxInFlight: 110,
		});
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 130);
		expect(users).toHaveLength(130);
		const { items, error } = await runOn(sandbox, {
			items: users.map((userId) => ({ userId })),
			parameters: sendParameters({ userIds: '={{ $json.userId }}', options }),
		});
		expect(error).toBeUndefined();
		const sends = logOf(sandbox, SEND);
		const accepted = sends.filter((entry) => entry.notificationId !== undefined);
		const notified = accepted.map(
			(entry) => (entry.body as { target_user_ids: string[] }).target_user_ids[0],
		);
		// Every item sent, each once, whatever was refused on the way.
		expect(jsonOf(items).filter((json) => typeof json.id === 'string')).toHaveLength(130);
		expect(notified.sort()).toEqual([...users].sort());
		return sends.filter((entry) => entry.limitedBy === 'maxInFlight').length;
	};

	test('Max Parallel Requests not set: more than 100 go out at once (the service refuses some), all sent once', async () => {
		expect(await sendAll({})).toBeGreaterThan(0);
	});

	test('Max Parallel Requests 100: never more than 100 in flight (the service refuses none)', async () => {
		expect(await sendAll({ maxParallelRequests: 100 })).toBe(0);
	});
});
