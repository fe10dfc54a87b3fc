/**
 * "Exact or unknown" after a lost answer, in a list of sends that shows new sends late: nothing like
 * the send in the list proves it absent only once the list showed a send made after the answer was
 * lost (it reached the API after ours, if ours did): one this process made since, or any send (another
 * client's too) whose creation time is later than the loss on the API's clock, bounded by a send of
 * this process listed before; never after a fixed wait, nor after a lag measured before. A
 * list lagging well past the old 10 s settle wait made a second send; here it makes one send, or the
 * item says "unknown" with how to check. Runs go through n8n's engine against the sandbox; who was
 * notified is counted from the sandbox's request log.
 */
import type { IDataObject } from 'n8n-workflow';

import { resetProcessState } from '../../devkit/processState.cts';
import {
	count,
	expectEachOnce,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	registeredSends,
	runOnce,
	runWithLaterSend,
	SEND,
	SEND_LIST,
	sendAsAnotherClient,
	sendRun,
	storeFor,
	useSandbox,
	until,
	useShortTimings,
	wait,
} from '../harness/index.cts';
import type { NodeRunOptions } from '../harness/index.cts';

/** The settle wait of these tests (the default is 10 s): lags below are measured against it. */
const SETTLE_MS = 600;
const UNKNOWN =
	'Sending the notification: the outcome is unknown (ECONNRESET), so it was not sent again';

