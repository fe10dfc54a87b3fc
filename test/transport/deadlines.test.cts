/**
 * Every request has a deadline for its whole answer, and reads no more of an answer than any real
 * one could be (transport/http.ts, answers.ts). The sandbox's trickle fault sends the headers at once, then
 * the body one byte every 10 ms after 10,000 spaces (100 s): n8n's own `timeout`, the socket's idle
 * time, never fires on it. The deadline is set short (300 ms); no assertion depends on how fast the
 * machine is: a trickle cannot end before its 100 s.
 */
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import {
	failedSendOutcome,
	getNotification,
	listActiveUserIds,
	sendNotification,
	setWorkDeadline,
} from '../../nodes/CompanionPush/transport';
import type { SendRequest } from '../../nodes/CompanionPush/transport';
import type { FaultSpec } from '../../sandbox/index.cts';
import {
	count,
	DETAIL,
	REFRESH,
	errorInNode,
	logOf,
	NODE_SANDBOX,
	registeredSends,
	runOn,
	SEND,
	SEND_LIST,
	seedSends,
	storeFor,
	useSandbox,
	valueInNode,
	waitFor,
	type CredentialStore,
} from '../harness/index.cts';

/** n8n-core's own copies of its HTTP layer and container (it keeps them in its own node_modules). */
const fromN8nCore = (name: string) =>
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	require(require.resolve(name, { paths: [require.resolve('n8n-core')] }));

/**
 * Every request n8n's HTTP layer is asked to make from now on (until the mocks are restored), with
 * the abort signal it was given and its outcome: a test can wait until each has ended.
 */
function watchN8nRequests(): Array<{ url: string; signal?: AbortSignal; ended: Promise<unknown> }> {
	const { OutboundHttp } = fromN8nCore('@n8n/backend-network');
	const { Container } = fromN8nCore('@n8n/di');
	const outbound = Container.get(OutboundHttp);
	const requests = outbound.requests.bind(outbound);
	const seen: Array<{ url: string; signal?: AbortSignal; ended: Promise<unknown> }> = [];
	jest.spyOn(outbound, 'requests').mockImplementation((...args: unknown[]) => {
		const client = requests(...args);
		return {
			...client,
			request: (options: { url: string; abortSignal?: AbortSignal }) => {
				const outcome = client.request(options);
				seen.push({
					url: options.url,
					signal: options.abortSignal,
					ended: outcome.catch(() => 'failed'),
				});
				return outcome;
			},
		};
	});
	return seen;
}

const DEADLINE_MS = 300;
/** Headers at once, then 100 s of body. */
const TRICKLE = { kind: 'trickle', intervalMs: 10, padBytes: 10_000 } as const;
const MIB = 1024 * 1024;

