/**
 * One attempt, replayed exactly: the request a try sends (title, body, recipients, `scheduled_at` as
 * sent) is recorded before it leaves, and a later try (Retry On Fail, a retried execution) that
 * looks the send up and may send it again uses that record, never a request recomputed from its own
 * clock. An event under an Idempotency Key delivered again (a new execution: no run records) has only
 * its claim's digest of each request: the same request is looked up, another is not sent ("unknown").
 * Through n8n's engine against the sandbox, whose request log counts the sends; the clock is the
 * test's (passTime): the later run comes after the time the first try placed the send at.
 */
import type { IDataObject, IRun } from 'n8n-workflow';

import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import {
	jsonOf,
	NODE_SANDBOX,
	nodeResult,
	nodeWorkflow,
	passTime,
	registeredSends,
	runOn,
	retryWorkflow,
	runWorkflow,
	SEND,
	SEND_LIST,
	sendParameters,
	sentBodies,
	storeFor,
	processedDataStore,
	useSandbox,
	whileSendingLater,
	type MemoryProcessedData,
	type NodeRunOptions,
} from '../harness/index.cts';

const MADRID = 'Europe/Madrid';
/** Short settle waits: a fresh n8n process in each test. */
const SHORT_WAITS = { lookupSettleMs: 200, lookupEvidenceWaitMs: 1_000, heldKeyWaitMs: 300 };

/** Sets this process's clock (n8n's and the sandbox's) to `iso`; it runs on from there. */
function clockAt(iso: string) {
	passTime(Date.parse(iso) - Date.now());
}

