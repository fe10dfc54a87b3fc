/**
 * The typed calls not covered elsewhere: cancel (safe to repeat, a 409 checked against the send's
 * state), the detail of a send, and a request timeout treated like a lost answer.
 */
import {
	cancelNotification,
	getNotification,
	listActiveUserIds,
	sendNotification,
} from '../../nodes/CompanionPush/transport';
import { repeatableRequest } from '../../nodes/CompanionPush/transport/endpoints';
import { z } from 'zod';
import {
	ACTIVE_USERS,
	CANCEL,
	DETAIL,
	errorInNode,
	logOf,
	storeFor,
	TRANSPORT_SANDBOX,
	useSandbox,
	valueInNode,
	type CredentialStore,
} from '../harness/index.cts';

describe('cancel and detail', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, seedUsers: 30, resetBeforeEach: true });
	let store: CredentialStore;
	let users: string[];
	beforeAll(async () => {
		store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		users = sandbox.orgs.primary.usersOfKind('twoPhones', 2);
	});

	const inAnHour = () => new Date(sandbox.clock.now() + 3_600_000).toISOString();
	const schedule = () =>
		valueInNode(store, (context) =>
			sendNotification(context, {
				title: 'Later',
				body: 'B',
				target_user_ids: users,
				scheduled_at: inAnHour(),
			}),
		);
	const cancelStatuses = () => logOf(sandbox, CANCEL).map((entry) => entry.status);

	test('a scheduled send is canceled: one request, the API message', async () => {
		const { id, status } = await schedule();
		expect(status).toBe('scheduled');
		const result = await valueInNode(store, (context) => cancelNotification(context, id));
		expect(result).toEqual({ message: 'Push notification canceled', alreadyCanceled: false });
		expect(cancelStatuses()).toEqual([200]);
		expect(sandbox.notifications()[0].status).toBe('canceled');
	});

	test('a cancel whose answer was lost is repeated; the 409 that follows is read as "already canceled"', async () => {
		const { id } = await schedule();
		sandbox.addFault({ endpoint: CANCEL, kind: 'resetAfter', times: 1 });
		const result = await valueInNode(store, (context) => cancelNotification(context, id));
		expect(result).toEqual({ message: 'Push notification canceled', alreadyCanceled: true });
		expect(cancelStatuses()).toEqual([0, 409]);
		expect(logOf(sandbox, DETAIL)).toHaveLength(1);
	});

	test('a send that already went out cannot be canceled: a 409 error saying its state', async () => {
		const { id } = await valueInNode(store, (context) =>
			sendNotification(context, { title: 'Now', body: 'B', target_user_ids: users }),
		);
		await sandbox.clock.advance(10_000);
		const error = await errorInNode(store, (context) => cancelNotification(context, id));
		expect(cancelStatuses()).toEqual([409]);
		expect(error.constructor.name).toBe('NodeApiError');
		expect(error.httpCode).toBe('409');
		expect(error.message).toBe(
			`Notification ${id} can no longer be canceled: it is "sent", and only a scheduled send can be canceled`,
		);
		expect(error.context.currentStatus).toBe('sent');
	});

	test('cancel of an unknown send: a 404 error, tried once', async () => {
		const error = await errorInNode(store, (context) => cancelNotification(context, 'nope'));
		expect(cancelStatuses()).toEqual([404]);
		expect(error.httpCode).toBe('404');
		expect(error.message).toMatch(/^Canceling notification nope failed with HTTP 404/);
	});

	test('the detail of a send: its record and one delivery entry per phone', async () => {
		const { id } = await valueInNode(store, (context) =>
			sendNotification(context, { title: 'Now', body: 'B', target_user_ids: users }),
		);
		await sandbox.clock.advance(10_000);
		const detail = await valueInNode(store, (context) => getNotification(context, id));
		expect(detail.notification).toMatchObject({ id, title: 'Now', body: 'B', status: 'sent' });
		expect(detail.notification.stats).toMatchObject({ targeted_users: 2, devices: 4, sent: 4 });
		expect(detail.deliveries).toHaveLength(4);
		expect(new Set(detail.deliveries.map((delivery) => delivery.user_id))).toEqual(new Set(users));
	});

	test('an id with characters that mean something in a URL is sent encoded', async () => {
		await errorInNode(store, (context) => getNotification(context, 'a/b?c'));
		expect(sandbox.requestLog().map((entry) => entry.path)).toEqual([
			'/push-notification/a%2Fb%3Fc',
		]);
	});
});

describe('a request that times out', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, clock: 'real', seedUsers: 20 });

	test('is a lost answer for a read: retried, and the retry succeeds', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => listActiveUserIds(context));
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'delay', delayMs: 6_000, times: 1 });
		const schema = z.object({ data: z.object({ user_ids: z.array(z.string()) }) });
		const started = Date.now();
		const answer = await valueInNode(store, (context) =>
			repeatableRequest(
				context,
				{ method: 'GET', path: '/user-device/users', action: 'Reading', timeoutMs: 300 },
				schema,
			),
		);
		expect(answer.value.data.user_ids.length).toBeGreaterThan(0);
		expect(logOf(sandbox, ACTIVE_USERS).map((entry) => entry.fault ?? null)).toEqual([
			null,
			'delay',
			null,
		]);
		// It did not wait for the held answer (6 s; the timeout and one retry take about 1 s, more on a
		// loaded machine).
		expect(Date.now() - started).toBeLessThan(4_000);
	});
});
