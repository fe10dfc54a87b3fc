/**
 * "Exact or unknown" with Idempotency Keys: the same event sent by several executions or n8n
 * processes, n8n's store failing or locked, n8n dying between the claim and the send. Each test is
 * a sequence that broke the promise (never notify twice, never drop a send in silence) while keys
 * were claimed one send at a time without a lock, and a key left unconfirmed was resolved by a
 * search of the last 24 hours. Runs go through n8n's engine against the sandbox and n8n's
 * processed-data store as the harness keeps it (it loses writes as n8n's does); who was notified is
 * counted from the sandbox's request log.
 */
import type { IDataObject } from 'n8n-workflow';

import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import {
	expectEachOnce,
	jsonOf,
	keptAsUsed,
	logOf,
	registeredSends,
	SEND,
	SEND_LIST,
	nodeResult,
	nodeWorkflow,
	retryWorkflow,
	runWorkflow,
	type MemoryProcessedData,
	HOUR,
	keyedRun,
	leaveClaimCutShort,
	leaveCrashedClaim,
	MESSAGE,
	passTime,
	probeRequests,
	runOnce,
	runWithLaterSend,
	sendAsAnotherClient,
	useKeyedRuns,
	useShortTimings,
	anotherProcess,
} from '../harness/index.cts';
import type { NodeRunOptions, ProcessStateModule } from '../harness/index.cts';

/** That row as the store stand-in names it. */
const KEYS_ROW_ID = 'wf-test|n:n-test';

