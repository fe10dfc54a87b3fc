/**
 * "Never twice, whatever n8n does": n8n-core's real engine runs the node again as n8n does (Retry
 * On Fail, a retried execution, the same event again), and the sandbox's log says who was notified.
 * The decision logic under test: what is skipped (an earlier try's send, a used Idempotency Key),
 * what is recorded when (a send accepted, one whose outcome stayed unknown), and what is freed (a
 * refused send's key).
 */
import type { IDataObject } from 'n8n-workflow';

import { entriesOf } from '../../nodes/CompanionPush/neverTwice/keysRow';
import { holderEntry, LOCK_VALUE } from '../../nodes/CompanionPush/store/lock';
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import {
	expectEachOnce,
	jsonOf,
	keptAsUsed,
	KEYS_ROW,
	leaveCrashedClaim,
	keepSendingWhileLookingUp,
	logOf,
	notificationsPerUser,
	runWithLaterSend,
	NODE_SANDBOX,
	nodeContextOf,
	pairedOf,
	registeredSends,
	SEND,
	SEND_LIST,
	sendParameters,
	storeFor,
	useSandbox,
	nodeResult,
	nodeWorkflow,
	retryWorkflow,
	runWorkflow,
	type NodeRunOptions,
	processedDataStore,
	type MemoryProcessedData,
} from '../harness/index.cts';

const RETRY_ON_FAIL = { retryOnFail: true, maxTries: 3, waitBetweenTries: 0 };
/** How long the list must stay empty before a send counts as absent, and how long a claim found
 * unconfirmed is given to be confirmed: short, for a fresh n8n process in each test. */
const SHORT_WAITS = { lookupSettleMs: 200, lookupEvidenceWaitMs: 1_000, heldKeyWaitMs: 300 };
/** The same, with a store lock taken over once unrenewed for 300 to 400 ms (a holder that died). */
const SHORT_WAITS_AND_LEASE = {
	...SHORT_WAITS,
	storeLockBudgetMs: 300,
	storeLockBreakJitterMs: 100,
};

