/**
 * The first hundreds of sends: without Max Parallel Requests set, the node starts its requests at
 * once, as n8n's HTTP Request node does, until the service says it is busy (a 429: the pace then
 * keeps in flight what the service admitted); set, the option bounds them. The sandbox refuses with 429 any request
 * beyond `maxInFlight` in flight at once, and logs which ones it refused.
 * Requests started together leave in batches, with the event loop's I/O between two batches
 * (transport/http.ts, letIoThrough): n8n's HTTP helper builds a request in one run of microtasks, and
 * without a turn between them every request of a run would be built before the first reaches the
 * API. Watched through Node's own diagnostics channels: the node's requests as http creates them,
 * the sandbox's as its server receives them (both in this process).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

import { resetProcessState } from '../../devkit/processState.cts';
import {
	jsonOf,
	logOf,
	NODE_SANDBOX,
	runOn,
	SEND,
	sendParameters,
	useTestSandboxes,
} from '../harness/index.cts';

const SEND_PATH = '/push-notification/send';

describe('the first hundreds of sends', () => {
	const sandboxes = useTestSandboxes();
	// The pace is the credential's, in process memory: each test starts without a limit.
	afterEach(() => resetProcessState());

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

	test('100 sends at once: the first reaches the API before most of the others are built', async () => {
		const sandbox = await sandboxes.start({ ...NODE_SANDBOX, seedUsers: 400 });
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 100);
		expect(users).toHaveLength(100);
		const isSend = (path: unknown) => typeof path === 'string' && path.startsWith(SEND_PATH);
		// Node publishes a client request on `created` (Node 22 on) or `start` (Node 20) as http
		// creates it: counted once, at the first of the two.
		const builtRequests = new WeakSet<object>();
		let built = 0;
		let builtWhenFirstArrived: number | undefined;
		const onBuilt = (message: unknown) => {
			const { request } = message as { request: { path?: string } };
			if (!isSend(request.path) || builtRequests.has(request)) return;
			builtRequests.add(request);
			built++;
		};
		const onArrived = (message: unknown) => {
			if (isSend((message as { request: { url?: string } }).request.url))
				builtWhenFirstArrived ??= built;
		};
		const channels = ['http.client.request.created', 'http.client.request.start'];
		for (const channel of channels) subscribe(channel, onBuilt);
		subscribe('http.server.request.start', onArrived);
		try {
			const run = await runOn(sandbox, {
				items: users.map((userId) => ({ userId })),
				parameters: sendParameters({ userIds: '={{ $json.userId }}' }),
			});
			expect(jsonOf(run.items).filter((json) => typeof json.id === 'string')).toHaveLength(100);
		} finally {
			for (const channel of channels) unsubscribe(channel, onBuilt);
			unsubscribe('http.server.request.start', onArrived);
		}
		expect(logOf(sandbox, SEND)).toHaveLength(100);
		expect(built).toBe(100);
		// Built all at once, the first would arrive when all 100 are.
		expect(builtWhenFirstArrived).toBeLessThan(50);
	});
});
