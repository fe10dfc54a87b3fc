/**
 * Send with "Cap per Person", through n8n's engine against the sandbox: at most N sends per person
 * within a rolling window, counted in n8n's processed-data store under the Idempotency Keys' lock,
 * also by two n8n processes at once; people over the cap on the second output "Capped"; a send
 * refused gives its slots back, one whose outcome is unknown keeps them; bad input sends nothing.
 * Who was notified is counted from the sandbox's request log; this process's clock (n8n's and the
 * sandbox's alike) is set to the instant each test needs.
 */
import { NodeHelpers, Workflow } from 'n8n-workflow';
import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

import { CompanionPush } from '../../nodes/CompanionPush/CompanionPush.node';
import {
	giveSlotsBack,
	takeSlots,
} from '../../nodes/CompanionPush/actions/notification/send/capSlots';
import { inStoreTurn } from '../../nodes/CompanionPush/store';
import {
	jsonOf,
	logOf,
	NODE_SANDBOX,
	nodeResult,
	nodeWorkflow,
	retryWorkflow,
	runWorkflow,
	SEND_LIST,
	nodeTypes,
	pairedOf,
	passTime,
	registeredSends,
	runNode,
	SEND,
	sendParameters,
	sentBodies,
	storeFor,
	useSandbox,
	useTwoProcesses,
	type NodeRunOptions,
	MemoryProcessedData,
	storeContext,
} from '../harness/index.cts';

/** Sets this process's clock to `iso` (it then runs on from there). */
function clockAt(iso: string) {
	passTime(Date.parse(iso) - Date.now());
}

const MINUTE = 60_000;

