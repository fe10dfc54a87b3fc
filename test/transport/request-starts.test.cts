/**
 * Requests started together leave in batches, with the event loop's I/O between two batches
 * (transport/requestStarts.ts): n8n's HTTP helper builds a request in one run of microtasks, and
 * without a turn between them every request of a run would be built before the first reaches the API. Watched through Node's own
 * diagnostics channels: the node's requests as http creates them, the sandbox's as its server
 * receives them (both in this process).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

import { resetProcessState } from '../../nodes/CompanionPush/processState';
import {
	jsonOf,
	logOf,
	NODE_SANDBOX,
	runOn,
	SEND,
	sendParameters,
	storeFor,
	useTestSandboxes,
} from '../harness/index.cts';

const SEND_PATH = '/push-notification/send';

describe('requests started together', () => {
	const sandboxes = useTestSandboxes();
	afterEach(() => resetProcessState());

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
				credentials: storeFor(sandbox),
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