describe('an attempt is replayed exactly by a later try', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let store: MemoryProcessedData;
	let userId: string;
	/** Gets the later send that lets the retry's lookup prove a send absent (whileSendingLater). */
	let otherUserId: string;
	beforeAll(async () => {
		[userId, otherUserId] = sandbox.orgs.primary.usersOfKind('onePhone', 2);
		store = await processedDataStore();
	});
	beforeEach(() => {
		store.reset();
		resetProcessState(); // a fresh n8n process each time
		useTimings(SHORT_WAITS);
	});
	afterEach(() => jest.useRealTimers());
	afterAll(() => resetProcessState());

	const run = (parameters: IDataObject): NodeRunOptions => ({
		type: 'companionPush',
		credentials: storeFor(sandbox),
		timezone: MADRID,
		items: [{ userId }],
		parameters: sendParameters({ userIds: '={{ $json.userId }}', ...parameters }),
	});

	/** The send requests of the run's message that reached the API ("Another event" is the later
	 * send's). */
	const ourSends = () => sentBodies(sandbox).filter((body) => body.title === 'Shift change');

	/** Retries the failed execution (or, without one, runs the workflow anew) while a later send of this process goes out (the evidence a
	 * lookup needs to prove a send absent, as a busy n8n makes it). */
	async function retry(
		workflow: ReturnType<typeof nodeWorkflow>,
		failed: IRun | undefined,
		like: NodeRunOptions,
	) {
		const { result } = await whileSendingLater(
			sandbox,
			() => (failed ? retryWorkflow(workflow, failed) : runWorkflow(workflow)),
			like,
			otherUserId,
		);
		return nodeResult(result);
	}

	/** The first try's send is registered, its answer lost, and the list cannot be read: the
	 * execution fails with the outcome unknown. */
	async function failWithAnswerLost(workflow: ReturnType<typeof nodeWorkflow>) {
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
		const failed = await runWorkflow(workflow);
		expect(nodeResult(failed).error?.message).toContain('the outcome is unknown');
		expect(registeredSends(sandbox)).toHaveLength(1);
		sandbox.clearFaults();
		return failed;
	}

	test('Quiet Hours: a send placed at their end, its answer lost, retried after them, is found, not sent again without its time', async () => {
		clockAt('2026-10-25T22:10:00Z'); // 23:10 in Madrid: quiet until 07:00
		const quiet = run({ options: { quietHours: '22:00-07:00' } });
		const workflow = nodeWorkflow(quiet);
		const failed = await failWithAnswerLost(workflow);
		expect(sentBodies(sandbox)[0].scheduled_at).toBe('2026-10-26T07:00:00+01:00');

		clockAt('2026-10-26T07:30:00Z'); // 08:30 in Madrid: the quiet hours are over
		const retried = await retry(workflow, failed, quiet);

		expect(retried.error).toBeUndefined();
		expect(ourSends()).toHaveLength(1);
		const [item] = jsonOf(retried.items);
		expect(item.id).toBe(registeredSends(sandbox)[0].id);
		expect(item.recoveredAfter).toBe('an earlier try whose answer was lost');
		// The item says when its send goes out as it was sent, not as the retry would place it now.
		expect(item.scheduledAt).toBe('2026-10-26T07:00:00+01:00');
	});

	test('Schedule with "Send If Time Is Past", its answer lost, retried after the time: found, not sent again at once', async () => {
		clockAt('2026-10-26T08:00:00Z');
		const scheduled = run({
			operation: 'schedule',
			scheduledAt: '2026-10-26T09:15:00',
			options: { sendIfPast: true },
		});
		const workflow = nodeWorkflow(scheduled);
		const failed = await failWithAnswerLost(workflow);
		expect(sentBodies(sandbox)[0].scheduled_at).toBe('2026-10-26T09:15:00+01:00');

		clockAt('2026-10-26T09:00:00Z'); // 10:00 in Madrid: Scheduled At is past
		const retried = await retry(workflow, failed, scheduled);

		expect(retried.error).toBeUndefined();
		expect(ourSends()).toHaveLength(1);
		const [item] = jsonOf(retried.items);
		expect(item.id).toBe(registeredSends(sandbox)[0].id);
		expect(item.scheduledAt).toBe('2026-10-26T09:15:00+01:00');
		expect(item.sentImmediately).toBeUndefined();
	});

	test('proven absent, a retried execution sends the recorded request, with the time the first try placed it at, not one placed now', async () => {
		clockAt('2026-10-25T22:10:00Z');
		const quiet = run({ options: { quietHours: '22:00-07:00' } });
		const workflow = nodeWorkflow(quiet);
		// The first try's request never reaches the API (a reset before it is read), and the list cannot
		// be read: unknown. The retry then proves it absent and sends it: as recorded, at 07:00.
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
		const failed = await runWorkflow(workflow);
		expect(nodeResult(failed).error?.message).toContain('the outcome is unknown');
		expect(registeredSends(sandbox)).toHaveLength(0);
		sandbox.clearFaults();

		clockAt('2026-10-26T07:30:00Z'); // 08:30 in Madrid: the retry itself would send at once
		const retried = await retry(workflow, failed, quiet);

		expect(retried.error).toBeUndefined();
		// Two requests reached the API (the first was never registered), both as the first try built it.
		expect(ourSends().map((body) => body.scheduled_at)).toEqual([
			'2026-10-26T07:00:00+01:00',
			'2026-10-26T07:00:00+01:00',
		]);
		expect(registeredSends(sandbox).filter((send) => send.title === 'Shift change')).toHaveLength(
			1,
		);
		expect(jsonOf(retried.items)[0].scheduledAt).toBe('2026-10-26T07:00:00+01:00');
	});

	test('an Idempotency Key: the same event again, after the quiet hours, is not sent a second time without its time', async () => {
		clockAt('2026-10-25T22:10:00Z');
		const keyed = run({ options: { quietHours: '22:00-07:00', idempotencyKey: 'shift-42' } });
		const workflow = nodeWorkflow(keyed);
		await failWithAnswerLost(workflow);

		clockAt('2026-10-26T07:30:00Z');
		// A send this process made since, listed: what lets a lookup prove a send absent.
		const later = await runOn(sandbox, {
			items: [{ userId: otherUserId }],
			parameters: sendParameters({ userIds: '={{ $json.userId }}', title: 'Another event' }),
		});
		expect(later.error).toBeUndefined();
		// A new execution (the event delivered again): no run records, only the key's claim.
		const again = nodeResult(await runWorkflow(workflow));

		expect(ourSends()).toHaveLength(1);
		expect(again.error?.message).toContain('the outcome is unknown');
	});

	test('an Idempotency Key: the same event again while its request is still the same (inside the quiet hours) is looked up and found, not sent again', async () => {
		clockAt('2026-10-25T22:10:00Z');
		const keyed = run({ options: { quietHours: '22:00-07:00', idempotencyKey: 'shift-43' } });
		const workflow = nodeWorkflow(keyed);
		await failWithAnswerLost(workflow);

		clockAt('2026-10-25T22:40:00Z'); // 23:40 in Madrid: still placed at 07:00
		const again = await retry(workflow, undefined, keyed);

		expect(again.error).toBeUndefined();
		expect(ourSends()).toHaveLength(1);
		const [item] = jsonOf(again.items);
		expect(item.id).toBe(registeredSends(sandbox)[0].id);
		expect(item.recoveredAfter).toBe('an earlier run that claimed its Idempotency Key');
		expect(item.scheduledAt).toBe('2026-10-26T07:00:00+01:00');
	});
});
