/**
 * "Exact or unknown": a lookup's window has an end, and a claim whose holder lives is waited for,
 * never raced. After a crashed claim or an unknown try, a send exactly like the event's (the same
 * text to the same customer, for another order, by another worker) made minutes later is not the
 * event's: taking it would leave the item with another event's id and its person never notified.
 * And a copy of an event whose holder still sends (a long Retry-After) must not send it too. Runs go
 * through n8n's engine against the sandbox, two n8n processes sharing n8n's store where it matters;
 * sends are counted from the sandbox's request log.
 */
import { REFRESH } from '../../devkit/endpoints.cts';
import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import { useTimings, useWait } from '../../devkit/processState.cts';
import {
	anotherProcess,
	jsonOf,
	keptAsUsed,
	keyedRun,
	leaveCrashedClaim,
	logOf,
	MESSAGE,
	nodeResult,
	nodeWorkflow,
	passTime,
	registeredSends,
	retryWorkflow,
	runOnce,
	runWorkflow,
	SEND,
	SEND_LIST,
	TestClock,
	sendAsAnotherClient,
	sendRun,
	until,
	useKeyedRuns,
	whileSendingLater,
} from '../harness/index.cts';
import type { NodeRunOptions, ProcessStateModule } from '../harness/index.cts';

const IN_ANOTHER_PROCESS = 'companionPushInAnotherProcess';
/** The two n8n processes, as the test's clock names their waits. */
const HERE = 'here';
const ELSEWHERE = 'elsewhere';