describe('never twice: n8n runs the node again', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let users: string[];
	let store: MemoryProcessedData;

	beforeAll(async () => {
		users = sandbox.orgs.primary.usersOfKind('onePhone', 8);
		store = await processedDataStore();
	});
	beforeEach(() => {
		store.reset();
		resetProcessState(); // a fresh n8n process each time
		useTimings(SHORT_WAITS);
	});
	afterAll(() => resetProcessState());

	/** One send per item, each item to its own user; one send at a time (so a fault meets a known
	 * item) unless `fields.options` says otherwise. */
	function perUserRun(
		extra: Partial<NodeRunOptions> = {},
		fields: IDataObject = {},
	): NodeRunOptions {
		const options = { maxParallelRequests: 1, ...(fields.options as IDataObject | undefined) };
		return {
			type: 'companionPush',
			credentials: storeFor(sandbox),
			items: users.slice(0, 5).map((userId) => ({ userId })),
			parameters: sendParameters({ userIds: '={{ $json.userId }}', ...fields, options }),
			...extra,
		};
	}

	test('Retry On Fail over an outage on the 3rd item (4 sends answered 5xx, list probes included), in a process with no later send: each user once, no error', async () => {
		// Nothing this run sends proves the 3rd absent: its lookups make list probes (to nobody), whose
		// listing does; those the outage answers 5xx are never repeated at once.
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', skip: 2, times: 4 });
		const result = nodeResult(
			await runWorkflow(nodeWorkflow(perUserRun({ settings: RETRY_ON_FAIL }))),
		);

		expect(result.error).toBeUndefined();
		expectEachOnce(sandbox, users.slice(0, 5));
		// One POST per item, and one more for the 3rd once proven absent.
		expect(logOf(sandbox, SEND)).toHaveLength(6);
	});

	test('Retry On Fail after a one-time 403 on the 3rd item: each user once', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 2, times: 1 });
		const result = nodeResult(
			await runWorkflow(nodeWorkflow(perUserRun({ settings: RETRY_ON_FAIL }))),
		);

		expect(result.error).toBeUndefined();
		expectEachOnce(sandbox, users.slice(0, 5));
		expect(jsonOf(result.items).map((item) => item.sentByEarlierTry ?? false)).toEqual([
			true,
			true,
			false,
			false,
			false,
		]);
		// 6 requests: 5 accepted, one refused with 403 and not repeated within the try.
		expect(logOf(sandbox, SEND).map((entry) => entry.status)).toEqual([
			202, 202, 403, 202, 202, 202,
		]);
	});

	test('Retry On Fail with parallel sends (8 items, 20 at a time) and a 403 on one of them: each user once', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 3, times: 1 });
		const run = {
			...perUserRun({ settings: RETRY_ON_FAIL }, { options: { maxParallelRequests: 20 } }),
			items: users.map((userId) => ({ userId })),
		};
		const result = nodeResult(await runWorkflow(nodeWorkflow(run)));

		expect(result.error).toBeUndefined();
		expectEachOnce(sandbox, users);
		// The refused one is sent by the second try; the 7 others came from the first.
		const fromFirstTry = jsonOf(result.items).filter((item) => item.sentByEarlierTry === true);
		expect(fromFirstTry).toHaveLength(7);
		expect(pairedOf(result.items)).toEqual(users.map((_, index) => [index]));
	});

	test('Retry On Fail, Schedule: the scheduled sends of the first try are not scheduled again', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 1, times: 1 });
		const later = new Date(Date.now() + 3_600_000).toISOString();
		const run = perUserRun(
			{ settings: RETRY_ON_FAIL },
			{ operation: 'schedule', scheduledAt: later },
		);
		const result = nodeResult(await runWorkflow(nodeWorkflow(run)));

		expect(result.error).toBeUndefined();
		expectEachOnce(sandbox, users.slice(0, 5));
		expect(
			jsonOf(result.items).map((item) => [item.status, item.sentByEarlierTry ?? false]),
		).toEqual([
			['scheduled', true],
			['scheduled', false],
			['scheduled', false],
			['scheduled', false],
			['scheduled', false],
		]);
	});

	test('Retry On Fail, a large audience in batches: the batches already sent are not sent again', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 1, times: 1 });
		const run: NodeRunOptions = {
			...perUserRun({ settings: RETRY_ON_FAIL }),
			items: [{}],
			parameters: sendParameters({
				userIds: users.slice(0, 6).join(','),
				options: { batchSize: 2, maxParallelRequests: 1 },
			}),
		};
		const result = nodeResult(await runWorkflow(nodeWorkflow(run)));

		expect(result.error).toBeUndefined();
		expectEachOnce(sandbox, users.slice(0, 6));
		expect(
			jsonOf(result.items).map((item) => [item.batch, item.sentByEarlierTry ?? false]),
		).toEqual([
			[1, true],
			[2, false],
			[3, false],
		]);
	});

	test('Retry On Fail, one send for all items in batches: the batches of the first try are not sent again', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 1, times: 1 });
		const run = perUserRun(
			{ settings: RETRY_ON_FAIL },
			{ sendMode: 'combined', options: { batchSize: 2 } },
		);
		const result = nodeResult(await runWorkflow(nodeWorkflow(run)));

		expect(result.error).toBeUndefined();
		expectEachOnce(sandbox, users.slice(0, 5));
		expect(
			jsonOf(result.items).map((item) => [item.batch, item.sentByEarlierTry ?? false]),
		).toEqual([
			[1, true],
			[2, false],
			[3, false],
		]);
		expect(pairedOf(result.items)).toEqual([
			[0, 1, 2, 3, 4],
			[0, 1, 2, 3, 4],
			[0, 1, 2, 3, 4],
		]);
	});

	test('Retry On Fail with Continue On Fail: n8n re-runs a run whose first item is an error; the good items are sent once', async () => {
		const run: NodeRunOptions = {
			...perUserRun({ settings: RETRY_ON_FAIL, continueOnFail: true }),
			items: [{ userId: '' }, { userId: users[0] }, { userId: users[1] }],
		};
		const result = nodeResult(await runWorkflow(nodeWorkflow(run)));

		expectEachOnce(sandbox, users.slice(0, 2));
		const items = jsonOf(result.items);
		expect(items[0].error).toContain('"User IDs" is empty');
		// n8n ran the node 3 times (the first item stays an error): the last run reports the sends
		// of the first one.
		expect(items.slice(1).map((item) => item.sentByEarlierTry)).toEqual([true, true]);
	});

	test('a failed execution retried (as from the Executions list): the sends it made are not made again, the others are', async () => {
		// Refused, so certainly not sent (a lost answer would need proof of absence: see above).
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 2, times: 1 });
		const workflow = nodeWorkflow(perUserRun());
		const failed = await runWorkflow(workflow);
		const failure = nodeResult(failed);
		expect(failure.error?.message).toContain('Sending the notification failed with HTTP 403');
		expect(failure.error?.description).toContain('Already sent for earlier items (not repeated)');
		expect(registeredSends(sandbox)).toHaveLength(2);

		const retried = nodeResult(await retryWorkflow(workflow, failed));
		expect(retried.error).toBeUndefined();
		expectEachOnce(sandbox, users.slice(0, 5));
		expect(jsonOf(retried.items).map((item) => item.sentByEarlierTry ?? false)).toEqual([
			true,
			true,
			false,
			false,
			false,
		]);
	});

	test("the records of what a run sent stay in the execution's data while it failed (a retry reads them), and go once a run succeeds", async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 2, times: 1 });
		const workflow = nodeWorkflow(perUserRun());
		const failed = await runWorkflow(workflow);
		expect(nodeResult(failed).error).toBeDefined();
		// The two sends made before the refusal: without them a retry would send them again.
		const failedRecords = nodeContextOf(failed)?.companionPushSends as IDataObject;
		expect(Object.keys(failedRecords)).toHaveLength(2);

		const retried = await retryWorkflow(workflow, failed);
		expect(nodeResult(retried).error).toBeUndefined();
		// Nothing runs a succeeded run again: its records would only weigh on every saved execution.
		expect(nodeContextOf(retried)?.companionPushSends).toEqual({});
	});

	test('a retried execution looks up a send whose answer was lost, and does not send it again', async () => {
		// Item 1's send is registered, its answer lost, and the list cannot be read: the outcome is unknown.
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', skip: 1, times: 1 });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
		const workflow = nodeWorkflow(perUserRun());
		const failed = await runWorkflow(workflow);
		expect(nodeResult(failed).error?.message).toContain('the outcome is unknown');
		expect(nodeResult(failed).error?.description).toContain(
			'A retry of this execution looks the send up first.',
		);
		expect(registeredSends(sandbox)).toHaveLength(2);

		sandbox.clearFaults();
		const retried = nodeResult(await retryWorkflow(workflow, failed));
		expect(retried.error).toBeUndefined();
		expectEachOnce(sandbox, users.slice(0, 5));
		const items = jsonOf(retried.items);
		expect(items[1].recoveredAfter).toBe('an earlier try whose answer was lost');
		expect(items[1].id).toBe(registeredSends(sandbox)[1].id);
	});

	describe('Idempotency Key', () => {
		const keyed = (fields: IDataObject = {}) => ({
			options: { idempotencyKey: '={{ $json.key }}', ...fields },
		});

		test('the same event twice in one run: one send, the second item skipped naming the first send', async () => {
			const run: NodeRunOptions = {
				...perUserRun({}, keyed()),
				items: [
					{ userId: users[0], key: 'order-1:shipped' },
					{ userId: users[0], key: 'order-1:shipped' },
				],
			};
			const result = nodeResult(await runWorkflow(nodeWorkflow(run)));

			expect(result.error).toBeUndefined();
			expectEachOnce(sandbox, [users[0]]);
			const [first, second] = jsonOf(result.items);
			expect(first).toMatchObject({
				id: registeredSends(sandbox)[0].id,
				idempotencyKey: 'order-1:shipped',
			});
			expect(second).toMatchObject({
				skipped: true,
				idempotencyKey: 'order-1:shipped',
				earlierSendId: first.id,
			});
			expect(second.id).toBeUndefined();
			expect(pairedOf(result.items)).toEqual([[0], [1]]);
		});

		test('the same event twice in one run, sent in parallel: the copy waits for the first send and names it', async () => {
			const items = [
				{ userId: users[0], key: 'order-2:shipped' },
				{ userId: users[1], key: 'other' },
				{ userId: users[0], key: 'order-2:shipped' },
			];
			const result = nodeResult(
				await runWorkflow(
					nodeWorkflow({ ...perUserRun({}, keyed({ maxParallelRequests: 20 })), items }),
				),
			);

			expect(result.error).toBeUndefined();
			expectEachOnce(sandbox, users.slice(0, 2));
			const [first, , copy] = jsonOf(result.items);
			expect(copy).toMatchObject({ skipped: true, earlierSendId: first.id });
		});

		test('the same event in a later execution: skipped, nothing sent', async () => {
			const run: NodeRunOptions = {
				...perUserRun({}, keyed()),
				items: [{ userId: users[0], key: 'order-7:paid' }],
			};
			await runWorkflow(nodeWorkflow(run));
			const again = nodeResult(await runWorkflow(nodeWorkflow(run)));

			expect(logOf(sandbox, SEND)).toHaveLength(1);
			expect(jsonOf(again.items)).toEqual([
				expect.objectContaining({
					skipped: true,
					idempotencyKey: 'order-7:paid',
					skipReason: 'Idempotency Key already used: not sent again',
				}),
			]);
		});

		test('a send the API refused leaves its key free: the next run sends it', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'forbidden', times: 1 });
			const run: NodeRunOptions = {
				...perUserRun({}, keyed()),
				items: [{ userId: users[0], key: 'k-refused' }],
			};
			const refused = nodeResult(await runWorkflow(nodeWorkflow(run)));
			expect(refused.error?.message).toContain('HTTP 403');
			// Nothing of the key is left: neither its claim nor a confirmation.
			expect(store.entries('wf-test', 'n:n-test')).toEqual([]);

			const sent = nodeResult(await runWorkflow(nodeWorkflow(run)));
			expect(sent.error).toBeUndefined();
			expectEachOnce(sandbox, [users[0]]);
			expect(jsonOf(sent.items)[0].skipped).toBeUndefined();
		});

		test('a send whose outcome stayed unknown keeps its key, the error says so, and a later run finds the send', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
			sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
			const run: NodeRunOptions = {
				...perUserRun({}, keyed()),
				items: [{ userId: users[0], key: 'k-unknown' }],
			};
			const unknown = nodeResult(await runWorkflow(nodeWorkflow(run)));
			expect(unknown.error?.description).toContain(
				'Its Idempotency Key "k-unknown" stays claimed: a later run looks the send up first.',
			);

			sandbox.clearFaults();
			// The key was never confirmed (no answer came): the later run looks in the list instead
			// of trusting the claim either way, and finds the send.
			const again = nodeResult(await runWorkflow(nodeWorkflow(run)));
			expect(jsonOf(again.items)[0]).toMatchObject({
				id: registeredSends(sandbox)[0].id,
				recoveredAfter: 'an earlier run that claimed its Idempotency Key',
			});
			expectEachOnce(sandbox, [users[0]]);
		});

		test('a key claimed by a run that died before sending: the next run finds no send and sends it once', async () => {
			// What n8n killed between the claim and the send leaves behind: the claim, no confirmation,
			// three minutes ago (its lease ran out since).
			await leaveCrashedClaim(store, 'k-crash', [users[0]], 3);
			const run: NodeRunOptions = {
				...perUserRun({}, keyed()),
				items: [{ userId: users[0], key: 'k-crash' }],
			};
			// Another run of this process sends meanwhile: once listed, it proves the list up to date.
			const { result } = await runWithLaterSend(sandbox, run, users[5]);

			expect(result.error).toBeUndefined();
			expectEachOnce(sandbox, [users[0], users[5]]);
			expect(jsonOf(result.items)[0]).toMatchObject({
				id: registeredSends(sandbox).find((send) => send.userIds.includes(users[0]))!.id,
				idempotencyKey: 'k-crash',
			});
			// Now confirmed: the same event again is skipped.
			const again = nodeResult(await runWorkflow(nodeWorkflow(run)));
			expect(jsonOf(again.items)[0].skipped).toBe(true);
			expect(registeredSends(sandbox)).toHaveLength(2);
		});

		test('the store lock left taken by a process that died: after its lease it is taken anew, and the event is sent once', async () => {
			// What n8n killed while holding the lock leaves behind: the lock's row (the workflow's), with its holder.
			await store.checkProcessedAndRecord(
				[LOCK_VALUE, holderEntry('a process that died')],
				'workflow',
				KEYS_ROW,
				{ mode: 'entries' },
			);
			useTimings(SHORT_WAITS_AND_LEASE);
			const run: NodeRunOptions = {
				...perUserRun({}, keyed()),
				items: [{ userId: users[0], key: 'k-after-a-dead-lock' }],
			};
			const result = nodeResult(await runWorkflow(nodeWorkflow(run)));

			expect(result.error).toBeUndefined();
			expectEachOnce(sandbox, [users[0]]);
			expect(keptAsUsed(store, 'k-after-a-dead-lock')).toBe(true);
			expect(store.rows.has('wf-test|')).toBe(false); // given back
		});

		test('batches of one item share its key without blocking each other: a re-run sends only the batches not sent', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 1, times: 1 });
			const run: NodeRunOptions = {
				...perUserRun(),
				items: [{ key: 'digest-2026-11-23' }],
				parameters: sendParameters({
					userIds: users.slice(0, 5).join(','),
					options: { batchSize: 2, maxParallelRequests: 1, idempotencyKey: '={{ $json.key }}' },
				}),
			};
			const first = nodeResult(await runWorkflow(nodeWorkflow(run)));
			expect(first.error?.description).toContain('Batch 2 of 3 failed.');
			expect(registeredSends(sandbox)).toHaveLength(1);

			// The batches not confirmed are looked up first; another run of this process sends meanwhile
			// (once listed, it proves the list up to date), after each lookup began.
			const laterSends = keepSendingWhileLookingUp(sandbox, run.credentials, users[5]);
			const again = nodeResult(await runWorkflow(nodeWorkflow(run)));
			await laterSends.stop();
			expect(again.error).toBeUndefined();
			const perUser = notificationsPerUser(sandbox);
			expect(users.slice(0, 5).map((userId) => perUser.get(userId))).toEqual([1, 1, 1, 1, 1]);
			expect(jsonOf(again.items).map((item) => [item.batch, item.skipped ?? false])).toEqual([
				[1, true],
				[2, false],
				[3, false],
			]);
		});

		test("the keys live in the node's row, the lock in the workflow's, given back after", async () => {
			const items = [{ userId: users[0], key: 'scoped' }];
			await runWorkflow(nodeWorkflow({ ...perUserRun({}, keyed()), items }));
			expect(store.entries('wf-test', 'n:n-test')).toHaveLength(1);
			expect(store.rows.has('wf-test|')).toBe(false);
		});

		test("a confirmation takes out of the keys' row only what its claim wrote: n8n scans the whole row for every value taken out", async () => {
			const items = [{ userId: users[0], key: 'only-its-own' }];
			await runWorkflow(nodeWorkflow({ ...perUserRun({}, keyed()), items }));

			const takenOut = store.calls.filter(
				(call) => call.kind === 'remove' && call.scope === 'node',
			);
			// Its pending mark, its minute and its period, its batches' layout, its batch's attempt and the
			// mark that it recorded attempts: no end mark (none was written).
			expect(takenOut.map((call) => call.items.length)).toEqual([6]);
			expect(keptAsUsed(store, 'only-its-own')).toBe(true);
			expect(store.entries('wf-test', 'n:n-test')).toHaveLength(1);
		});

		test('a row of the workflow kept by a Remove Duplicates node (Scope "Workflow", its highest value) is never the lock: the item says so, the send is decided by the list of sends, the row stays', async () => {
			const where = {
				workflow: { id: 'wf-test', active: true },
				node: { id: 'n-dedupe' } as never,
			};
			await store.checkProcessedAndRecord(['1042'], 'workflow', where, {
				mode: 'latestIncrementalKey',
			});
			useTimings(SHORT_WAITS_AND_LEASE);
			const run: NodeRunOptions = {
				...perUserRun({}, keyed()),
				items: [{ userId: users[0], key: 'k-beside-remove-duplicates' }],
			};
			// Another run of this process sends meanwhile: once listed, it proves the list up to date.
			const { result } = await runWithLaterSend(sandbox, run, users[5]);

			// Well past the lock's lease: the other node's row is as it was.
			await new Promise((resolve) => setTimeout(resolve, 600));
			expect(store.value('wf-test', '')).toEqual({ mode: 'latestIncrementalKey', data: '1042' });
			expectEachOnce(sandbox, [users[0], users[5]]);
			expect(jsonOf(result.items)[0].idempotencyKeyNote).toContain(
				'holds other data (a Remove Duplicates node of this workflow with Scope "Workflow"?)',
			);
		});

		test('Keys to Keep counts events: at least that many are remembered, the oldest beyond them (and the room of the events under way) are forgotten', async () => {
			// A long-used row: 600 events used before, oldest first (more than the row's room).
			const oldKeys = Array.from({ length: 600 }, (_, index) => `old-${index}`);
			await store.checkProcessedAndRecord(
				oldKeys.map((key) => entriesOf(key, []).claimed),
				'node',
				KEYS_ROW,
				{ mode: 'entries' },
			);
			expect(keptAsUsed(store, 'old-0')).toBe(true);
			const run = (key: string) =>
				runWorkflow(
					nodeWorkflow({
						...perUserRun({}, keyed({ keysToKeep: 2 })),
						items: [{ userId: users[0], key }],
					}),
				);
			for (const key of ['k1', 'k2', 'k3']) await run(key);
			expect(registeredSends(sandbox)).toHaveLength(3);
			// One entry per used event, no working entries left; the newest kept, the row bounded
			// (2 kept, the room of events under way and of a claim's probe, about 516), the oldest gone.
			expect(keptAsUsed(store, 'k3')).toBe(true);
			expect(keptAsUsed(store, 'k2')).toBe(true);
			expect(store.entries('wf-test', 'n:n-test').length).toBeLessThanOrEqual(2 + 516 + 3);
			expect(keptAsUsed(store, 'old-0')).toBe(false);

			resetProcessState(); // another process: only the store remembers
			useTimings(SHORT_WAITS);
			await run('k3');
			expect(registeredSends(sandbox)).toHaveLength(3);
			await run('old-0');
			expect(registeredSends(sandbox)).toHaveLength(4);
		});

		test('an empty key is bad input: the error names the field and nothing is sent', async () => {
			const run: NodeRunOptions = {
				...perUserRun({}, keyed()),
				items: [
					{ userId: users[0], key: 'x' },
					{ userId: users[1], key: ' ' },
				],
			};
			const result = nodeResult(await runWorkflow(nodeWorkflow(run)));
			expect(result.error?.message).toBe(
				'"Idempotency Key" is empty for this item: give each event its own key, or remove the option [item 1]',
			);
			expect(logOf(sandbox, SEND)).toHaveLength(0);
			expect(store.calls).toHaveLength(0);
		});

		test.each([
			[
				'a key of 5 MB',
				{ idempotencyKey: 'x'.repeat(5_000_000) },
				'"Idempotency Key" is 5000000 characters long: at most 1000',
			],
			[
				'Keys to Keep beyond 100,000',
				{ idempotencyKey: 'k', keysToKeep: 1_000_000 },
				'"Idempotency Keys Remembered" must be a whole number from 1 to 100,000 (got 1000000)',
			],
			[
				'the scope "The Whole Workflow"',
				{ idempotencyKey: 'k', idempotencyScope: 'workflow' },
				'"Idempotency Key Applies To" "The Whole Workflow" is no longer supported',
			],
		])(
			'%s is refused: the error names the field, nothing is sent or stored',
			async (_, options, message) => {
				const run: NodeRunOptions = {
					...perUserRun({}, { options }),
					items: [{ userId: users[0] }],
				};
				const result = nodeResult(await runWorkflow(nodeWorkflow(run)));
				expect(result.error?.message).toContain(message);
				expect(result.error?.message.length).toBeLessThan(600);
				expect(logOf(sandbox, SEND)).toHaveLength(0);
				expect(store.calls).toHaveLength(0);
			},
		);
	});
});