describe('Cap per Person', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	const shared = useTwoProcesses(sandbox);

	/** One item per event, each sent to `$json.userIds`, with the cap's options. */
	function capRun(
		events: Array<{ userIds: string }>,
		options: IDataObject = { capPerPerson: 3, capWindowMinutes: 60 },
		type = 'companionPush',
	) {
		return {
			type,
			credentials: storeFor(sandbox),
			items: events,
			parameters: sendParameters({ userIds: '={{ $json.userIds }}', options }),
		} satisfies NodeRunOptions;
	}
	const eventsFor = (userId: string, count: number) =>
		Array.from({ length: count }, () => ({ userIds: userId }));
	/** How many sends the sandbox registered for a person. */
	const sendsTo = (userId: string) =>
		registeredSends(sandbox).filter((send) => send.userIds.includes(userId)).length;
	const cappedOf = (outputs: INodeExecutionData[][]) => jsonOf(outputs[1] ?? []);

	test('3 per hour, 10 events for A and 1 for B in one execution: 3 + 1 sends, 7 on Capped with when A may be notified next', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA, personB] = shared.users;
		const events = eventsFor(personA, 10);
		events.splice(5, 0, { userIds: personB });
		const { outputs, error } = await runNode(capRun(events));

		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)).toHaveLength(4);
		expect([sendsTo(personA), sendsTo(personB)]).toEqual([3, 1]);
		// The first slot was taken in the minute 10:00 (kept to the minute, rounded up): free at 11:01.
		expect(cappedOf(outputs)).toEqual(
			Array.from({ length: 7 }, () => ({
				userId: personA,
				capped: true,
				capPerPerson: 3,
				capWindowMinutes: 60,
				notifyAfter: '2026-11-26T11:01:00.000Z',
				title: 'Shift change',
			})),
		);
		// Each capped person paired with its own event: A's 4th to 10th (B's is item 5).
		expect(pairedOf(outputs[1])).toEqual([[3], [4], [6], [7], [8], [9], [10]]);
		// Never silent on the main output either: every event has its item, sent or saying why not.
		const main = jsonOf(outputs[0]);
		expect(main).toHaveLength(11);
		expect(main.filter((item) => typeof item.id === 'string')).toHaveLength(4);
		expect(main.filter((item) => item.skipped === true).map((item) => item.cappedUserIds)).toEqual(
			Array.from({ length: 7 }, () => [personA]),
		);
		expect(main[3].skipReason).toMatch(/^Cap per Person: every recipient is over the cap/);
	});

	test('the same 11 events split across two n8n processes sharing the store, run at once: still 3 + 1 sends, 7 Capped', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA, personB] = shared.users;
		// Each statement a few ms long, so the two processes' turns interleave.
		shared.store.roundTripMs = 3;
		const here = capRun([...eventsFor(personA, 5), { userIds: personB }]);
		const there = capRun(eventsFor(personA, 5), undefined, 'companionPushInAnotherProcess');
		const results = await Promise.all([runNode(here), runNode(there)]);

		expect(results.map((result) => result.error)).toEqual([undefined, undefined]);
		expect(sentBodies(sandbox)).toHaveLength(4);
		expect([sendsTo(personA), sendsTo(personB)]).toEqual([3, 1]);
		const capped = results.flatMap((result) => cappedOf(result.outputs));
		expect(capped).toHaveLength(7);
		expect(new Set(capped.map((item) => `${item.userId} ${item.notifyAfter}`))).toEqual(
			new Set([`${personA} 2026-11-26T11:01:00.000Z`]),
		);
	});

	test('two executions in one process at once, 5 events for A each, A sent to once 20 minutes before: 2 more sends', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA] = shared.users;
		await runNode(capRun(eventsFor(personA, 1)));
		passTime(20 * MINUTE);
		// The first take of the lock waits, so that both counts join this process's next turn.
		let held = false;
		shared.store.stall = ({ kind, row }) => {
			if (held || kind !== 'insert' || row !== 'wf-test|') return undefined;
			held = true;
			return new Promise((resolve) => setTimeout(resolve, 300));
		};
		const results = await Promise.all([
			runNode(capRun(eventsFor(personA, 5))),
			runNode(capRun(eventsFor(personA, 5))),
		]);
		expect(sendsTo(personA)).toBe(3);
		// Each count read the slots, not the other's probes: A is free when the slot of 10:00 expires.
		expect(
			results.flatMap((result) => cappedOf(result.outputs)).map((item) => item.notifyAfter),
		).toEqual(Array.from({ length: 8 }, () => '2026-11-26T11:01:00.000Z'));
	});

	test('an item with several recipients: the capped ones leave it, the send goes to the others', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA, personB, personC] = shared.users;
		const options = { capPerPerson: 1, capWindowMinutes: 30 };
		await runNode(capRun([{ userIds: personA }], options));
		const { outputs, error } = await runNode(
			capRun([{ userIds: `${personA}, ${personB}, ${personC}` }], options),
		);

		expect(error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => body.target_user_ids)).toEqual([
			[personA],
			[personB, personC],
		]);
		expect(jsonOf(outputs[0])[0]).toMatchObject({ recipients: 2, cappedUserIds: [personA] });
		expect(cappedOf(outputs)).toMatchObject([
			{ userId: personA, notifyAfter: '2026-11-26T10:31:00.000Z' },
		]);
	});

	test('a send refused (403, not sent) gives its slot back, and so does the send it stopped: the next events are sent', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA, personB] = shared.users;
		const options = { capPerPerson: 1, capWindowMinutes: 60, maxParallelRequests: 1 };
		const events = [{ userIds: personA }, { userIds: personB }];
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', times: 1 });
		const refused = await runNode(capRun(events, options));
		expect(refused.error?.message).toMatch(/403|permission/i);
		// A's send refused; B's never started once the node stopped.
		expect(sentBodies(sandbox)).toHaveLength(1);
		expect(registeredSends(sandbox)).toEqual([]);

		const next = await runNode(capRun(events, options));
		expect(next.error).toBeUndefined();
		expect([sendsTo(personA), sendsTo(personB)]).toEqual([1, 1]);
		expect(cappedOf(next.outputs)).toEqual([]);
		// The slots of those sends count: the third events are capped.
		const third = await runNode(capRun(events, options));
		expect(cappedOf(third.outputs)).toHaveLength(2);
		expect([sendsTo(personA), sendsTo(personB)]).toEqual([1, 1]);
	});

	test('a run stopped by a failed send names the people it capped (n8n drops both outputs with it)', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA, personB] = shared.users;
		const options = { capPerPerson: 1, capWindowMinutes: 60 };
		await runNode(capRun([{ userIds: personA }], options));
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', times: 1 });
		const stopped = await runNode(capRun([{ userIds: personA }, { userIds: personB }], options));
		expect(stopped.outputs).toEqual([]);
		expect(stopped.error?.description).toContain(
			`Over Cap per Person, not sent: ${personA} (item 0).`,
		);
	});

	test('an event whose Idempotency Key was used is skipped and gives its slot back', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA] = shared.users;
		const keyed = (key: string) =>
			runNode(
				capRun([{ userIds: personA }], {
					capPerPerson: 2,
					capWindowMinutes: 60,
					idempotencyKey: key,
				}),
			);
		await keyed('order-1:shipped');
		const again = await keyed('order-1:shipped');
		expect(jsonOf(again.items)[0]).toMatchObject({
			skipped: true,
			idempotencyKey: 'order-1:shipped',
		});
		// The skipped copy's slot went back: one more event is sent, the next one capped.
		const second = await keyed('order-2:shipped');
		expect(cappedOf(second.outputs)).toEqual([]);
		const third = await keyed('order-3:shipped');
		expect(cappedOf(third.outputs)).toMatchObject([{ userId: personA }]);
		expect(sendsTo(personA)).toBe(2);
	});

	test('a send whose answer is lost and cannot be proven either way ("unknown") keeps its slot, and says so', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA] = shared.users;
		const options = { capPerPerson: 1, capWindowMinutes: 60 };
		// The connection drops before the API answers; the list never proves the send absent (it shows
		// sends an hour late, the lookup's list probe too).
		sandbox.configure({ listLagMs: 60 * MINUTE });
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		const lost = await runNode(capRun([{ userIds: personA }], options));
		expect(lost.error?.message).toContain('the outcome is unknown');
		expect(lost.error?.description).toContain(
			'Cap per Person counts this send for its people (they may have been notified)',
		);
		const posts = sentBodies(sandbox).length;

		const next = await runNode(capRun([{ userIds: personA }], options));
		expect(next.error).toBeUndefined();
		expect(cappedOf(next.outputs)).toMatchObject([{ userId: personA }]);
		expect(sentBodies(sandbox)).toHaveLength(posts);
	});

	describe('n8n runs the node again after a send whose outcome is unknown: the same send, never "capped" by its own slot', () => {
		const RETRY_ON_FAIL = { retryOnFail: true, maxTries: 3, waitBetweenTries: 0 };

		test('Retry On Fail: every try says "unknown" (none says "capped"), one POST in all', async () => {
			clockAt('2026-11-26T10:00:30Z');
			const [personA] = shared.users;
			// Every POST answers 5xx, and no later send of this process proves it absent (the API refuses
			// list probes, sends to nobody): unknown.
			sandbox.configure({ sendWithoutOrganizationUser: 'reject' });
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', times: 3 });
			const run = capRun([{ userIds: personA }], { capPerPerson: 1, capWindowMinutes: 60 });
			const result = nodeResult(
				await runWorkflow(nodeWorkflow({ ...run, settings: RETRY_ON_FAIL })),
			);

			expect(result.error?.message).toBe(
				'Sending the notification: the outcome is unknown (an earlier try whose answer was lost), so it was not sent again',
			);
			expect(result.error?.description).toContain(
				'A retry of this execution looks the send up first.',
			);
			expect(result.error?.description).toContain(
				'Cap per Person counts this send for its people (they may have been notified)',
			);
			// The first try's POST only: the later tries looked it up.
			expect(logOf(sandbox, SEND)).toHaveLength(1);
		});

		test('a retried execution finds the send its lost answer hid: sent once, its slot counted once', async () => {
			clockAt('2026-11-26T10:00:30Z');
			const [personA] = shared.users;
			const options = { capPerPerson: 2, capWindowMinutes: 60 };
			// Registered, its answer lost, and the list cannot be read: unknown.
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
			sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
			const workflow = nodeWorkflow(capRun([{ userIds: personA }], options));
			const failed = await runWorkflow(workflow);
			expect(nodeResult(failed).error?.message).toContain('the outcome is unknown');

			sandbox.clearFaults();
			const retried = nodeResult(await retryWorkflow(workflow, failed));
			expect(retried.error).toBeUndefined();
			expect(jsonOf(retried.items)).toMatchObject([
				{
					id: registeredSends(sandbox)[0].id,
					recoveredAfter: 'an earlier try whose answer was lost',
				},
			]);
			expect(cappedOf(retried.outputs)).toEqual([]);
			expect(sentBodies(sandbox)).toHaveLength(1);

			// That send holds one slot of 2, not two: one more event is sent, the next capped.
			const next = await runNode(capRun(eventsFor(personA, 2), options));
			expect(cappedOf(next.outputs)).toMatchObject([{ userId: personA }]);
			expect(sendsTo(personA)).toBe(2);
		});

		test('retried after its slot expired, with the cap full again: capped now, and the item says the earlier outcome is unknown', async () => {
			clockAt('2026-11-26T10:00:30Z');
			const [personA] = shared.users;
			const options = { capPerPerson: 1, capWindowMinutes: 60 };
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
			sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 50 });
			const workflow = nodeWorkflow(capRun([{ userIds: personA }], options));
			const failed = await runWorkflow(workflow);
			expect(nodeResult(failed).error?.message).toContain('the outcome is unknown');
			sandbox.clearFaults();

			// The window passes; another event takes A's one slot.
			passTime(62 * MINUTE);
			expect(cappedOf((await runNode(capRun([{ userIds: personA }], options))).outputs)).toEqual(
				[],
			);
			const posts = sentBodies(sandbox).length;

			const retried = nodeResult(await retryWorkflow(workflow, failed));
			expect(retried.error).toBeUndefined();
			expect(sentBodies(sandbox)).toHaveLength(posts);
			expect(cappedOf(retried.outputs)).toMatchObject([
				{
					userId: personA,
					earlierTryOutcome: 'unknown',
					note: expect.stringContaining('Get Many'),
				},
			]);
			expect(jsonOf(retried.items)).toMatchObject([
				{ skipped: true, cappedUserIds: [personA], earlierTryOutcome: 'unknown' },
			]);
		});
	});

	test('the window rolls: capped 59 minutes after the first slot, sent again 61 minutes after it', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA] = shared.users;
		await runNode(capRun(eventsFor(personA, 3)));
		expect(sendsTo(personA)).toBe(3);

		passTime(59 * MINUTE);
		const early = await runNode(capRun(eventsFor(personA, 1)));
		expect(cappedOf(early.outputs)).toMatchObject([
			{ userId: personA, notifyAfter: '2026-11-26T11:01:00.000Z' },
		]);

		passTime(2 * MINUTE);
		const later = await runNode(capRun(eventsFor(personA, 2)));
		expect(later.error).toBeUndefined();
		// All three slots of 10:00 expired together: two new ones are taken.
		expect(sendsTo(personA)).toBe(5);
		expect(cappedOf(later.outputs)).toEqual([]);
		// Expired slots went out of the store with that count: A holds the two new ones only.
		const { context } = storeContext(shared.store, { workflowId: 'wf-test', nodeId: 'n-test' });
		const firstTick = Math.floor(Date.parse('2026-11-26T10:00:30Z') / MINUTE);
		const slot = (tick: number, place: number) =>
			JSON.stringify(['capSlot', personA, 1, tick, place]);
		const read = await inStoreTurn(
			context,
			async (turn) =>
				await turn.hasFlags(
					[0, 1, 2, 3].flatMap((place) =>
						[firstTick, firstTick + 61].map((tick) => slot(tick, place)),
					),
				),
		);
		expect(read).toEqual({
			ok: true,
			value: [false, true, false, true, false, false, false, false],
		});
	});

	test('a window of a day keeps times to 24-minute ticks: free at most one tick after the exact end, never before', async () => {
		clockAt('2026-11-26T10:00:30Z');
		const [personA] = shared.users;
		const options = { capPerPerson: 1, capWindowMinutes: 1_440 };
		await runNode(capRun(eventsFor(personA, 1), options));
		const capped = await runNode(capRun(eventsFor(personA, 1), options));
		const notifyAfter = Date.parse(String(cappedOf(capped.outputs)[0].notifyAfter));
		const exactEnd = Date.parse('2026-11-27T10:00:30Z');
		expect(notifyAfter).toBeGreaterThanOrEqual(exactEnd);
		expect(notifyAfter - exactEnd).toBeLessThanOrEqual(24 * MINUTE);

		passTime(notifyAfter - Date.now() + 1_000);
		const next = await runNode(capRun(eventsFor(personA, 1), options));
		expect(cappedOf(next.outputs)).toEqual([]);
		expect(sendsTo(personA)).toBe(2);
	});

	test('without the option, a saved Send keeps one output; with it, n8n gives the node two, "Sends" and "Capped"', async () => {
		const description = new CompanionPush().description;
		const outputsFor = (parameters: IDataObject) => {
			const node: INode = {
				id: 'n-1',
				name: 'Send',
				type: 'companionPush',
				typeVersion: 1,
				position: [0, 0],
				parameters: parameters as INode['parameters'],
			};
			const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
			return NodeHelpers.getNodeOutputs(workflow, node, description);
		};
		expect(outputsFor(sendParameters({ userIds: shared.users[0] }))).toEqual(['main']);
		expect(
			outputsFor(sendParameters({ userIds: shared.users[0], options: { capPerPerson: 3 } })),
		).toEqual([
			{ type: 'main', displayName: 'Sends' },
			{ type: 'main', displayName: 'Capped' },
		]);
		expect(
			outputsFor(sendParameters({ operation: 'getMany', options: { capPerPerson: 3 } })),
		).toEqual(['main']);

		clockAt('2026-11-26T10:00:30Z');
		const plain = await runNode(capRun([{ userIds: shared.users[0] }], {}));
		expect(plain.outputs).toHaveLength(1);
		expect(jsonOf(plain.items)[0].cappedUserIds).toBeUndefined();
		// Nothing of the cap in n8n's store either.
		expect(shared.store.calls).toEqual([]);
	});

	describe('bad input: the error names the field, nothing is sent', () => {
		test.each([
			[
				{ capPerPerson: 0 },
				/^"Cap per Person" must be a whole number of sends from 1 to 100 \(got 0\)/,
			],
			[{ capPerPerson: 2.5 }, /^"Cap per Person" must be a whole number/],
			[{ capPerPerson: 'three' }, /^"Cap per Person" must be a whole number .*\(got three\)/],
			[{ capPerPerson: '' }, /^"Cap per Person" must be a whole number/],
			[
				{ capPerPerson: 3, capWindowMinutes: 0 },
				/^"Cap Window \(Minutes\)" must be a positive number of minutes, at most 1440 \(got 0\)/,
			],
			[{ capPerPerson: 3, capWindowMinutes: -5 }, /^"Cap Window \(Minutes\)" must be a positive/],
			[{ capPerPerson: 3, capWindowMinutes: 'an hour' }, /^"Cap Window \(Minutes\)" must be/],
			[{ capPerPerson: 3, capWindowMinutes: 2_000 }, /^"Cap Window \(Minutes\)" must be/],
		])('%j', async (options, message) => {
			const { outputs, error } = await runNode(capRun([{ userIds: shared.users[0] }], options));
			expect(outputs).toEqual([]);
			expect(error?.message).toMatch(message);
			expect(error?.message).toMatch(/\[item 0\]$/);
			expect(sandbox.requestLog()).toEqual([]);
			expect(shared.store.calls).toEqual([]);
		});

		test('another cap on a later item: the error names the field and both caps, nothing is sent', async () => {
			const run = capRun([{ userIds: shared.users[0] }, { userIds: shared.users[1] }], {
				capPerPerson: '={{ $itemIndex === 0 ? 3 : 5 }}',
			});
			const { error } = await runNode(run);
			expect(error?.message).toBe(
				'"Cap per Person" must be the same on every item (item 0 has 3 per 60 minutes, this one 5 per 60 minutes) [item 1]',
			);
			expect(sandbox.requestLog()).toEqual([]);
			expect(shared.store.calls).toEqual([]);
		});
	});
});

