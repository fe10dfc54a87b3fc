/**
 * The send rule of send.ts: a 202 is never repeated; 4xx are errors, not repeated; 429 is
 * waited for and repeated; after a lost answer (reset, 5xx) the list of sends is read first, and
 * the send is repeated only when it is certainly not registered. The proof is the sandbox's own
 * record: which sends it registered, and how many sends each user is in.
 */
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import {
	isListProbe,
	listActiveUserIds,
	sendNotification,
} from '../../nodes/CompanionPush/transport';
import type { SendOutcome, SendRequest } from '../../nodes/CompanionPush/transport';
import {
	count,
	DETAIL,
	errorInNode,
	expectNoSecret,
	logOf,
	REFRESH,
	secretsOf,
	SEND,
	SEND_LIST,
	probeRequests,
	storeFor,
	tokensSeen,
	TRANSPORT_SANDBOX,
	until,
	useSandbox,
	valueInNode,
	type CredentialStore,
} from '../harness/index.cts';

describe('safe send', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, seedUsers: 60, resetBeforeEach: true });
	let store: CredentialStore;
	let tokens: () => string[];
	let users: string[];
	/** Who the sends made after a lost answer go to (see sendWithLaterSend). */
	let laterUser: string;
	beforeAll(async () => {
		useTimings({ lookupSettleMs: 200, lookupEvidenceWaitMs: 1_000 });
		store = storeFor(sandbox);
		tokens = tokensSeen(store);
		await valueInNode(store, (context) => listActiveUserIds(context));
		[laterUser, ...users] = sandbox.orgs.primary.usersOfKind('onePhone', 4);
	});
	afterAll(() => resetProcessState());

	let titleCounter = 0;
	/** A send body with a title unique to the test, so sends of other tests never match. */
	function request(extra: Partial<SendRequest> = {}): SendRequest {
		return {
			title: `Shift change ${++titleCounter}`,
			body: 'Your shift starts at 9:00 tomorrow.',
			target_user_ids: users,
			...extra,
		};
	}
	const send = (body: SendRequest = request()) =>
		valueInNode(store, (context) => sendNotification(context, body));
	const sendStatuses = () => logOf(sandbox, SEND).map((entry) => entry.status);

	/**
	 * Sends `body` and, once its lookup has read the list of sends, another send of this process (to
	 * `laterUser`): made after the lost answer, its listing shows the list is up to date, the only
	 * proof of absence a lookup takes (without it, "unknown").
	 */
	const sendWithLaterSend = (body: SendRequest = request()) =>
		valueInNode(store, async (context) => {
			const listReads = count(sandbox, SEND_LIST);
			const sending = sendNotification(context, body);
			sending.catch(() => undefined);
			await until(() => count(sandbox, SEND_LIST) > listReads);
			const later = await sendNotification(context, request({ target_user_ids: [laterUser] }));
			return { outcome: await sending, later };
		});
	/** The statuses of the sends to `userIds` (those of the later sends left out). */
	const statusesTo = (userIds: string[]) =>
		logOf(sandbox, SEND)
			.filter(
				(entry) =>
					JSON.stringify((entry.body as SendRequest).target_user_ids) === JSON.stringify(userIds),
			)
			.map((entry) => entry.status);
	const registered = () => sandbox.notifications('primary');

	/** Nobody in `recipients` is in more than `times` sends (deliveriesByUser counts sends per user). */
	function expectEachUserTargeted(recipients: string[], times: number) {
		const byUser = sandbox.deliveriesByUser('primary');
		expect(recipients.map((userId) => byUser.get(userId) ?? 0)).toEqual(
			recipients.map(() => times),
		);
		expect([...byUser.values()].every((value) => value <= times)).toBe(true);
	}

	test('a 202 is the result and is never repeated', async () => {
		const outcome = await send();
		expect(outcome).toEqual({ id: expect.any(String), status: 'sending', attempts: 1 });
		expect(sendStatuses()).toEqual([202]);
		expect(count(sandbox, SEND_LIST)).toBe(0);
		expect(registered().map((record) => record.id)).toEqual([outcome.id]);
		expectEachUserTargeted(users, 1);
	});

	test('a 202 whose body is unreadable (malformed JSON) is not repeated: its id is found in the list of sends', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'malformedJson', times: 1 });
		const outcome = await send();
		expect(sendStatuses()).toEqual([202]);
		expect(count(sandbox, SEND_LIST)).toBe(1);
		expect(registered().map((record) => record.id)).toEqual([outcome.id]);
		// The status is the one the list showed at the lookup: delivery may already have finished.
		expect(outcome).toEqual({
			id: outcome.id,
			status: expect.stringMatching(/^(sending|sent)$/),
			recoveredAfter: 'an unreadable 202 answer',
			attempts: 1,
		});
		expectEachUserTargeted(users, 1);
	});

	test('a 400 is an error naming the field, not repeated', async () => {
		const error = await errorInNode(store, (context) =>
			sendNotification(context, request({ image_url: 'http://cdn.example.com/a.png' })),
		);
		expect(sendStatuses()).toEqual([400]);
		expect(error.httpCode).toBe('400');
		expect(error.message).toMatch(
			/^Sending the notification failed with HTTP 400: .*\(field: image_url\)$/,
		);
		expect(error.description).toMatch(/field value is invalid/);
		expect(registered()).toEqual([]);
	});

	test('a 422 is an error naming the field to fix, not repeated', async () => {
		const error = await errorInNode(store, (context) =>
			sendNotification(context, request({ target_user_ids: [] })),
		);
		expect(sendStatuses()).toEqual([422]);
		expect(error.httpCode).toBe('422');
		expect(error.message).toMatch(
			/^Sending the notification failed with HTTP 422: .*target_user_ids.*\(field: target_user_ids\)$/,
		);
		expect(error.description).toMatch(/correct the field named above/);
		expect(registered()).toEqual([]);
	});

	test('a 403 (credential of a non-admin user) is an error with the hint, not repeated', async () => {
		const nonAdmin = storeFor(sandbox, { credential: sandbox.nonAdminCredential });
		const error = await errorInNode(nonAdmin, (context) => sendNotification(context, request()));
		expect(sendStatuses()).toEqual([403]);
		expect(error.httpCode).toBe('403');
		expect(error.description).toMatch(/administrator user/);
		expect(registered()).toEqual([]);
	});

	test('a 429 registered nothing: waited for and sent again, without a lookup', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'rateLimit', retryAfterSeconds: 0, times: 1 });
		const outcome = await send();
		expect(sendStatuses()).toEqual([429, 202]);
		expect(count(sandbox, SEND_LIST)).toBe(0);
		expect(outcome.attempts).toBe(2);
		expect(outcome.recoveredAfter).toBeUndefined();
		expect(registered().map((record) => record.id)).toEqual([outcome.id]);
		expectEachUserTargeted(users, 1);
	});

	test('reset before the server read it, then a later send listed: the lookup finds nothing, so it is sent once more; one registered send', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		const { outcome, later } = await sendWithLaterSend();
		const log = sandbox.requestLog().map((entry) => [entry.endpoint, entry.status]);
		// Absent only in a reading started after the list showed the later send: two readings at least.
		expect(log.slice(0, 3)).toEqual([
			[SEND, 0],
			[SEND_LIST, 200],
			[SEND, 202],
		]);
		expect(log.slice(3, -1).length).toBeGreaterThanOrEqual(2);
		expect(log.slice(3, -1).every(([endpoint]) => endpoint === SEND_LIST)).toBe(true);
		expect(log.at(-1)).toEqual([SEND, 202]);
		expect(outcome.attempts).toBe(2);
		expect(outcome.recoveredAfter).toBeUndefined();
		expect(registered().map((record) => record.id)).toEqual([later.id, outcome.id]);
		expectEachUserTargeted(users, 1);
	});

	test('reset before the server read it, and no later send: a list probe (to nobody, canceled at once) proves it absent, so it is sent once', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		const outcome = await send();
		expect(sendStatuses()).toEqual([0, 202]);
		expect(outcome).toMatchObject({ status: 'sending', attempts: 2 });
		expect(outcome.recoveredAfter).toBeUndefined();
		const [probe] = probeRequests(sandbox, SEND);
		const records = registered();
		expect(records.find((record) => record.id === probe.notificationId)?.status).toBe('canceled');
		expect(records.filter((record) => !isListProbe(record)).map((record) => record.id)).toEqual([
			outcome.id,
		]);
		expectEachUserTargeted(users, 1);
	});

	test('reset after the server registered it: the lookup finds it, it is NOT sent again', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
		const outcome = await send();
		expect(sandbox.requestLog().map((entry) => [entry.endpoint, entry.status])).toEqual([
			[SEND, 0],
			[SEND_LIST, 200],
		]);
		expect(outcome.recoveredAfter).toBe('ECONNRESET');
		expect(outcome.attempts).toBe(1);
		const records = registered();
		expect(records.map((record) => record.id)).toEqual([outcome.id]);
		expect(logOf(sandbox, SEND)[0].notificationId).toBe(outcome.id);
		expectEachUserTargeted(users, 1);
	});

	test('a 5xx after the server registered it: found, not sent again', async () => {
		sandbox.addFault({
			endpoint: SEND,
			kind: 'status5xx',
			status: 503,
			afterProcessing: true,
			times: 1,
		});
		const outcome = await send();
		expect(sendStatuses()).toEqual([503]);
		expect(count(sandbox, SEND_LIST)).toBe(1);
		expect(outcome.recoveredAfter).toBe('HTTP 503');
		expect(registered().map((record) => record.id)).toEqual([outcome.id]);
		expectEachUserTargeted(users, 1);
	});

	test('a plain 5xx (nothing registered), then a later send listed: not found, sent once more; one registered send', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500, times: 1 });
		const { outcome, later } = await sendWithLaterSend();
		expect(statusesTo(users)).toEqual([500, 202]);
		expect(count(sandbox, SEND_LIST)).toBeGreaterThanOrEqual(2);
		expect(outcome.recoveredAfter).toBeUndefined();
		expect(registered().map((record) => record.id)).toEqual([later.id, outcome.id]);
		expectEachUserTargeted(users, 1);
	});

	test('a list without recipients (listIncludesTargets false): matched through targeted_users of the detail', async () => {
		sandbox.configure({ listIncludesTargets: false });
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
		const outcome = await send();
		expect(sandbox.requestLog().map((entry) => [entry.endpoint, entry.status])).toEqual([
			[SEND, 0],
			[SEND_LIST, 200],
			[DETAIL, 200],
		]);
		expect(outcome.recoveredAfter).toBe('ECONNRESET');
		expect(registered().map((record) => record.id)).toEqual([outcome.id]);
		expectEachUserTargeted(users, 1);
	});

	test('a list without recipients: a same-text send to a different number of users is not claimed', async () => {
		sandbox.configure({ listIncludesTargets: false });
		const body = request();
		const other = await send({ ...body, target_user_ids: users.slice(0, 1) });
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		const { outcome, later } = await sendWithLaterSend(body);
		expect(outcome.id).not.toBe(other.id);
		expect(outcome.recoveredAfter).toBeUndefined();
		expect(registered().map((record) => record.id)).toEqual([other.id, later.id, outcome.id]);
	});

	test('an identical send made earlier in the same execution is not claimed: two sends, two ids', async () => {
		const body = request();
		const first = await send(body);
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		const { outcome: second, later } = await sendWithLaterSend(body);
		expect(first.id).not.toBe(second.id);
		expect(second.recoveredAfter).toBeUndefined();
		expect(statusesTo(users)).toEqual([202, 0, 202]);
		expect(registered().map((record) => record.id)).toEqual([first.id, later.id, second.id]);
		expectEachUserTargeted(users, 2);
	});

	test('an identical earlier send is not claimed when the second one was registered too: it finds its own', async () => {
		const body = request();
		const outcomes = await valueInNode(store, async (context) => {
			const first = await sendNotification(context, body);
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
			const second = await sendNotification(context, body);
			return [first, second] as SendOutcome[];
		});
		const [first, second] = outcomes;
		const ids = registered().map((record) => record.id);
		expect(ids).toHaveLength(2);
		expect(ids[0]).toBe(first.id);
		expect(second.id).toBe(ids[1]);
		expect(second.recoveredAfter).toBe('ECONNRESET');
		expect(sendStatuses()).toEqual([202, 0]);
	});

	test('a same-text send to other users, registered by someone else meanwhile, is not claimed', async () => {
		const body = request();
		const others = sandbox.orgs.primary.usersOfKind('twoPhones', 2);
		const theirs = await send({ ...body, target_user_ids: others });
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		const { outcome } = await sendWithLaterSend(body);
		expect(outcome.id).not.toBe(theirs.id);
		expect(outcome.recoveredAfter).toBeUndefined();
		expect(registered()).toHaveLength(3);
		expectEachUserTargeted(users, 1);
		expectEachUserTargeted(others, 1);
	});

	test('an identical send registered by someone else long before the first try is outside the lookup window', async () => {
		const body = request();
		// Someone else (not this process) made the very same send ten minutes earlier.
		const response = await fetch(`${sandbox.baseUrl}/push-notification/send`, {
			method: 'POST',
			headers: {
				'content-type': 'application/json',
				authorization: `Bearer ${store.get().data.accessToken}`,
			},
			body: JSON.stringify(body),
		});
		expect(response.status).toBe(202);
		await sandbox.clock.advance(10 * 60_000);
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });

		const { outcome, later } = await sendWithLaterSend(body);

		expect(outcome.recoveredAfter).toBeUndefined();
		expect(statusesTo(users)).toEqual([202, 0, 202]);
		expect(registered().map((record) => record.id)).toEqual([
			registered()[0].id,
			later.id,
			outcome.id,
		]);
	});

	test('the list cannot be read during the lookup: "outcome unknown", nothing sent again', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', status: 503, times: 10 });
		const error = await errorInNode(store, (context) => sendNotification(context, request()));
		expect(sendStatuses()).toEqual([0]);
		expect(count(sandbox, SEND_LIST)).toBe(4);
		expect(error.constructor.name).toBe('NodeApiError');
		expect(error.message).toBe(
			'Sending the notification: the outcome is unknown (ECONNRESET), so it was not sent again',
		);
		expect(error.description).toMatch(
			/the list of sends could not be read .*Check the list of sends/,
		);
		expect(registered()).toEqual([]);
		expectNoSecret(error, [...secretsOf(sandbox), ...tokens()]);
	});

	test('the lookup runs on every shape of the list (here a bare array without total)', async () => {
		sandbox.setListShape('bareArray');
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
		const outcome = await send();
		expect(outcome.recoveredAfter).toBe('ECONNRESET');
		expect(sendStatuses()).toEqual([0]);
		expect(registered().map((record) => record.id)).toEqual([outcome.id]);
	});

	test('no answer on every try, a later send listed after each: at most 4 sends, each after a lookup, then an error; nothing registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		const error = await errorInNode(store, async (context) => {
			const sending = sendNotification(context, request());
			sending.catch(() => undefined);
			for (let tries = 1; tries <= 4; tries++) {
				// This try reset; once its lookup read the list, a later send (let through), then the
				// next try's reset.
				await until(() => statusesTo(users).length === tries);
				const listReads = count(sandbox, SEND_LIST);
				await until(() => count(sandbox, SEND_LIST) > listReads);
				await sendNotification(context, request({ target_user_ids: [laterUser] }));
				if (tries < 4) sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			}
			return await sending;
		});
		expect(statusesTo(users)).toEqual([0, 0, 0, 0]);
		expect(error.message).toMatch(
			/^Sending the notification failed: no answer from the API \(ECONNRESET\)/,
		);
		expect(error.description).toMatch(/not registered \(the list of sends proved it absent/);
		expect(statusesTo([laterUser])).toEqual([202, 202, 202, 202]);
		expect(registered()).toHaveLength(4);
	});

	test('a token endpoint that fails once (503) before a send: renewed again and sent, no lookup', async () => {
		const fresh = storeFor(sandbox);
		sandbox.addFault({ endpoint: REFRESH, kind: 'status5xx', status: 503, times: 1 });
		const outcome = await valueInNode(fresh, (context) => sendNotification(context, request()));
		expect(sandbox.requestLog().map((entry) => [entry.endpoint, entry.status])).toEqual([
			[REFRESH, 503],
			[REFRESH, 200],
			[SEND, 202],
		]);
		expect(outcome.recoveredAfter).toBeUndefined();
		expect(registered().map((record) => record.id)).toEqual([outcome.id]);
	});

	test('a refused token renewal fails the send at once: nothing sent, no lookup', async () => {
		const revoked = storeFor(sandbox, { credential: sandbox.orgs.secondary });
		sandbox.revokeRefreshToken(sandbox.orgs.secondary.clientId);
		const error = await errorInNode(revoked, (context) => sendNotification(context, request()));
		expect(error.message).toMatch(
			/^Sending the notification failed: The API refused to renew the access token \(HTTP 401\)/,
		);
		expect(count(sandbox, SEND)).toBe(0);
		expect(count(sandbox, SEND_LIST)).toBe(0);
		expectNoSecret(error, secretsOf(sandbox, sandbox.orgs.secondary));
	});
});
