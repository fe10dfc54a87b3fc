/**
 * Send with "Digest Key", through n8n's engine against the sandbox: events for one person and key
 * within a window become one push, scheduled at the window's end; each later event cancels it and
 * schedules the replacement (cancel first; a send that went out closes its window). The window is
 * kept as a record of the store (store/) in n8n's processed-data store, under its lock, also for two n8n processes at
 * once. Who gets what is counted from the sandbox's request log and its sends' states; this
 * process's clock (n8n's and the sandbox's alike) is moved as each test needs.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	CANCEL,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	passTime,
	registeredSends,
	runNode,
	SEND,
	sendParameters,
	storeFor,
	useSandbox,
	useTwoProcesses,
	type NodeRunOptions,
} from '../harness/index.cts';

const MINUTE = 60_000;

describe('Digest', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	const shared = useTwoProcesses(sandbox);

	const DIGEST = { digestKey: 'order-updates', digestTitle: '{count} order updates' };

	/** One item per event, each for `$json.userIds`, with the digest's options. */
	function digestRun(
		events: Array<{ userIds: string; body?: string }>,
		options: IDataObject = DIGEST,
		type = 'companionPush',
		continueOnFail = false,
	) {
		return {
			type,
			credentials: storeFor(sandbox),
			items: events,
			continueOnFail,
			parameters: sendParameters({
				title: 'Order update',
				body: '={{ $json.body ?? "Order 1042 shipped" }}',
				userIds: '={{ $json.userIds }}',
				options,
			}),
		} satisfies NodeRunOptions;
	}
	const eventFor = (userId: string, body?: string) => ({
		userIds: userId,
		...(body ? { body } : {}),
	});
	/** The sends of a person the sandbox holds, by their state. */
	function sendsOf(userId: string) {
		const ids = new Set(
			registeredSends(sandbox)
				.filter((send) => send.userIds.includes(userId))
				.map((send) => send.id),
		);
		const ofPerson = sandbox.notifications().filter((record) => ids.has(record.id));
		return {
			all: ofPerson,
			canceled: ofPerson.filter((record) => record.status === 'canceled'),
			live: ofPerson.filter((record) => record.status !== 'canceled'),
		};
	}
	const cancelsAnswered = (status: number) =>
		logOf(sandbox, CANCEL).filter((entry) => entry.status === status).length;

	test("12 events in 10 minutes, one execution each, 15-minute window: one push at the window's end carrying 12, 11 canceled; a 13th after it starts a new window", async () => {
		const [person] = shared.users;
		const start = Date.now();
		const outputs: IDataObject[] = [];
		for (let event = 1; event <= 12; event++) {
			const { items, error } = await runNode(
				digestRun([eventFor(person, `Order ${1000 + event} shipped`)]),
			);
			expect(error).toBeUndefined();
			outputs.push(...jsonOf(items));
			passTime(50_000);
		}
		const { all, canceled, live } = sendsOf(person);
		expect(all).toHaveLength(12);
		expect(canceled).toHaveLength(11);
		expect(cancelsAnswered(200)).toBe(11);
		expect(live).toHaveLength(1);
		expect(live[0]).toMatchObject({
			title: '12 order updates',
			body: 'Order 1012 shipped',
			status: 'scheduled',
		});
		// Every event's item names the send carrying it then, with the window's end and count.
		const windowEnd = outputs[0].scheduledAt as string;
		expect(Date.parse(windowEnd) - start).toBeGreaterThanOrEqual(15 * MINUTE);
		expect(Date.parse(windowEnd) - start).toBeLessThan(15 * MINUTE + 5_000);
		expect(outputs.map((item) => item.digestCount)).toEqual([
			1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		]);
		expect(new Set(outputs.map((item) => item.scheduledAt))).toEqual(new Set([windowEnd]));
		expect(outputs[11]).toMatchObject({
			id: live[0].id,
			userId: person,
			title: '12 order updates',
		});
		// Each replacement names the send it canceled: the one the item before it made.
		expect(outputs.slice(1).map((item) => item.replacedSendId)).toEqual(
			outputs.slice(0, 11).map((item) => item.id),
		);
		// The first event alone went out as itself, had nothing come after it.
		expect(all[0]).toMatchObject({ title: 'Order update' });

		// The window's end passes: the push goes out, once.
		passTime(10 * MINUTE);
		expect(sendsOf(person).live.map((record) => record.status)).not.toContain('scheduled');
		const sendsBefore = logOf(sandbox, SEND).length;
		const thirteenth = await runNode(digestRun([eventFor(person, 'Order 1013 shipped')]));
		expect(thirteenth.error).toBeUndefined();
		const item = jsonOf(thirteenth.items)[0];
		expect(item).toMatchObject({ digestCount: 1, title: 'Order update', status: 'scheduled' });
		expect(item.digestNote).toMatch(/already went out.*a new window starts/);
		expect(item.replacedSendId).toBeUndefined();
		expect(Date.parse(item.scheduledAt as string)).toBeGreaterThan(
			Date.parse(windowEnd) + 10 * MINUTE,
		);
		// One cancel tried (409: it went out), one new send; the sent digest is untouched.
		expect(cancelsAnswered(409)).toBe(1);
		expect(logOf(sandbox, SEND).length - sendsBefore).toBe(1);
		expect(sendsOf(person).canceled).toHaveLength(11);
	});

	test('5 events for a person and 1 for another in one execution: one send each, no cancel', async () => {
		const [personA, personB] = shared.users;
		const { items, error } = await runNode(
			digestRun([
				eventFor(personA),
				eventFor(personA),
				eventFor(personB),
				eventFor(personA),
				eventFor(personA),
				eventFor(personA),
			]),
		);
		expect(error).toBeUndefined();
		expect(logOf(sandbox, CANCEL)).toHaveLength(0);
		expect(registeredSends(sandbox).map((send) => [send.title, send.userIds])).toEqual([
			['5 order updates', [personA]],
			['Order update', [personB]],
		]);
		// One item per event, in item order, each naming its person's send.
		const json = jsonOf(items);
		expect(json.map((each) => each.userId)).toEqual([
			personA,
			personA,
			personB,
			personA,
			personA,
			personA,
		]);
		expect(
			new Set(json.filter((each) => each.userId === personA).map((each) => each.id)).size,
		).toBe(1);
	});

	test('two n8n processes sharing the store, 10 events for one person at once: one live send carrying 10, the others canceled', async () => {
		const [person] = shared.users;
		shared.store.roundTripMs = 3;
		const runs = Array.from({ length: 10 }, (_, index) =>
			runNode(
				digestRun(
					[eventFor(person)],
					DIGEST,
					index % 2 === 0 ? 'companionPush' : 'companionPushInAnotherProcess',
				),
			),
		);
		const results = await Promise.all(runs);
		expect(results.map((result) => result.error)).toEqual(
			Array.from({ length: 10 }, () => undefined),
		);
		const { all, live } = sendsOf(person);
		expect(live).toHaveLength(1);
		expect(live[0].title).toBe('10 order updates');
		expect(all.length).toBeLessThanOrEqual(10);
		const counts = results
			.flatMap((result) => jsonOf(result.items))
			.map((item) => item.digestCount);
		expect(Math.max(...(counts as number[]))).toBe(10);
		expect(new Set(counts).size).toBe(counts.length);
	});

	test('a replacement refused (403), and the earlier send refused when made again: the item says the earlier events no longer go out; the next event starts a new window', async () => {
		const [person] = shared.users;
		await runNode(digestRun([eventFor(person)]));
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', times: 2 });
		const refused = await runNode(digestRun([eventFor(person)], DIGEST, 'companionPush', true));
		const item = jsonOf(refused.items)[0];
		expect(item.error).toMatch(/403|permission/i);
		expect(item.errorDescription).toMatch(
			/earlier send .* was canceled, and making it again was refused too .*, so its 1 earlier event\(s\) will not go out/,
		);
		expect(logOf(sandbox, SEND)).toHaveLength(3);
		expect(sendsOf(person).live).toHaveLength(0);

		const cancelsBefore = logOf(sandbox, CANCEL).length;
		const next = await runNode(digestRun([eventFor(person)]));
		expect(jsonOf(next.items)[0]).toMatchObject({ digestCount: 1 });
		expect(logOf(sandbox, CANCEL).length).toBe(cancelsBefore);
		expect(sendsOf(person).live).toHaveLength(1);
	});

	test('a replacement whose answer is lost and cannot be proven (unknown): the next event starts a new window and never cancels or resends blindly', async () => {
		const [person] = shared.users;
		await runNode(digestRun([eventFor(person)]));
		// Registered, then the connection reset; the list lags beyond the lookup's wait (for every
		// send: a list probe listed before it would prove it absent).
		sandbox.configure({ listLagMs: 60 * MINUTE });
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', times: 1 });
		const lost = await runNode(digestRun([eventFor(person)], DIGEST, 'companionPush', true));
		const item = jsonOf(lost.items)[0];
		expect(item.error).toMatch(/unknown/);
		expect(item.errorDescription).toMatch(/earlier event\(s\) go out only if this send was made/);
		const registered = registeredSends(sandbox).length;
		expect(registered).toBe(2);

		const next = await runNode(digestRun([eventFor(person)]));
		expect(next.error).toBeUndefined();
		const json = jsonOf(next.items)[0];
		expect(json).toMatchObject({ digestCount: 1 });
		expect(json.digestNote).toMatch(/stopped before it wrote its replacement/);
		// The two sends of the person still scheduled: the lost replacement (carrying the first two
		// events) and the new window's: no event is in two pushes.
		expect(sendsOf(person).live.map((record) => record.title)).toEqual([
			'2 order updates',
			'Order update',
		]);
	});

	test('a replacement accepted whose answer cannot be read (its id unknown): the item says the earlier events go out with it, and the next event starts a new window', async () => {
		const [person] = shared.users;
		await runNode(digestRun([eventFor(person)]));
		// A 202 whose body is cut; the list shows the send only an hour later, so its id stays unknown.
		sandbox.addFault({ endpoint: SEND, kind: 'malformedJson', listDelayMs: 60 * MINUTE });
		const accepted = await runNode(digestRun([eventFor(person)], DIGEST, 'companionPush', true));
		const item = jsonOf(accepted.items)[0];
		expect(item.error).toMatch(/accepted, not re-sent/);
		expect(item.errorDescription).toMatch(
			/its 1 earlier event\(s\) go out with this send \(the API accepted it\)/,
		);
		expect(registeredSends(sandbox)).toHaveLength(2);

		const next = await runNode(digestRun([eventFor(person)]));
		expect(jsonOf(next.items)[0]).toMatchObject({ digestCount: 1 });
		// Never a third send carrying the first two events: the accepted one is live, and the new window's.
		expect(sendsOf(person).live.map((record) => record.title)).toEqual([
			'2 order updates',
			'Order update',
		]);
	});

	test('Retry On Fail after the second event of a run was refused: the first is not digested again, the second is', async () => {
		const [personA, personB] = shared.users;
		await runNode(digestRun([eventFor(personA)]));
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 1, times: 1 });
		const { items, error } = await runNode({
			...digestRun([eventFor(personA), eventFor(personB)], { ...DIGEST, maxParallelRequests: 1 }),
			settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 },
		});
		expect(error).toBeUndefined();
		const json = jsonOf(items);
		expect(json[0]).toMatchObject({ userId: personA, digestCount: 2, digestedByEarlierTry: true });
		expect(json[1]).toMatchObject({ userId: personB, digestCount: 1 });
		expect(json[1].digestedByEarlierTry).toBeUndefined();
		// A's window was replaced once (count 2), not twice (count 3).
		expect(sendsOf(personA).live.map((record) => record.title)).toEqual(['2 order updates']);
		expect(logOf(sandbox, CANCEL)).toHaveLength(1);
	});

	test('with an Idempotency Key: an event delivered again, also to another process at once, is skipped; one refused is digested when it comes again', async () => {
		const [personA, personB] = shared.users;
		const keyed = { ...DIGEST, idempotencyKey: '={{ $json.orderEvent }}' };
		const event = (userIds: string, orderEvent: string) => ({ userIds, orderEvent });
		const first = await runNode(digestRun([event(personA, 'order-1:shipped')], keyed));
		expect(jsonOf(first.items)[0]).toMatchObject({ digestCount: 1 });
		// Delivered again twice at once, in two processes, beside a new event.
		const [here, there] = await Promise.all([
			runNode(
				digestRun([event(personA, 'order-1:shipped'), event(personA, 'order-2:shipped')], keyed),
			),
			runNode(
				digestRun([event(personA, 'order-1:shipped')], keyed, 'companionPushInAnotherProcess'),
			),
		]);
		const json = [...jsonOf(here.items), ...jsonOf(there.items)];
		expect(json.filter((item) => item.skipped === true)).toHaveLength(2);
		expect(json.find((item) => item.skipped === true)).toMatchObject({
			idempotencyKey: 'order-1:shipped',
			skipReason: expect.stringMatching(/Idempotency Key already used/),
		});
		expect(sendsOf(personA).live.map((record) => record.title)).toEqual(['2 order updates']);

		// A refused send puts the event nowhere: its key stays free.
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', times: 1 });
		const refused = await runNode(
			digestRun([event(personB, 'order-3:shipped')], keyed, 'companionPush', true),
		);
		expect(jsonOf(refused.items)[0].error).toMatch(/403|permission/i);
		const again = await runNode(digestRun([event(personB, 'order-3:shipped')], keyed));
		expect(jsonOf(again.items)[0]).toMatchObject({ digestCount: 1, userId: personB });
		expect(sendsOf(personB).live).toHaveLength(1);
	});

	test('an event a version before the store kept records put in a digest (its key kept as one value), delivered again after the upgrade: skipped, not sent again', async () => {
		const [person] = shared.users;
		const keyed = { ...DIGEST, idempotencyKey: '={{ $json.orderEvent }}' };
		await shared.store.checkProcessedAndRecord(
			[JSON.stringify(['digestEvent', 'order-9:shipped', person, 'order-updates'])],
			'node',
			{ workflow: { id: 'wf-test', active: true }, node: { id: 'n-test' } as never },
			{ mode: 'entries' },
		);
		const items = [{ userIds: person, orderEvent: 'order-9:shipped' }];
		const again = await runNode({ ...digestRun([], keyed), items });
		expect(jsonOf(again.items)[0]).toMatchObject({
			skipped: true,
			skipReason: expect.stringMatching(/Idempotency Key already used/),
		});
		expect(sendsOf(person).all).toHaveLength(0);
	});

	test("the API's clock 20 minutes ahead of n8n's, a 15-minute window: each event goes out at once on its own, none twice", async () => {
		const [person] = shared.users;
		sandbox.configure({ clockOffsetMs: 20 * MINUTE });
		const outputs = [];
		for (let event = 1; event <= 3; event++) {
			const { items, error } = await runNode(digestRun([eventFor(person, `Order ${event}`)]));
			expect(error).toBeUndefined();
			outputs.push(...jsonOf(items));
		}
		expect(outputs.map((item) => item.digestCount)).toEqual([1, 1, 1]);
		expect(outputs.slice(1).map((item) => item.digestNote)).toEqual([
			expect.stringMatching(/already went out/),
			expect.stringMatching(/already went out/),
		]);
		const { all, canceled } = sendsOf(person);
		expect(all.map((record) => record.body)).toEqual(['Order 1', 'Order 2', 'Order 3']);
		expect(canceled).toEqual([]);
	});

	test('bad input sends nothing: Digest Key with Cap per Person, an empty key, a window of 0', async () => {
		const [person] = shared.users;
		const cases: Array<[IDataObject, RegExp]> = [
			[{ ...DIGEST, capPerPerson: 3 }, /"Digest Key" cannot go with Cap per Person/],
			[{ digestKey: '  ' }, /"Digest Key" is empty/],
			[
				{ ...DIGEST, digestWindowMinutes: 0 },
				/"Digest Window \(Minutes\)" must be a number of minutes from 1 to 1440/,
			],
			[
				{ ...DIGEST, waitForFinalStatus: true },
				/"Digest Key" cannot go with Wait for Final Status/,
			],
		];
		for (const [options, message] of cases) {
			const { error } = await runNode(digestRun([eventFor(person)], options));
			expect(error?.message).toMatch(message);
		}
		expect(
			sandbox.requestLog().filter((entry) => entry.endpoint === SEND || entry.endpoint === CANCEL),
		).toEqual([]);
	});
});