describe('exact or unknown: Idempotency Keys', () => {
	const keyedRuns = useKeyedRuns();
	const { sandbox } = keyedRuns;
	let users: string[];
	let store: MemoryProcessedData;
	beforeAll(() => ({ users, store } = keyedRuns));
	/** The sends registered for a user, in order. */
	const sendsTo = (userId: string) =>
		registeredSends(sandbox).filter((send) => send.userIds.includes(userId));

	const event = (key: string, userId = users[0]) => [{ userId, key }];

	test('3. the same event twice in one process at once, the API answering after 6 s: one send, the copy skipped naming it', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'delay', delayMs: 6_000 });
		const run = keyedRun(sandbox, event('order-9:shipped'));
		const outputs = (await Promise.all([runOnce(run), runOnce(run)])).map(
			(result) => jsonOf(result.items)[0],
		);

		expectEachOnce(sandbox, [users[0]]);
		const sent = outputs.find((output) => output.id !== undefined);
		const copy = outputs.find((output) => output.skipped === true);
		expect(sent?.id).toBe(registeredSends(sandbox)[0].id);
		expect(copy).toMatchObject({ earlierSendId: sent?.id, idempotencyKey: 'order-9:shipped' });
		expect(copy?.id).toBeUndefined();
	});

	test('4. the store fails when the key is confirmed: the item succeeds with a note; the event is not sent again, in this process or another (once its claim lapsed: found)', async () => {
		// n8n's database goes down once the API registered the send (after the claim, before the confirmation).
		store.failWhen = () =>
			registeredSends(sandbox).length > 0 ? 'connection to the database lost' : undefined;
		const run = keyedRun(sandbox, event('k-store-down'));
		const first = jsonOf((await runOnce(run)).items)[0];
		store.failWhen = undefined; // the database is back
		const again = jsonOf((await runOnce(run)).items)[0];
		resetProcessState(); // another n8n process: only the store and the list of sends remember
		useShortTimings();
		// Within the first run's lease: it may still be sending, so nothing is sent, and nothing told.
		const meanwhile = jsonOf((await runOnce(run)).items)[0];
		expect(meanwhile.error).toContain('is still sending it');
		passTime(3 * MINUTE_MS); // its lease ran out: it is gone
		const elsewhere = jsonOf((await runOnce(run)).items)[0];

		expect(logOf(sandbox, SEND)).toHaveLength(1);
		expect(first.id).toBe(registeredSends(sandbox)[0].id);
		expect(first.idempotencyKeyNote).toContain(
			'"k-store-down" could not be marked as used in n8n\'s store',
		);
		expect(again).toMatchObject({ skipped: true, earlierSendId: first.id });
		expect(elsewhere).toMatchObject({
			id: first.id,
			recoveredAfter: 'an earlier run that claimed its Idempotency Key',
		});
	});

	test('5. an execution whose outcome stayed unknown, retried after another execution sent the redelivered event: the retry skips', async () => {
		// Nothing registered, and the list cannot be read: the outcome stays unknown, the execution fails.
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
		const workflow = nodeWorkflow(
			keyedRun(sandbox, event('k-redelivered'), {}, { continueOnFail: false }),
		);
		const failed = await runWorkflow(workflow);
		expect(nodeResult(failed).error?.message).toContain('the outcome is unknown');
		sandbox.clearFaults();

		// Its lookup is proven absent by a send this process makes meanwhile, once listed.
		const { result } = await runWithLaterSend(
			sandbox,
			keyedRun(sandbox, event('k-redelivered')),
			users[5],
		);
		const redelivered = jsonOf(result.items)[0];
		expect(redelivered.id).toBe(sendsTo(users[0])[0].id);

		const retried = nodeResult(await retryWorkflow(workflow, failed));
		expectEachOnce(sandbox, [users[0], users[5]]);
		expect(retried.error).toBeUndefined();
		expect(jsonOf(retried.items)[0]).toMatchObject({
			skipped: true,
			idempotencyKey: 'k-redelivered',
		});
	});

	test("8. n8n died between claiming a key and sending, and an identical send was made yesterday: today's send is made once", async () => {
		const yesterday = await sendAsAnotherClient(sandbox, [users[0]], MESSAGE, -23 * HOUR);
		// What n8n killed between the claim and the send leaves behind: the claim, no confirmation,
		// three minutes ago (its lease ran out since).
		await leaveCrashedClaim(store, 'k-crash', [users[0]], 3);
		// Its lookup is proven absent by a send this process makes meanwhile, once listed.
		const { result: run } = await runWithLaterSend(
			sandbox,
			keyedRun(sandbox, event('k-crash')),
			users[5],
		);
		const result = jsonOf(run.items)[0];

		const today = sendsTo(users[0])[1]?.id;
		expect(today).toBeDefined();
		expect(today).not.toBe(yesterday);
		expect(result).toMatchObject({ id: today, idempotencyKey: 'k-crash' });
		expect(sendsTo(users[0])).toHaveLength(2);
	});

	test('a crashed claim taken over, proven absent, and the send refused (403): nothing went out, so the key is freed and the run after sends once, without a lookup', async () => {
		await leaveCrashedClaim(store, 'k-refused', [users[0]], 3);
		// The lookup's list probe (the evidence, to nobody) goes first; the taken-over send after it is
		// refused.
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 1, times: 1 });
		const refused = await runOnce(keyedRun(sandbox, event('k-refused')));
		expect(probeRequests(sandbox, SEND)).toHaveLength(1);
		const [refusedItem] = jsonOf(refused.items);
		expect(refusedItem.error).toMatch(/403/);
		expect(refusedItem.errorDescription).not.toMatch(/stays claimed/);
		expect(sendsTo(users[0])).toHaveLength(0);

		// The permission fixed, the event again, in a quiet organization: nothing to prove a lookup
		// absent, so only a freed key lets it go out.
		const listReadsBefore = logOf(sandbox, SEND_LIST).length;
		const [again] = jsonOf((await runOnce(keyedRun(sandbox, event('k-refused')))).items);
		expect(again).toMatchObject({ id: sendsTo(users[0])[0]?.id, idempotencyKey: 'k-refused' });
		expect(sendsTo(users[0])).toHaveLength(1);
		expect(logOf(sandbox, SEND_LIST).length).toBe(listReadsBefore);
	});

	test('two keyed events that cannot be told sent or not, Continue On Fail off: the error that stops the run names the other one with why and how to check', async () => {
		// Runs that died after claiming both keys for other people: either may have sent to these.
		await leaveCrashedClaim(store, 'k-first', [users[2]], 3);
		await leaveCrashedClaim(store, 'k-second', [users[3]], 3);
		// Both at once, so the second fails beside the first instead of never starting.
		const result = await runOnce(
			keyedRun(
				sandbox,
				[...event('k-first'), ...event('k-second', users[1])],
				{ maxParallelRequests: 2 },
				{ continueOnFail: false },
			),
		);

		expect(logOf(sandbox, SEND)).toHaveLength(0);
		expect(result.error?.message).toContain('"k-first" for other recipients');
		// n8n drops the output with the error: only the error tells the user to check item 1's send.
		expect(result.error?.description).toContain(
			'Also failed: item 1 (Sending the notification: the outcome is unknown (an earlier run claimed the Idempotency Key "k-second" for other recipients, and may have sent to some of these), so it was not sent — Check the list of sends (Notification > Get Many) for sends titled "Shift change" to learn who was notified.',
		);
	});

	test("n8n killed between the two writes of a key's claim, the same event again: unknown, and said so (not as a claim for other recipients)", async () => {
		// The claim's batches and time never went in, so nothing tells when, nor for whom.
		await leaveClaimCutShort(store, 'k-cut-short');
		const [item] = jsonOf((await runOnce(keyedRun(sandbox, event('k-cut-short')))).items);

		expect(logOf(sandbox, SEND)).toHaveLength(0);
		expect(item.error).toBe(
			'Sending the notification: the outcome is unknown (the Idempotency Key "k-cut-short" was claimed by a run that never confirmed its send, and when cannot be told, nor for whom (more than 48 hours ago, or n8n stopped while the key was being written)), so it was not sent',
		);
	});

	test('a re-run of a keyed event whose audience changed: the batch not proven sent ends "unknown", not sent', async () => {
		const run = (userIds: string[]) =>
			keyedRun(sandbox, [{ userId: userIds, key: 'digest-7' }], { batchSize: 2 });
		// Batch 2's send is registered, its answer lost, and the list cannot be read: unknown.
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', skip: 1 });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
		const first = jsonOf((await runOnce(run(users.slice(0, 4)))).items);
		expect(first[1].error).toContain('the outcome is unknown');
		sandbox.clearFaults();

		// The event again, with user 3 replaced by user 4: batches [0, 1] and [2, 4].
		const again = jsonOf((await runOnce(run([...users.slice(0, 3), users[4]]))).items);
		expectEachOnce(sandbox, users.slice(0, 4));
		expect(logOf(sandbox, SEND)).toHaveLength(2);
		expect(again[0]).toMatchObject({
			skipped: true,
			skipReason: 'Idempotency Key already used: this batch was sent by an earlier run',
		});
		expect(again[1].error).toContain('the outcome is unknown');
	});

	describe("the store's lock, with two n8n processes sharing n8n's store", () => {
		let otherProcess: ProcessStateModule;
		beforeAll(() => {
			otherProcess = anotherProcess('companionPushInAnotherProcess');
		});
		beforeEach(() => {
			otherProcess.resetProcessState();
			// A claim the other process holds is waited for as long as it takes it to confirm.
			useShortTimings({ heldKeyWaitMs: 30_000 });
			useShortTimings({ heldKeyWaitMs: 30_000 }, otherProcess);
		});
		afterAll(() => otherProcess.resetProcessState());

		const inBothProcesses = async (items: IDataObject[], options: IDataObject = {}) => {
			const here = keyedRun(sandbox, items, options);
			const there = { ...here, type: 'companionPushInAnotherProcess' };
			return (await Promise.all([runOnce(here), runOnce(there)])).map((result) =>
				jsonOf(result.items),
			);
		};

		test('the same key claimed by both processes at once: one send', async () => {
			store.roundTripMs = 30;
			// The keys' row exists (an earlier event), so claims that overlapped would overwrite each other.
			await runOnce(keyedRun(sandbox, event('earlier event', users[5])));
			const outputs = (await inBothProcesses(event('k-both'))).map((items) => items[0]);

			const send = registeredSends(sandbox).filter((registered) =>
				registered.userIds.includes(users[0]),
			);
			expect(send).toHaveLength(1);
			const [sender, other] =
				outputs[0].id === send[0].id && outputs[0].recoveredAfter === undefined
					? outputs
					: [...outputs].reverse();
			expect(sender.id).toBe(send[0].id);
			// The other skipped it, or, if it looked the send up before the claim was confirmed, found it.
			expect(other.skipped === true || other.id === send[0].id).toBe(true);
		});

		test('two nodes of one workflow keeping keys for the whole workflow, the same event at once (one in each process): refused, naming the field; nothing sent twice', async () => {
			store.roundTripMs = 30;
			/** The test workflow with its Companion Push node as node `nodeId`. */
			const onNode = (options: NodeRunOptions, nodeId: string) => {
				const workflow = nodeWorkflow(options);
				workflow.nodes[1] = { ...workflow.nodes[1], id: nodeId };
				return workflow;
			};
			const here = keyedRun(sandbox, event('k-whole-workflow'), { idempotencyScope: 'workflow' });
			const there = { ...here, type: 'companionPushInAnotherProcess' };
			// The workflow's keys exist (an earlier event), so claims that overlapped would overwrite each other.
			await runWorkflow(
				onNode(
					keyedRun(sandbox, event('earlier event', users[5]), { idempotencyScope: 'workflow' }),
					'node-a',
				),
			);
			const outputs = (
				await Promise.all([
					runWorkflow(onNode(here, 'node-a')),
					runWorkflow(onNode(there, 'node-b')),
				])
			).map((run) => jsonOf(nodeResult(run).items)[0]);

			expect(logOf(sandbox, SEND)).toHaveLength(0);
			for (const output of outputs)
				expect(output.error).toContain(
					'"Idempotency Key Applies To" "The Whole Workflow" is no longer supported',
				);
		});

		/**
		 * Holds the first write of the keys' row, by whichever process writes it first, until the other
		 * process has written the keys' row too (or 6 s passed); with `cutOff`, every later statement of
		 * that process as well: a process cut off from the database, whose renewals of the lock do not
		 * get through either. Returns the node type of the process held.
		 */
		const stallFirstKeysWrite = ({ cutOff }: { cutOff: boolean }) => {
			let held: string | undefined;
			let release!: () => void;
			const released = new Promise<void>((resolve) => {
				release = resolve;
				setTimeout(resolve, 6_000);
			});
			store.stall = ({ kind, row, nodeType }) => {
				const keysWrite = kind !== 'select' && row === KEYS_ROW_ID;
				if (held === undefined && keysWrite) held = nodeType;
				if (nodeType === held) return cutOff || keysWrite ? released : undefined;
				// The other process wrote the keys' row: the held write lands right after.
				if (keysWrite) setTimeout(release, 5);
				return undefined;
			};
			return () => held;
		};

		test("a keys-row write that stalls past the lock's lease (a slow database): the holder keeps renewing its lock, the other waits for it; one send", async () => {
			const lease = { storeLockBudgetMs: 300, storeLockBreakJitterMs: 100 };
			useTimings(lease);
			otherProcess.useTimings(lease);
			await runOnce(keyedRun(sandbox, event('earlier event', users[5])));
			const held = stallFirstKeysWrite({ cutOff: false });
			const outputs = (await inBothProcesses(event('k-slow-write'))).map((items) => items[0]);

			expect(held()).toBeDefined();
			expectEachOnce(sandbox, [users[0], users[5]]);
			const sent = registeredSends(sandbox).find((registered) =>
				registered.userIds.includes(users[0]),
			)!;
			expect(
				outputs.filter((output) => output.id === sent.id && output.recoveredAfter === undefined),
			).toHaveLength(1);
			expect(
				outputs.filter((output) => output.skipped === true || output.id === sent.id),
			).toHaveLength(2);
		});

		test("a process cut off from the database for longer than the lock's lease, in the middle of a keys-row write: the other takes the lock over, the write lands late, and still one send", async () => {
			const lease = { storeLockBudgetMs: 300, storeLockBreakJitterMs: 100 };
			useTimings(lease);
			otherProcess.useTimings(lease);
			await runOnce(keyedRun(sandbox, event('earlier event', users[5])));
			const held = stallFirstKeysWrite({ cutOff: true });
			const outputs = (await inBothProcesses(event('k-cut-off'))).map((items) => items[0]);

			expect(held()).toBeDefined();
			expectEachOnce(sandbox, [users[0], users[5]]);
			const sent = registeredSends(sandbox).find((registered) =>
				registered.userIds.includes(users[0]),
			)!;
			// The one cut off skipped the event, or found the other's send for it: never a send of its own.
			expect(
				outputs.filter((output) => output.skipped === true || output.id === sent.id),
			).toHaveLength(2);
			expect(keptAsUsed(store, 'k-cut-off')).toBe(true);
		});

		test('50 events at once in both processes: 50 sends, 50 keys kept as used', async () => {
			store.roundTripMs = 3;
			const recipients = sandbox.orgs.primary.userIds.slice(0, 50);
			const items = recipients.map((userId, index) => ({ userId, key: `event-${index}` }));
			const outputs = await inBothProcesses(items, { maxParallelRequests: 50 });

			expectEachOnce(sandbox, recipients);
			expect(items.filter((item) => !keptAsUsed(store, item.key))).toEqual([]);
			expect(store.rows.has('wf-test|')).toBe(false); // the lock was given back
			for (const output of outputs)
				expect(output.filter((item) => item.error !== undefined)).toEqual([]);
		});
	});

	describe('a store that cannot answer: the list of sends decides', () => {
		test('the store fails: nothing like the send in the whole list, so it is sent; an identical send there, so "unknown"', async () => {
			store.failing = 'connection to the database lost';
			// Its lookup is proven absent by a send this process makes meanwhile, once listed.
			const { result } = await runWithLaterSend(
				sandbox,
				keyedRun(sandbox, event('k-store-failing')),
				users[5],
			);
			const sent = jsonOf(result.items)[0];
			expect(sent.id).toBe(sendsTo(users[0])[0].id);

			// Made by another client (or a run this process forgot): it may be this very event.
			await sendAsAnotherClient(sandbox, [users[1]], MESSAGE, -2 * HOUR);
			const unknown = jsonOf(
				(await runOnce(keyedRun(sandbox, event('k-store-failing-2', users[1])))).items,
			)[0];
			expect(unknown.error).toContain('the outcome is unknown');
			expect(unknown.errorDescription).toContain('the list holds a send exactly like it');
			expect(logOf(sandbox, SEND)).toHaveLength(3);
		});
	});
});