describe('exact or unknown: a list of sends that lags', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let users: string[];

	beforeAll(() => {
		users = sandbox.orgs.primary.usersOfKind('onePhone', 6);
	});
	afterAll(() => resetProcessState());
	beforeEach(() => {
		resetProcessState();
		useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 6_000 });
	});

	const posts = () => logOf(sandbox, SEND).length;

	const withLaterRun = (run: NodeRunOptions, userId: string) =>
		runWithLaterSend(sandbox, run, userId);

	test.each<[string, 'resetAfter' | 'resetBefore', number]>([
		['after it was registered', 'resetAfter', 1],
		['before it reached the API', 'resetBefore', 0],
	])(
		'a list lagging 30 s (50 times the settle wait), one item, its answer lost %s: not sent again, "unknown" with how to check',
		async (_, kind, registered) => {
			sandbox.configure({ listLagMs: 30_000 });
			sandbox.addFault({ endpoint: SEND, kind });
			const result = await runOnce(sendRun(sandbox, [{ userId: users[0] }]));

			expect(posts()).toBe(1);
			expect(registeredSends(sandbox)).toHaveLength(registered);
			const [item] = jsonOf(result.items);
			expect(item.error).toBe(UNKNOWN);
			// Its list probe, made after the settle wait, is not listed in time either.
			expect(item.errorDescription).toContain(
				'nothing shows the list is up to date: the sends this process made after it were not listed yet',
			);
			expect(item.errorDescription).toContain('Check the list of sends');
		},
	);

	test('a list lagging 30 s, and a send of this process made after the lost answer that it does not show in time: not sent again, "unknown"', async () => {
		sandbox.configure({ listLagMs: 30_000 });
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 1_500 });
		const { result, later } = await withLaterRun(
			sendRun(sandbox, [{ userId: users[0] }], {}, { credentials: storeFor(sandbox) }),
			users[1],
		);

		expectEachOnce(sandbox, users.slice(0, 2));
		expect(later.error).toBeUndefined();
		const [item] = jsonOf(result.items);
		expect(item.error).toBe(UNKNOWN);
		expect(item.errorDescription).toContain(
			'the sends this process made after it were not listed yet',
		);
	});

	test('a list lagging 2 s (3 times the settle wait) with a send made after each lost answer: the registered one found, the other proven absent and sent once', async () => {
		sandbox.configure({ listLagMs: 2_000 });
		const credentials = storeFor(sandbox);

		// Registered, its answer lost: the list shows it 2 s later, with the later send.
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		const registeredFirst = await withLaterRun(
			sendRun(sandbox, [{ userId: users[0] }], {}, { credentials }),
			users[1],
		);
		// Lost before reaching the API: the later send listed, nothing like it: absent, sent once.
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		const neverRegistered = await withLaterRun(
			sendRun(sandbox, [{ userId: users[2] }], {}, { credentials }),
			users[3],
		);

		expectEachOnce(sandbox, users.slice(0, 4));
		const idOf = (userId: string) =>
			registeredSends(sandbox).find((send) => send.userIds.includes(userId))!.id;
		expect(jsonOf(registeredFirst.result.items)[0]).toMatchObject({
			id: idOf(users[0]),
			recoveredAfter: 'ECONNRESET',
		});
		const [sent] = jsonOf(neverRegistered.result.items);
		expect(sent.error).toBeUndefined();
		expect(sent.id).toBe(idOf(users[2]));
		// Its first POST reset, the second accepted, once the later send was listed.
		const postsTo = (userId: string) =>
			logOf(sandbox, SEND).filter((entry) =>
				((entry.body as IDataObject).target_user_ids as string[]).includes(userId),
			);
		expect(postsTo(users[2]).map((entry) => entry.status)).toEqual([0, 202]);
		const laterAccepted = postsTo(users[3])[0].time;
		expect(postsTo(users[2])[1].time).toBeGreaterThan(laterAccepted + 2_000);
	});

	test('a send the API registers 2.5 s after answering, and a send of this process listed meanwhile: found after the settle wait, not sent again', async () => {
		// The later send proves the list up to date, but not that the API is done registering ours.
		useShortTimings({ lookupSettleMs: 3_000, lookupEvidenceWaitMs: 6_000 });
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', registerAfterMs: 2_500 });
		const { result, later } = await withLaterRun(
			sendRun(sandbox, [{ userId: users[0] }], {}, { credentials: storeFor(sandbox) }),
			users[1],
		);

		expectEachOnce(sandbox, users.slice(0, 2));
		expect(posts()).toBe(2);
		expect(later.error).toBeUndefined();
		const ours = registeredSends(sandbox).find((send) => send.userIds.includes(users[0]))!;
		expect(jsonOf(result.items)[0]).toMatchObject({ id: ours.id, recoveredAfter: 'ECONNRESET' });
	});

	describe('another client sends after the lost answer', () => {
		const LAG_MS = 1_500;
		const postsTo = (userId: string) =>
			logOf(sandbox, SEND).filter((entry) =>
				((entry.body as IDataObject).target_user_ids as string[]).includes(userId),
			);
		// An API that refuses sends to nobody: no list probe proves anything, only the other client's
		// send can (evidence-probe.test.cts has the probes).
		beforeEach(() => sandbox.configure({ sendWithoutOrganizationUser: 'reject' }));

		/** `run`, and once its lookup has read the list, a send of another client to `userId`. */
		const whileAnotherClientSends = async (run: NodeRunOptions, userId: string) => {
			const listReads = count(sandbox, SEND_LIST);
			const running = runOnce(run);
			await until(() => count(sandbox, SEND_LIST) > listReads);
			// The API dates its answers in whole seconds: a send made within a second of the loss may
			// not be placed after it.
			await wait(1_100);
			await sendAsAnotherClient(sandbox, [userId], { title: 'Another client' });
			return await running;
		};

		test("a list lagging 1.5 s (over twice the settle wait), a send of this process listed before: the registered one found, the other proven absent by the creation time of the other client's send, each sent once", async () => {
			sandbox.configure({ listLagMs: LAG_MS });
			useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 4 * LAG_MS });
			const credentials = storeFor(sandbox);
			// Listed by the time of the lookups: its creation time bounds the API's clock.
			await runOnce(
				sendRun(sandbox, [{ userId: users[5] }], { title: 'Earlier' }, { credentials }),
			);
			await wait(LAG_MS + 100);

			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
			const registeredFirst = await whileAnotherClientSends(
				sendRun(sandbox, [{ userId: users[0] }], {}, { credentials }),
				users[1],
			);
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			const neverRegistered = await whileAnotherClientSends(
				sendRun(sandbox, [{ userId: users[2] }], {}, { credentials }),
				users[3],
			);

			expectEachOnce(sandbox, [users[0], users[1], users[2], users[3], users[5]]);
			expect(postsTo(users[0]).map((entry) => entry.status)).toEqual([0]);
			expect(jsonOf(registeredFirst.items)[0]).toMatchObject({
				id: registeredSends(sandbox).find((send) => send.userIds.includes(users[0]))!.id,
				recoveredAfter: 'ECONNRESET',
			});
			const [sent] = jsonOf(neverRegistered.items);
			expect(sent.error).toBeUndefined();
			expect(postsTo(users[2]).map((entry) => entry.status)).toEqual([0, 202]);
			// Sent again only once the other client's send was listed.
			expect(postsTo(users[2])[1].time).toBeGreaterThan(postsTo(users[3])[0].time + LAG_MS);
		});

		test('the same without a send of this process listed before: the API\'s clock is not known, so the other client\'s send places nothing: "unknown", not sent again', async () => {
			sandbox.configure({ listLagMs: LAG_MS });
			useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 4 * LAG_MS });
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			const result = await whileAnotherClientSends(
				sendRun(sandbox, [{ userId: users[0] }]),
				users[1],
			);

			expect(postsTo(users[0]).map((entry) => entry.status)).toEqual([0]);
			expect(registeredSends(sandbox)).toHaveLength(1);
			const [item] = jsonOf(result.items);
			expect(item.error).toBe(UNKNOWN);
			expect(item.errorDescription).toContain("the API's clock is not known yet");
		});

		test("the API's clock stepped 60 s ahead since the send of this process listed before, and another client's send made before the loss: not taken as made after it; the registered one found, sent once", async () => {
			sandbox.configure({ listLagMs: LAG_MS });
			useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 4 * LAG_MS });
			const credentials = storeFor(sandbox);
			await runOnce(
				sendRun(sandbox, [{ userId: users[5] }], { title: 'Earlier' }, { credentials }),
			);
			await wait(LAG_MS + 100);
			// The step, then another client's send, listed by the time of the loss.
			await sendAsAnotherClient(sandbox, [users[1]], { title: 'Another client' }, 60_000);
			sandbox.configure({ clockOffsetMs: 60_000 });
			await wait(LAG_MS + 100);

			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
			const result = await runOnce(sendRun(sandbox, [{ userId: users[0] }], {}, { credentials }));

			expect(postsTo(users[0]).map((entry) => entry.status)).toEqual([0]);
			expectEachOnce(sandbox, [users[0], users[1], users[5]]);
			expect(jsonOf(result.items)[0]).toMatchObject({
				id: registeredSends(sandbox).find((send) => send.userIds.includes(users[0]))!.id,
				recoveredAfter: 'ECONNRESET',
			});
		});
	});
});