describe('a window has an end; a claim whose holder lives is waited for', () => {
	const keyedRuns = useKeyedRuns();
	const { sandbox } = keyedRuns;
	let users: string[];
	beforeAll(() => ({ users } = keyedRuns));

	let otherProcess: ProcessStateModule;
	beforeAll(() => {
		otherProcess = anotherProcess(IN_ANOTHER_PROCESS);
	});
	beforeEach(() => {
		otherProcess.resetProcessState();
		otherProcess.useTimings({
			lookupSettleMs: 600,
			lookupEvidenceWaitMs: 2_000,
			retry: { baseDelayMs: 20, maxDelayMs: 100 },
		});
	});
	afterAll(() => otherProcess.resetProcessState());

	const event = (key: string, userId = users[0]) => [{ userId, key }];
	/** `start`, while a later send of `like`'s process proves the list up to date once listed. */
	const withLaterSend = async <T,>(start: () => Promise<T>, like: NodeRunOptions): Promise<T> =>
		(await whileSendingLater(sandbox, start, like, users[5])).result;
	/** The sends registered to `userId`, oldest first. */
	const sendsTo = (userId: string) =>
		registeredSends(sandbox)
			.filter((send) => send.userIds.includes(userId))
			.map((send) => send.id);
	/** The same run in the other n8n process. */
	const elsewhere = (run: ReturnType<typeof keyedRun>) => ({ ...run, type: IN_ANOTHER_PROCESS });

	test('n8n died between claiming a key and sending, 10 minutes ago; an identical send for another order was made 5 minutes ago: not taken for it, the event is sent', async () => {
		// What n8n killed between the claim and the send leaves behind: the claim, no confirmation.
		await leaveCrashedClaim(keyedRuns.store, 'order-1:shipped', [users[0]], 10);
		const otherOrder = await sendAsAnotherClient(sandbox, [users[0]], MESSAGE, -5 * MINUTE_MS);

		const run = keyedRun(sandbox, event('order-1:shipped'));
		const result = jsonOf((await withLaterSend(() => runOnce(run), run)).items)[0];

		expect(sendsTo(users[0])).toEqual([otherOrder, result.id]);
		expect(result).toMatchObject({ idempotencyKey: 'order-1:shipped' });
		expect(result.id).not.toBe(otherOrder);
	});

	test('an event whose outcome stayed unknown; 5 minutes later another n8n process sends the same text to the same customer for another order; the event again: not taken for it, sent', async () => {
		// Nothing registered, and the list cannot be read: the outcome stays unknown.
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
		const first = jsonOf((await runOnce(keyedRun(sandbox, event('order-1:shipped')))).items)[0];
		expect(first.error).toContain('the outcome is unknown');
		sandbox.clearFaults();

		passTime(5 * MINUTE_MS);
		const otherOrder = jsonOf(
			(await runOnce(elsewhere(keyedRun(sandbox, event('order-2:shipped'))))).items,
		)[0];
		expect(otherOrder.id).toBe(registeredSends(sandbox)[0].id);
		const run = keyedRun(sandbox, event('order-1:shipped'));
		const again = jsonOf((await withLaterSend(() => runOnce(run), run)).items)[0];

		expect(sendsTo(users[0])).toEqual([otherOrder.id, again.id]);
		expect(again.id).not.toBe(otherOrder.id);
		expect(again.error).toBeUndefined();
	});

	test("an execution whose send's outcome stayed unknown, retried from the Executions list 5 minutes later, after another client sent the same text to the same person: not taken for it, sent", async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
		const run = sendRun(sandbox, [{ userId: users[0] }], {}, { continueOnFail: false });
		const workflow = nodeWorkflow(run);
		const failed = await runWorkflow(workflow);
		expect(nodeResult(failed).error?.message).toContain('the outcome is unknown');
		sandbox.clearFaults();

		passTime(5 * MINUTE_MS);
		const otherClient = await sendAsAnotherClient(sandbox, [users[0]], MESSAGE);
		const retried = nodeResult(await withLaterSend(() => retryWorkflow(workflow, failed), run));

		expect(retried.error).toBeUndefined();
		const item = jsonOf(retried.items)[0];
		expect(sendsTo(users[0])).toEqual([otherClient, item.id]);
		expect(item.id).not.toBe(otherClient);
	});

	/** The two processes' package waits on one clock the test moves (as `HERE` and `ELSEWHERE`). */
	const twoProcessClock = () => {
		const clock = new TestClock();
		clock.drive({ useWait }, HERE);
		clock.drive(otherProcess, ELSEWHERE);
		return clock;
	};
	/** The copy waits for the key's holder, and only for it: it holds no lease of its own (a store
	 * lock's renewal pause is a stoppable wait), and a held key's recheck is not stoppable. */
	const copyWaitsForHolder = (clock: TestClock) => () => {
		const waits = clock.waiting(ELSEWHERE);
		return waits.length > 0 && waits.every((wait) => !wait.stoppable);
	};

	/** Runs the event here, its send answered 429 with a Retry-After of 8 s, and, once the holder waits
	 * it out, the same event in the other process, which waits for the claim's holder at most `waitMs`.
	 * Time goes on on the clock, in order: the copy's rechecks due before the Retry-After ends, then
	 * the holder's send, then the copy's rechecks that are left. */
	const holderInRetryAfter = async (waitMs: number) => {
		const clock = twoProcessClock();
		sandbox.addFault({ endpoint: SEND, kind: 'rateLimit', retryAfterSeconds: 8, times: 1 });
		otherProcess.useTimings({ heldKeyWaitMs: waitMs });
		const run = keyedRun(sandbox, event('order-3:shipped'));
		const holder = runOnce(run);
		await until(() => clock.waiting(HERE).some((wait) => !wait.stoppable));
		const retryAfter = clock.waiting(HERE).find((wait) => !wait.stoppable)!;
		const copy = runOnce(elsewhere(run));
		const copyIdle = copyWaitsForHolder(clock);
		await clock.advanceWhileWaiting(copy, ELSEWHERE, {
			idle: copyIdle,
			notAfter: retryAfter.dueAt,
		});
		clock.advanceTo(retryAfter.dueAt);
		const holderItems = (await holder).items;
		await clock.advanceWhileWaiting(copy, ELSEWHERE, { idle: copyIdle });
		return { holder: jsonOf(holderItems)[0], copy: jsonOf((await copy).items)[0] };
	};

	test('the holder of a key waits out a long Retry-After while a copy of the event runs in another process: the copy waits for it, one send', async () => {
		const { holder, copy } = await holderInRetryAfter(30_000);

		expect(registeredSends(sandbox)).toHaveLength(1);
		expect(holder.id).toBe(registeredSends(sandbox)[0].id);
		expect(copy).toMatchObject({ skipped: true, idempotencyKey: 'order-3:shipped' });
	});

	test('a holder still sending beyond what the copy may wait: the copy sends nothing and says the outcome is unknown', async () => {
		const { holder, copy } = await holderInRetryAfter(1_000);

		expect(registeredSends(sandbox)).toHaveLength(1);
		expect(holder.id).toBe(registeredSends(sandbox)[0].id);
		expect(copy.error).toContain('the outcome is unknown');
		expect(copy.error).toContain('is still sending it');
	});

	test('a holder whose n8n stalls past its lease in a Retry-After: another process takes its claim over and sends; the holder, back, sends nothing and leaves the key alone', async () => {
		const clock = new TestClock();
		clock.drive({ useWait }, HERE);
		sandbox.addFault({ endpoint: SEND, kind: 'rateLimit', retryAfterSeconds: 3, times: 1 });
		otherProcess.useTimings({ heldKeyWaitMs: 30_000 });
		const run = keyedRun(sandbox, event('order-4:shipped'));
		const holder = runOnce(run);
		await until(() => clock.waiting(HERE).some((wait) => !wait.stoppable)); // its Retry-After
		// The holder's n8n stalls: time passes, none of its waits goes on; its lease runs out unrenewed.
		passTime(5 * MINUTE_MS);
		const copy = jsonOf(
			(await withLaterSend(() => runOnce(elsewhere(run)), elsewhere(run))).items,
		)[0];
		clock.advance(0); // the holder's n8n is back: its waits are over
		const stalled = jsonOf((await holder).items)[0];

		expect(sendsTo(users[0])).toEqual([copy.id]);
		expect(stalled.error).toContain('can no longer be held');
		expect(keptAsUsed(keyedRuns.store, 'order-4:shipped')).toBe(true);
	});

	test("a batch held after its turn, joining another's token renewal, while the lease runs out: it is not sent", async () => {
		// Two batches of one event at once: the first renews the token (held 1.5 s by the API), the
		// second waits for that renewal. Meanwhile n8n's clock passes the claim's lease.
		sandbox.addFault({ endpoint: REFRESH, kind: 'delay', delayMs: 1_500 });
		const run = keyedRun(sandbox, [{ userId: users.slice(0, 2), key: 'order-6:shipped' }], {
			batchSize: 1,
			maxParallelRequests: 2,
		});
		const holder = runOnce(run);
		await until(() => logOf(sandbox, REFRESH).length === 1);
		passTime(5 * MINUTE_MS);
		const batches = jsonOf((await holder).items);

		// The renewing batch left before the renewal (a stall of n8n inside its helper, beyond reach);
		// the waiting one asks its lease as it leaves, not when it took its turn.
		expect(sendsTo(users[1])).toEqual([]);
		expect(batches[1].error).toContain('can no longer be held');
	});

	test('a holder sending for longer than a lease renews it: a copy that comes after its first lease would have run out still waits for it; one send', async () => {
		const clock = twoProcessClock();
		const lease = { claimLeaseMs: 40_000 };
		// A Retry-After far beyond the end of the holder's first lease (its claim's minute plus 40 s).
		useTimings({ ...lease, retry: { maxRetryAfterMs: 5 * MINUTE_MS } });
		otherProcess.useTimings({ ...lease, heldKeyWaitMs: 30_000 });
		sandbox.addFault({ endpoint: SEND, kind: 'rateLimit', retryAfterSeconds: 130, times: 1 });
		clock.advanceTo(Math.ceil(Date.now() / MINUTE_MS) * MINUTE_MS); // a minute starts
		const claimMinute = Math.floor(Date.now() / MINUTE_MS);
		const run = keyedRun(sandbox, event('order-5:shipped'));
		const holder = runOnce(run);
		// Answered 429, the holder waits out the Retry-After (its lease renewal pausing meanwhile).
		await until(() => clock.waiting(HERE).some((wait) => !wait.stoppable));
		const retryAfter = clock.waiting(HERE).find((wait) => !wait.stoppable)!;
		const holderWaits = clock.waiting(HERE).length;
		/** The holder waits again as it did, no store lock held: a renewal the clock let go on has
		 * marked the minute and checked its lease (a clock moved before that would be a stall of the
		 * holder, the test above; a store lock's renewal pause is a wait of its own meanwhile). */
		const holderBackToWaiting = () =>
			until(
				() => !keyedRuns.store.rows.has('wf-test|') && clock.waiting(HERE).length === holderWaits,
			);
		clock.advanceTo((claimMinute + 1) * MINUTE_MS + 5_000); // the next minute: a renewal marks it
		await holderBackToWaiting();
		clock.advance(MINUTE_MS); // past the end of its first lease: only the renewal says it lives
		await holderBackToWaiting();
		const copy = runOnce(elsewhere(run));
		const copyIdle = copyWaitsForHolder(clock);
		// It finds the key held and waits (or, were the holder's lease not renewed, takes it over):
		// nothing of the copy is due by now, so this only waits for that.
		await clock.advanceWhileWaiting(copy, ELSEWHERE, { idle: copyIdle, notAfter: Date.now() });
		clock.advanceTo(retryAfter.dueAt); // the holder's Retry-After is over: it sends
		const sent = jsonOf((await holder).items)[0];
		await clock.advanceWhileWaiting(copy, ELSEWHERE, { idle: copyIdle });
		const skipped = jsonOf((await copy).items)[0];

		expect(registeredSends(sandbox)).toHaveLength(1);
		expect(sent.id).toBe(registeredSends(sandbox)[0].id);
		expect(skipped).toMatchObject({ skipped: true, idempotencyKey: 'order-5:shipped' });
	});
});
