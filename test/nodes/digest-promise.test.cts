/**
 * The digest's promise, under faults: no event is carried by two live pushes, and none by no push
 * while its item says it is scheduled. Each test is a sequence that could break it: the key of an
 * event written only after its replacement left, a cancel whose answer was lost, a lookup that takes
 * the window's canceled send for the new one, a keyed send whose keys would trim the row that holds
 * the windows (the store's one bound for the row keeps them), a refused replacement. Runs go through
 * n8n's engine against the sandbox and n8n's store as the harness keeps it (it fails when the test
 * says so); pushes are counted from the sandbox's sends and their states.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	CANCEL,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	registeredSends,
	runNode,
	SEND,
	sendParameters,
	storeFor,
	useSandbox,
	useTwoProcesses,
	until,
	passTime,
	type NodeRunOptions,
} from '../harness/index.cts';

/** The store lock's lease with its jitter (common/timings.ts): a lock left in the row by a process
 * whose database went away is taken over once it stayed unrenewed that long. */
const LOCK_LEFT_MS = 20_000 + 5_000 + 1;

describe('Digest: never two live pushes for an event, never none', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	const shared = useTwoProcesses(sandbox, {
		lookupSettleMs: 200,
		lookupEvidenceWaitMs: 1_000,
		heldKeyWaitMs: 300,
		retry: { baseDelayMs: 20, maxDelayMs: 100 },
	});

	const DIGEST = { digestKey: 'order-updates', digestTitle: '{count} order updates' };
	const KEYED = { ...DIGEST, idempotencyKey: '={{ $json.orderEvent }}' };

	/** One item per event (its person, and its key or body when given), continuing on fail. */
	function digestRun(
		events: IDataObject[],
		options: IDataObject = DIGEST,
		type = 'companionPush',
	): NodeRunOptions {
		return {
			type,
			credentials: storeFor(sandbox),
			items: events,
			continueOnFail: true,
			parameters: sendParameters({
				title: 'Order update',
				body: '={{ $json.body ?? "Order 1042 shipped" }}',
				userIds: '={{ $json.userIds }}',
				options,
			}),
		};
	}
	/** Runs `run`, moving n8n's clock past the lease of a lock a failed run left, once the run has
	 * seen that lock twice (its first look starts the lease's count, on n8n's clock). */
	async function pastLeftLock<T>(run: () => Promise<T>): Promise<T> {
		const callsBefore = shared.store.calls.length;
		const running = run();
		await until(
			() =>
				shared.store.calls
					.slice(callsBefore)
					.filter((call) => call.kind === 'count' && call.scope === 'workflow').length >= 2,
		);
		passTime(LOCK_LEFT_MS);
		return await running;
	}
	/** The person's sends that will still go out, or went out: not canceled. */
	function livePushes(userId: string) {
		const ids = new Set(
			registeredSends(sandbox)
				.filter((send) => send.userIds.includes(userId))
				.map((send) => send.id),
		);
		return sandbox
			.notifications()
			.filter((record) => ids.has(record.id) && record.status !== 'canceled');
	}

	test('1. the store fails after a replacement left, then the event is delivered again: it stays in one live push', async () => {
		const [person] = shared.users;
		const event = (orderEvent: string) => ({ userIds: person, orderEvent });
		await runNode(digestRun([event('order-1:shipped')], KEYED));
		// n8n's database goes down once the API registered the replacement (before the turn's last write).
		shared.store.failWhen = () =>
			registeredSends(sandbox).length >= 2 ? 'connection to the database lost' : undefined;
		const second = await runNode(digestRun([event('order-2:shipped')], KEYED));
		shared.store.failWhen = undefined;
		expect(jsonOf(second.items)[0]).toMatchObject({ digestCount: 2 });

		const again = await pastLeftLock(
			async () => await runNode(digestRun([event('order-2:shipped')], KEYED)),
		);
		expect(jsonOf(again.items)[0]).toMatchObject({ skipped: true });
		expect(livePushes(person).map((record) => record.title)).toEqual(['2 order updates']);
	});

	test("2. a cancel's answer lost behind an outage, then the next event's cancel answered 200 lost and 409: the first event rides on the next push", async () => {
		const [person] = shared.users;
		const first = await runNode(digestRun([{ userIds: person, body: 'Order 1 shipped' }]));
		expect(jsonOf(first.items)[0]).toMatchObject({ digestCount: 1 });
		// The cancel is done, its answer lost; the API answers 503 to every try after it.
		sandbox.addFault({ endpoint: CANCEL, kind: 'resetAfter', times: 1 });
		sandbox.addFault({ endpoint: CANCEL, kind: 'status5xx', times: 10 });
		const second = await runNode(digestRun([{ userIds: person, body: 'Order 2 shipped' }]));
		expect(jsonOf(second.items)[0].error).toBeDefined();
		sandbox.clearFaults();
		expect(livePushes(person)).toEqual([]);

		// The next event's cancel: its 200 lost, then 409 (already canceled).
		sandbox.addFault({ endpoint: CANCEL, kind: 'resetAfter', times: 1 });
		const third = await runNode(digestRun([{ userIds: person, body: 'Order 3 shipped' }]));
		expect(jsonOf(third.items)[0]).toMatchObject({ digestCount: 2, title: '2 order updates' });
		expect(logOf(sandbox, CANCEL).filter((entry) => entry.status === 409)).toHaveLength(1);
		expect(livePushes(person).map((record) => [record.title, record.body])).toEqual([
			['2 order updates', 'Order 3 shipped'],
		]);
	});

	test("3. a replacement whose answer is lost, looking exactly like the window's canceled send: never taken for it", async () => {
		const [person] = shared.users;
		// A Digest Title without the count: every replacement looks like the one before it.
		const alike = { digestKey: 'order-updates', digestTitle: 'New order updates' };
		const elsewhere = 'companionPushInAnotherProcess';
		await runNode(digestRun([{ userIds: person }], alike, elsewhere));
		const second = await runNode(digestRun([{ userIds: person }], alike, elsewhere));
		const canceledLater = jsonOf(second.items)[0].id as string;
		// This process's replacement is answered 503, and not registered; the API refuses list probes
		// (sends to nobody), so nothing proves it absent.
		sandbox.configure({ sendWithoutOrganizationUser: 'reject' });
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', times: 1 });
		const third = await runNode(digestRun([{ userIds: person }], alike));
		const item = jsonOf(third.items)[0];
		expect(sandbox.notifications().find((record) => record.id === canceledLater)?.status).toBe(
			'canceled',
		);
		expect(item.id).toBeUndefined();
		expect(item.error).toMatch(/unknown/);
		expect(item.errorDescription).toContain(canceledLater);
		// Not registered (503): nothing carries the window now, and the item says so (unknown).
		expect(livePushes(person)).toEqual([]);
	});

	test('4. 45 open windows and a keyed send of the same node keeping 10 keys: no window is trimmed away, an event delivered again stays in one push', async () => {
		const people = shared.users.slice(0, 45);
		const events = people.map((userIds, index) => ({
			userIds,
			orderEvent: `order-${index}:shipped`,
		}));
		await runNode(digestRun(events, KEYED));
		const urgent = await runNode(
			digestRun([{ userIds: shared.users[50], orderEvent: 'urgent-1' }], {
				idempotencyKey: '={{ $json.orderEvent }}',
				keysToKeep: 10,
			}),
		);
		expect(jsonOf(urgent.items)[0].error).toBeUndefined();
		const again = await runNode(digestRun([events[0], { userIds: people[1] }], KEYED));
		expect(jsonOf(again.items)[0]).toMatchObject({ skipped: true });
		expect(jsonOf(again.items)[1]).toMatchObject({ digestCount: 2 });
		expect(livePushes(people[0])).toHaveLength(1);
		expect(livePushes(people[1]).map((record) => record.title)).toEqual(['2 order updates']);
	});

	test("5. an event the API refuses (its body over the API's limit): the window's earlier events still go out, and the next event joins them", async () => {
		const [person] = shared.users;
		sandbox.configure({ maxBodyLength: 40 });
		await runNode(digestRun([{ userIds: person, body: 'Order 1 shipped' }]));
		await runNode(digestRun([{ userIds: person, body: 'Order 2 shipped' }]));
		const refused = await runNode(digestRun([{ userIds: person, body: 'x'.repeat(41) }]));
		const item = jsonOf(refused.items)[0];
		expect(item.error).toMatch(/400|longer/i);
		expect(item.errorDescription).toMatch(
			/made again as .*: its 2 earlier event\(s\) still go out/,
		);
		expect(livePushes(person).map((record) => [record.title, record.body])).toEqual([
			['2 order updates', 'Order 2 shipped'],
		]);

		const next = await runNode(digestRun([{ userIds: person, body: 'Order 4 shipped' }]));
		expect(jsonOf(next.items)[0]).toMatchObject({ digestCount: 3 });
		expect(livePushes(person).map((record) => [record.title, record.body])).toEqual([
			['3 order updates', 'Order 4 shipped'],
		]);
	});
});