describe('deadlines and bounds of answers', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let store: CredentialStore;
	let user: string;
	beforeAll(async () => {
		store = storeFor(sandbox);
		// Take the token once, so the logs below hold only the calls under test.
		await valueInNode(store, (context) => listActiveUserIds(context));
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(() => {
		resetProcessState();
		useTimings({
			retry: { baseDelayMs: 1, maxDelayMs: 2 },
			lookupSettleMs: 200,
			lookupEvidenceWaitMs: 1_000,
		});
	});
	afterEach(() => jest.restoreAllMocks());
	afterAll(() => resetProcessState());

	let titleCounter = 0;
	const request = (): SendRequest => ({
		title: `Deadline ${++titleCounter}`,
		body: 'b',
		target_user_ids: [user],
	});
	/** The deadline of the tests of trickles; the tests of sizes keep the default (30 s), so that how
	 * fast this machine moves 17 MiB plays no part. */
	const shortDeadline = () => useTimings({ requestTimeoutMs: DEADLINE_MS });
	const fault = (endpoint: string, spec: Omit<FaultSpec, 'endpoint'>) =>
		sandbox.addFault({ endpoint, ...spec } as FaultSpec);

	test('a trickling Get Notification fails with a timeout error, each try cut at its deadline; nothing is output', async () => {
		shortDeadline();
		const [id] = await seedSends(sandbox, 1, { target_user_ids: [user] });
		fault(DETAIL, { ...TRICKLE, times: 4 });
		const started = Date.now();
		// The credential's token is fresh: the requests leave without a renewal (whose time a request's
		// deadline would add).
		const { items, error } = await runOn(sandbox, {
			credentials: store,
			parameters: { resource: 'notification', operation: 'get', notificationId: id },
		});
		expect(items).toEqual([]);
		expect(error?.message).toBe(
			`Reading notification ${id} failed: no complete answer from the API within its deadline of 300 ms (ETIMEDOUT)`,
		);
		// Retried as any timeout: four tries, each answered 200 and cut at its deadline.
		expect(logOf(sandbox, DETAIL).map((entry) => [entry.status, entry.fault])).toEqual(
			Array(4).fill([200, 'trickle']),
		);
		expect(Date.now() - started).toBeGreaterThanOrEqual(4 * DEADLINE_MS);
	});

	test('a read cut at its deadline once is read again', async () => {
		shortDeadline();
		const [id] = await seedSends(sandbox, 1, { target_user_ids: [user] });
		fault(DETAIL, { ...TRICKLE, times: 1 });
		const detail = await valueInNode(store, (context) => getNotification(context, id));
		expect(detail.notification.id).toBe(id);
		expect(logOf(sandbox, DETAIL).map((entry) => entry.fault ?? null)).toEqual(['trickle', null]);
	});

	test('a trickling Send: its 202 stands, the list gives its id, and it is never sent again', async () => {
		shortDeadline();
		fault(SEND, TRICKLE);
		const outcome = await valueInNode(store, (context) => sendNotification(context, request()));
		expect(count(sandbox, SEND)).toBe(1);
		expect(count(sandbox, SEND_LIST)).toBeGreaterThanOrEqual(1);
		expect(outcome).toEqual({
			id: logOf(sandbox, SEND)[0].notificationId,
			status: expect.any(String),
			recoveredAfter: 'an unreadable 202 answer',
			attempts: 1,
		});
	});

	test('a trickling Send the list does not show: an error that it was accepted, never sent again', async () => {
		shortDeadline();
		// Listed 10 minutes late (sandbox clock, which stands still here): no lookup can find it.
		fault(SEND, { ...TRICKLE, listDelayMs: 10 * 60_000 });
		const error = await errorInNode(store, (context) => sendNotification(context, request()));
		expect(failedSendOutcome(error)).toBe('accepted');
		expect(error.message).toBe(
			'Sending the notification (accepted, not re-sent): the API answered with an unexpected body',
		);
		expect(error.description).toContain(
			'(the body of this answer was not read: not whole within its deadline of 300 ms)',
		);
		expect(count(sandbox, SEND)).toBe(1);
		expect(registeredSends(sandbox)).toHaveLength(1);
	});

	test('a deadline that passes while n8n renews the token: the send never leaves afterwards', async () => {
		// A fresh credential: n8n renews the token first, and the token endpoint answers 1.5 s late.
		const renewing = storeFor(sandbox);
		fault(REFRESH, { kind: 'delay', delayMs: 1_500 });
		const requests = watchN8nRequests();
		const error = await errorInNode(renewing, (context) => {
			setWorkDeadline(context, DEADLINE_MS, 'the test');
			return sendNotification(context, request());
		});
		expect(error.message).toMatch(
			/^Sending the notification: the outcome is unknown \(ETIMEDOUT\)/,
		);
		expect(failedSendOutcome(error)).toBe('unknown');
		// n8n went on with the send once its renewal was done, with the deadline's signal, fired: the
		// request was refused before it left.
		await waitFor(
			'the send after the renewal',
			() => requests.some((made) => made.url.endsWith('/push-notification/send')),
			10_000,
			20,
		);
		await Promise.all(requests.map((made) => made.ended));
		const late = requests.find((made) => made.url.endsWith('/push-notification/send'));
		expect(late?.signal?.aborted).toBe(true);
		expect(count(sandbox, SEND)).toBe(0);
		expect(registeredSends(sandbox)).toEqual([]);
	});

	test('an oversized Get Notification is refused at once, naming the endpoint and the bound; nothing is output', async () => {
		const [id] = await seedSends(sandbox, 1, { target_user_ids: [user] });
		fault(DETAIL, { kind: 'oversized', sizeBytes: 17 * MIB, times: 4 });
		// The credential's token is fresh: the requests leave without a renewal (whose time a request's
		// deadline would add).
		const { items, error } = await runOn(sandbox, {
			credentials: store,
			parameters: { resource: 'notification', operation: 'get', notificationId: id },
		});
		expect(items).toEqual([]);
		expect(error?.message).toBe(
			`Reading notification ${id} failed: the API's answer to GET /push-notification/{id} is larger than 16 MiB, the most this node reads of it`,
		);
		// Not read again: a second read would be as large.
		expect(count(sandbox, DETAIL)).toBe(1);
	});

	test('an answer below its bound is read as usual', async () => {
		const [id] = await seedSends(sandbox, 1, { target_user_ids: [user] });
		fault(DETAIL, { kind: 'oversized', sizeBytes: 15 * MIB });
		const detail = await valueInNode(store, (context) => getNotification(context, id));
		expect(detail.notification.id).toBe(id);
	});

	test('an oversized answer to a Send: its 202 stands, the list gives its id, never sent again', async () => {
		fault(SEND, { kind: 'oversized', sizeBytes: 17 * MIB });
		const outcome = await valueInNode(store, (context) => sendNotification(context, request()));
		expect(count(sandbox, SEND)).toBe(1);
		expect(outcome).toMatchObject({
			id: logOf(sandbox, SEND)[0].notificationId,
			recoveredAfter: 'an unreadable 202 answer',
			attempts: 1,
		});
	});
});