describe('the slots of one person and tick', () => {
	test('100 in one tick are all counted, the 101st refused; 3 given back are taken again, no more', async () => {
		const store = new MemoryProcessedData();
		const { context } = storeContext(store);
		const rule = { maxSends: 100, windowMinutes: 60 };
		const person = [{ userId: 'e533773a0ba45c0000000001' }];
		const granted = (outcome: Awaited<ReturnType<typeof takeSlots>>) =>
			outcome.ok ? outcome.value.filter((decision) => decision.granted).length : -1;

		const first = await takeSlots(
			context,
			rule,
			Array.from({ length: 60 }, () => person[0]),
		);
		expect(granted(first)).toBe(60);
		const second = await takeSlots(
			context,
			rule,
			Array.from({ length: 41 }, () => person[0]),
		);
		expect(granted(second)).toBe(40);
		const tick = first.ok && first.value[0].granted ? first.value[0].tick : -1;
		const back = await giveSlotsBack(
			context,
			rule,
			[0, 1, 2].map(() => ({ ...person[0], tick })),
		);
		expect(back.ok).toBe(true);
		const third = await takeSlots(
			context,
			rule,
			Array.from({ length: 5 }, () => person[0]),
		);
		expect(granted(third)).toBe(3);
	});
});

describe('a count cut short', () => {
	test('n8n stopped in the middle of a count: the places it tested stay taken, and the person counts as capped, never sent over the cap', async () => {
		const store = new MemoryProcessedData();
		const rule = { maxSends: 2, windowMinutes: 60 };
		const person = 'e533773a0ba45c0000000001';
		const first = await takeSlots(storeContext(store).context, rule, [{ userId: person }]);
		expect(first).toEqual({ ok: true, value: [{ granted: true, tick: expect.any(Number) }] });
		// The next count stops before it takes out its test of the person's second place (its 8th
		// write: spans of 64 ticks, of 8, the ticks, the places, each tested then taken out).
		let writes = 0;
		const stopping = storeContext(store, {
			beforeWrite: (scope) => {
				if (scope === 'node' && ++writes === 8) throw new Error('n8n stopped');
			},
		});
		expect((await takeSlots(stopping.context, rule, [{ userId: person }])).ok).toBe(false);

		const after = await takeSlots(storeContext(store).context, rule, [{ userId: person }]);
		expect(after).toEqual({
			ok: true,
			value: [{ granted: false, notifyAfter: expect.any(Number) }],
		});
	});
});
