/**
 * "Exact or unknown": after a lost answer (a 5xx, a reset) the list of sends decides, and only an
 * exact match or a proven absence counts; anything else ends "unknown", never a guess. Each test
 * is a sequence that broke the promise (never notify twice, never drop a send in silence) while
 * the list was read less strictly: a list that shows a send late, ignores paging, leaves out or
 * changes fields, or holds a look-alike of the send (a sibling in flight, another reminder,
 * yesterday's identical message); and a Retry-After date on another clock. Runs go through n8n's
 * engine against the sandbox; who was notified is counted from the sandbox's request log.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { resetProcessState } from '../../devkit/processState.cts';
import { listActiveUserIds } from '../../nodes/CompanionPush/transport';
import {
	ACTIVE_USERS,
	expectEachOnce,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	REFRESH,
	registeredSends,
	SEND,
	SEND_LIST,
	storeFor,
	useSandbox,
	runProbe,
	HOUR,
	MESSAGE,
	runOnce,
	runWithLaterSend,
	sendAsAnotherClient,
	sendRun,
	until,
	useShortTimings,
} from '../harness/index.cts';

describe('exact or unknown: a send whose answer was lost', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let users: string[];

	beforeAll(() => {
		users = sandbox.orgs.primary.usersOfKind('onePhone', 6);
	});
	afterAll(() => resetProcessState());
	beforeEach(() => {
		resetProcessState();
		useShortTimings();
	});

	const oneItem = (fields: IDataObject = {}) => sendRun(sandbox, [{ userId: users[0] }], fields);
	const posts = () => logOf(sandbox, SEND).length;

	describe('1. a send missing from the list at first is not taken as never made', () => {
		// The send shows up 500 ms late: after the first reading, before the second (1.5 s later).
		beforeEach(() => useShortTimings({ lookupSettleMs: 1_500, lookupEvidenceWaitMs: 3_000 }));

		test('registered a moment after the API answered 504: found by the second reading, not sent again', async () => {
			sandbox.addFault({
				endpoint: SEND,
				kind: 'status5xx',
				status: 504,
				afterProcessing: true,
				registerAfterMs: 500,
			});
			const result = await runOnce(oneItem());

			expectEachOnce(sandbox, [users[0]]);
			expect(posts()).toBe(1);
			expect(jsonOf(result.items)[0]).toMatchObject({
				id: registeredSends(sandbox)[0].id,
				recoveredAfter: 'HTTP 504',
			});
		});

		test('a list that shows new sends late (within the settle wait): found, not sent again', async () => {
			sandbox.configure({ listLagMs: 500 });
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
			const result = await runOnce(oneItem());

			expectEachOnce(sandbox, [users[0]]);
			expect(posts()).toBe(1);
			expect(jsonOf(result.items)[0]).toMatchObject({
				id: registeredSends(sandbox)[0].id,
				recoveredAfter: 'ECONNRESET',
			});
		});

		test('a list that ignores skip, whose first page does not reach the first try: "unknown", not sent again', async () => {
			// Pages of 5 (whatever is asked), always the newest: 6 sends of another client, made just
			// before, fill it, and ours is listed a moment late.
			sandbox.configure({ listIgnoresSkip: true, listMaxPageSize: 5 });
			for (let index = 0; index < 6; index++)
				await sendAsAnotherClient(sandbox, [users[5]], { title: `Another client ${index}` });
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', listDelayMs: 1_000 });
			const result = await runOnce(oneItem());

			const [item] = jsonOf(result.items);
			expect(item.error).toBe(
				'Sending the notification: the outcome is unknown (ECONNRESET), so it was not sent again',
			);
			expect(item.errorDescription).toContain(
				'the list of sends showed the same page again (it ignores paging)',
			);
			expect(posts() - 6).toBe(1);
			expect(
				registeredSends(sandbox).filter((send) => send.userIds.includes(users[0])),
			).toHaveLength(1);
		});
	});

	test('new sends listed while the list is read push the pages down: read on, not taken for a list that ignores paging', async () => {
		// Pages of 2; three sends of another client just before; ours never reaches the API.
		sandbox.configure({ listMaxPageSize: 2 });
		for (let index = 0; index < 3; index++)
			await sendAsAnotherClient(sandbox, [users[5]], { title: `Another client ${index}` });
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		// The second page is refused once (429, 1 s); meanwhile two more sends are listed at the top.
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'rateLimit', retryAfterSeconds: 1, skip: 1 });
		const credentials = storeFor(sandbox);
		const running = runOnce(sendRun(sandbox, [{ userId: users[0] }], {}, { credentials }));
		await until(() => logOf(sandbox, SEND_LIST).some((entry) => entry.status === 429));
		for (let index = 3; index < 5; index++)
			await sendAsAnotherClient(sandbox, [users[5]], { title: `Another client ${index}` });
		// A send of this process after the lost answer: once listed, it proves ours absent.
		await runOnce(
			sendRun(sandbox, [{ userId: users[4] }], { title: 'Another event' }, { credentials }),
		);
		const [item] = jsonOf((await running).items);

		const ours = registeredSends(sandbox).filter((send) => send.userIds.includes(users[0]));
		expect(ours).toHaveLength(1);
		expect(item.error).toBeUndefined();
		expect(item.id).toBe(ours[0].id);
	});

	test.each<[string, IDataObject, IDataObject]>([
		['a list whose entries carry no title nor body', { listOmitsFields: ['title', 'body'] }, {}],
		[
			'an API that stores the text trimmed',
			{ storageTrimsText: true },
			{ title: '  Shift change ', body: 'Your shift starts at 9:00.\n' },
		],
		// An API that cuts titles: exact-or-unknown-evidence.test.ts (found once seen cutting ours, else unknown).
	])('2. %s: the lost answer is resolved (found), not sent again', async (_, settings, message) => {
		sandbox.configure(settings);
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		const result = await runOnce(oneItem(message));

		expectEachOnce(sandbox, [users[0]]);
		expect(posts()).toBe(1);
		expect(jsonOf(result.items)[0]).toMatchObject({
			id: registeredSends(sandbox)[0].id,
			recoveredAfter: 'ECONNRESET',
		});
	});

	test("6. the same text to one user per item, two in flight, a list without recipients: a reset item never takes its sibling's send", async () => {
		// Deliveries (which would show the recipients in the detail) stay out of sight.
		sandbox.configure({ listIncludesTargets: false, deliveryMs: 60_000 });
		// A token in hand, so that no renewal orders the two sends.
		const credentials = storeFor(sandbox);
		await runProbe(credentials, async function (this: IExecuteFunctions) {
			await listActiveUserIds(this);
			return [[{ json: {} }]];
		});
		// The first send's answer is held while the second's connection resets before reaching the API.
		sandbox.addFault({ endpoint: SEND, kind: 'delay', delayMs: 500 });
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', skip: 1 });
		const items = [{ userId: users[0] }, { userId: users[1] }];
		// A send of this process made after the lost answer proves the reset one absent once listed.
		const { result } = await runWithLaterSend(
			sandbox,
			sendRun(sandbox, items, { options: { maxParallelRequests: 2 } }, { credentials }),
			users[2],
		);

		expectEachOnce(sandbox, users.slice(0, 3));
		const targetsOf = new Map(registeredSends(sandbox).map((send) => [send.id, send.userIds]));
		expect(jsonOf(result.items).map((item) => targetsOf.get(item.id as string))).toEqual([
			[users[0]],
			[users[1]],
		]);
	});

	test.each<[string, IDataObject]>([
		['', {}],
		[', a list without scheduled times', { listOmitsFields: ['scheduled_at'] }],
	])(
		'7. two reminders with the same text and user at +1 h and +2 h, the second answer lost after registration%s: each scheduled once, each item its own',
		async (_, settings) => {
			sandbox.configure(settings);
			const at = (hours: number) => new Date(Date.now() + hours * HOUR).toISOString();
			const reminder = (hours: number) =>
				sendRun(sandbox, [{ userId: users[0], at: at(hours) }], {
					operation: 'schedule',
					scheduledAt: '={{ $json.at }}',
				});
			const first = await runOnce(reminder(1));
			// The second reminder runs in another n8n process (a queue-mode worker), which never saw the first.
			resetProcessState();
			useShortTimings();
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
			const second = await runOnce(reminder(2));

			const [plusOne, plusTwo] = registeredSends(sandbox);
			expect(registeredSends(sandbox)).toHaveLength(2);
			expect(Date.parse(plusTwo.scheduledAt!) - Date.parse(plusOne.scheduledAt!)).toBeGreaterThan(
				HOUR - 1000,
			);
			expect(jsonOf(first.items)[0].id).toBe(plusOne.id);
			expect(jsonOf(second.items)[0]).toMatchObject({
				id: plusTwo.id,
				status: 'scheduled',
				recoveredAfter: 'ECONNRESET',
			});
		},
	);

	test("8. a list without creation times and an identical send yesterday: today's lost answer is today's send", async () => {
		sandbox.configure({ listOmitsFields: ['created_at'] });
		const yesterday = await sendAsAnotherClient(sandbox, [users[0]], MESSAGE, -23 * HOUR);
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		const result = await runOnce(oneItem());

		const today = logOf(sandbox, SEND)[1].notificationId;
		expect(today).not.toBe(yesterday);
		expect(jsonOf(result.items)[0]).toMatchObject({ id: today, recoveredAfter: 'ECONNRESET' });
		expect(posts()).toBe(2);
	});

	test('an identical send of this process whose outcome stayed unknown is not taken by the next one that loses its answer', async () => {
		const daily = () =>
			sendRun(sandbox, [{ userId: users[0] }], {
				title: 'Daily check-in',
				body: 'How did your shift go today?',
			});
		// Registered, its answer lost, the list unreadable for as long as the lookup waits: unknown,
		// and this process holds no id for it.
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', times: 10_000 });
		const first = jsonOf((await runOnce(daily())).items)[0];
		expect(first.error).toContain('the outcome is unknown');
		sandbox.clearFaults();
		// The next day's message, a moment later (another event): its connection resets before reaching the API.
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		const second = jsonOf((await runOnce(daily())).items)[0];

		const [earlier] = registeredSends(sandbox);
		expect(second.id).not.toBe(earlier.id);
		expect(second.error ?? '').toContain('the outcome is unknown');
	});

	describe("9. Retry-After as an HTTP date, on the API's clock", () => {
		test("the API's clock 10 s behind, 3 s asked: the node waits about 3 s (no burst of retries) and the item is sent", async () => {
			sandbox.configure({ clockOffsetMs: -10_000 });
			sandbox.addFault({
				endpoint: SEND,
				kind: 'rateLimit',
				retryAfterSeconds: 3,
				retryAfterAsDate: true,
				share: 1,
			});
			const running = runOnce(oneItem());
			// Every send is refused until the first refusal is in: a node that does not wait sends again and again.
			await until(() => logOf(sandbox, SEND).length > 0);
			sandbox.clearFaults();
			const result = await running;

			expect(jsonOf(result.items)[0]).toMatchObject({ id: registeredSends(sandbox)[0].id });
			const [refused, sent] = logOf(sandbox, SEND);
			expect(logOf(sandbox, SEND).map((entry) => entry.status)).toEqual([429, 202]);
			// A lower bound (never flaky on a slow machine): the wait asked, less the Date header's rounding.
			expect(sent.time - refused.time).toBeGreaterThanOrEqual(2_500);
		});

		test("the API's clock a minute ahead, 3 s asked: waited, not refused as a wait of over 60 s", async () => {
			sandbox.configure({ clockOffsetMs: 60_000 });
			sandbox.addFault({
				endpoint: SEND,
				kind: 'rateLimit',
				retryAfterSeconds: 3,
				retryAfterAsDate: true,
			});
			const result = await runOnce(oneItem());

			expect(jsonOf(result.items)[0]).toMatchObject({ id: registeredSends(sandbox)[0].id });
			expect(logOf(sandbox, SEND).map((entry) => entry.status)).toEqual([429, 202]);
		});
	});

	test("joined token renewals: the joining call sends as soon as the renewed token is written, not after the renewing call's answer", async () => {
		const credentials = storeFor(sandbox);
		// Whichever request comes first is answered 800 ms late.
		sandbox.addFault({ endpoint: ACTIVE_USERS, kind: 'delay', delayMs: 800 });
		const readActiveUsers = () =>
			runProbe(credentials, async function (this: IExecuteFunctions) {
				await listActiveUserIds(this);
				return [[{ json: { requestsWhenAnswered: logOf(sandbox, ACTIVE_USERS).length } }]];
			});
		const calls = await Promise.all([readActiveUsers(), readActiveUsers()]);

		expect(logOf(sandbox).map((entry) => entry.endpoint)).toEqual([
			REFRESH,
			ACTIVE_USERS,
			ACTIVE_USERS,
		]);
		// Both requests had reached the API when the first answer came back.
		expect(calls.map((call) => call.items[0].json.requestsWhenAnswered)).toEqual([2, 2]);
	});
});
