/**
 * "Exact or unknown", decided from evidence: sequences that broke the promise (never notify twice,
 * never carry another send's id, never drop a send in silence) while a loose rule stood where the
 * API's own evidence should decide: a past schedule the API shows as null, a prefix of our text
 * taken for our text, 24 hours of list standing for a key kept longer, an unreadable 202 that a
 * later try could "prove" absent. Runs go through n8n's engine against the sandbox; who was
 * notified is counted from the sandbox's request log.
 */
import { resetProcessState } from '../../devkit/processState.cts';
import {
	expectEachOnce,
	HOUR,
	jsonOf,
	keptAsUsed,
	keyedRun,
	logOf,
	MESSAGE,
	nodeResult,
	nodeWorkflow,
	registeredSends,
	runOnce,
	runWithLaterSend,
	SEND_LIST,
	count,
	until,
	runWorkflow,
	SEND,
	seedSends,
	sendAsAnotherClient,
	sendRun,
	useKeyedRuns,
	useShortTimings,
} from '../harness/index.cts';
import type { MemoryProcessedData, NodeRunOptions } from '../harness/index.cts';

const RETRY_ON_FAIL = { retryOnFail: true, maxTries: 3, waitBetweenTries: 0 };

describe('exact or unknown, decided from evidence', () => {
	const keyedRuns = useKeyedRuns();
	const { sandbox } = keyedRuns;
	let users: string[];
	let store: MemoryProcessedData;
	beforeAll(() => ({ users, store } = keyedRuns));

	const posts = () => logOf(sandbox, SEND).length;
	/** The sends registered for a user, in order. */
	const sendsTo = (userId: string) =>
		registeredSends(sandbox).filter((send) => send.userIds.includes(userId));
	const withRetryOnFail = (run: NodeRunOptions): NodeRunOptions => ({
		...run,
		settings: RETRY_ON_FAIL,
	});

	describe('5. an unreadable 202, then Retry On Fail: accepted, never sent again', () => {
		// The body of the 202 is cut, and the list shows sends only a minute later (after the test).
		beforeEach(() => {
			sandbox.configure({ listLagMs: 60_000 });
			sandbox.addFault({ endpoint: SEND, kind: 'malformedJson' });
		});

		/** One send with Retry On Fail: sent once, every try saying it was accepted; its item. */
		async function acceptedOnce() {
			const result = nodeResult(
				await runWorkflow(nodeWorkflow(withRetryOnFail(sendRun(sandbox, [{ userId: users[0] }])))),
			);
			expectEachOnce(sandbox, [users[0]]);
			expect(posts()).toBe(1);
			const [item] = jsonOf(result.items);
			expect(item.error).toBe(
				'Sending the notification: an earlier try of this node sent it (accepted, not re-sent), but its id could not be read',
			);
			return item;
		}

		test('without a key: every try says it was accepted and how to find it, and nothing is sent again', async () => {
			const item = await acceptedOnce();
			expect(item.errorDescription).toContain(
				'Check the list of sends (Notification > Get Many) for a send titled "Shift change" to 1 recipient(s) created since',
			);
			// Why the list gave no id, in the lookup's words: it does not list the send yet.
			expect(item.errorDescription).toContain(
				'the list of sends does not give its id: nothing in the list of sends looks like it, but nothing shows the list is up to date',
			);
		});

		test('the list of sends refused (403) to every try: the error says the list could not be read, and nothing is sent again', async () => {
			sandbox.addFault({ endpoint: SEND_LIST, kind: 'status4xx', status: 403, times: 1_000 });
			const item = await acceptedOnce();
			expect(item.errorDescription).toContain(
				'the list of sends does not give its id: the list of sends could not be read (',
			);
			expect(item.errorDescription).toContain('403');
		});

		test('with an Idempotency Key: the key counts as used, so the event delivered again in another process is skipped', async () => {
			const run = keyedRun(sandbox, [{ userId: users[0], key: 'order-5:paid' }]);
			const first = jsonOf(
				nodeResult(await runWorkflow(nodeWorkflow(withRetryOnFail(run)))).items,
			)[0];
			expect(first.error).toContain('accepted, not re-sent');
			expect(keptAsUsed(store, 'order-5:paid')).toBe(true);
			resetProcessState(); // another n8n process: only n8n's store and the list remember
			useShortTimings();
			const again = jsonOf((await runOnce(run)).items)[0];

			expectEachOnce(sandbox, [users[0]]);
			expect(posts()).toBe(1);
			expect(again).toMatchObject({ skipped: true, idempotencyKey: 'order-5:paid' });
		});

		test('once the list shows it, a later try takes its id from there', async () => {
			sandbox.clearFaults();
			sandbox.addFault({ endpoint: SEND, kind: 'malformedJson', listDelayMs: 1_500 });
			// The first try looks it up for 600 ms; the retry waits 2 s (n8n's wait between tries).
			useShortTimings({ lookupEvidenceWaitMs: 600 });
			const run = {
				...sendRun(sandbox, [{ userId: users[0] }]),
				settings: { ...RETRY_ON_FAIL, waitBetweenTries: 2_000 },
			};
			const [item] = jsonOf(nodeResult(await runWorkflow(nodeWorkflow(run))).items);

			expectEachOnce(sandbox, [users[0]]);
			expect(posts()).toBe(1);
			expect(item).toMatchObject({ id: registeredSends(sandbox)[0].id, sentByEarlierTry: true });
		});
	});

	describe('1. a schedule that is past when the API registers it is a send now', () => {
		test.each<[string, 'null' | 'asSent']>([
			['shown as null', 'null'],
			['shown as sent', 'asSent'],
		])(
			'a Schedule 1.5 s ahead, reset before it reached the API, then registered after its time and reset again (%s): scheduled once, found',
			async (_, shownAs) => {
				sandbox.configure({ pastScheduledAtShownAs: shownAs });
				useShortTimings({ lookupSettleMs: 2_000, lookupEvidenceWaitMs: 4_000 });
				sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
				const at = new Date(Date.now() + 1_500).toISOString();
				const run = sendRun(sandbox, [{ userId: users[0] }], {
					operation: 'schedule',
					scheduledAt: at,
				});
				const running = runOnce(run);
				// Absence is proven once a send this process makes after the scheduled time is listed, so
				// the retry reaches the API after that time.
				await until(() => count(sandbox, SEND_LIST) > 0 && Date.now() > Date.parse(at));
				await runOnce(
					sendRun(
						sandbox,
						[{ userId: users[5] }],
						{ title: 'Another event' },
						{ credentials: run.credentials },
					),
				);
				// The retry, once the later send is listed (two readings on), is registered and reset.
				sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
				const [item] = jsonOf((await running).items);

				expectEachOnce(sandbox, [users[0], users[5]]);
				expect(item).toMatchObject({
					id: sendsTo(users[0])[0].id,
					recoveredAfter: 'ECONNRESET',
				});
			},
		);

		test.each<[string, 'null' | 'asSent']>([
			['shown as null', 'null'],
			['shown as sent', 'asSent'],
		])(
			"the API's clock 60 s ahead, a Schedule 30 s ahead (past on the API's clock), its answer lost (%s): sent once, found",
			async (_, shownAs) => {
				sandbox.configure({ clockOffsetMs: 60_000, pastScheduledAtShownAs: shownAs });
				sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
				const at = new Date(Date.now() + 30_000).toISOString();
				const [item] = jsonOf(
					(
						await runOnce(
							sendRun(sandbox, [{ userId: users[0] }], { operation: 'schedule', scheduledAt: at }),
						)
					).items,
				);

				expectEachOnce(sandbox, [users[0]]);
				expect(item).toMatchObject({
					id: registeredSends(sandbox)[0].id,
					recoveredAfter: 'ECONNRESET',
				});
			},
		);

		test('an identical send made at once by another client is not a send scheduled for later: ours, reset before reaching the API, is scheduled', async () => {
			const now = await sendAsAnotherClient(sandbox, [users[0]], MESSAGE);
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			const at = new Date(Date.now() + HOUR).toISOString();
			// A send of this process made meanwhile proves ours absent once listed.
			const { result } = await runWithLaterSend(
				sandbox,
				sendRun(sandbox, [{ userId: users[0] }], { operation: 'schedule', scheduledAt: at }),
				users[5],
			);
			const [item] = jsonOf(result.items);

			const [, ours] = sendsTo(users[0]);
			expect(item).toMatchObject({ id: ours.id, status: 'scheduled' });
			expect(item.id).not.toBe(now);
		});
	});

	describe('6. a prefix of our text is not our text without evidence that this API cuts', () => {
		const ann = { title: 'New message from Ann', body: 'Open the app to read it.' };
		const anna = { title: 'New message from Anna', body: 'Open the app to read it.' };

		test('another client\'s "…from Ann" a moment before our "…from Anna", ours reset before reaching the API: never taken for ours', async () => {
			const theirs = await sendAsAnotherClient(sandbox, [users[0]], ann);
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }], anna))).items);

			expect(item.id).not.toBe(theirs);
			// Nothing tells whether this API cuts titles: "Ann" may be "Anna" cut, so it is not sent.
			expect(item.error).toBe(
				'Sending the notification: the outcome is unknown (ECONNRESET), so it was not sent again',
			);
			expect(item.errorDescription).toContain(
				'the list holds a send that could be it, but only with a shorter title',
			);
			expect(sendsTo(users[0]).map((send) => send.id)).toEqual([theirs]);
		});

		test('the same, after the list showed a send of ours with a title as long kept whole: still unknown (an API may lower its limit), nothing sent twice, theirs never taken', async () => {
			// An earlier send of ours (to another user): listed with its whole title, 21 characters.
			await runOnce(sendRun(sandbox, [{ userId: users[1] }], anna));
			const theirs = await sendAsAnotherClient(sandbox, [users[0]], ann);
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			// A send of this process made meanwhile would prove ours absent once listed, were "Ann"
			// proven another text; a limit lowered since would make it ours cut, so nothing tells.
			const { result } = await runWithLaterSend(
				sandbox,
				sendRun(sandbox, [{ userId: users[0] }], anna),
				users[5],
			);
			const [item] = jsonOf(result.items);

			expect(item.id).not.toBe(theirs);
			expect(item.error).toBe(
				'Sending the notification: the outcome is unknown (ECONNRESET), so it was not sent again',
			);
			expect(sendsTo(users[0]).map((send) => send.id)).toEqual([theirs]);
		});

		test('an API that cuts titles, seen cutting a send of ours the same way: the lost answer is found, not sent again', async () => {
			sandbox.configure({ storedTitleMaxLength: 20 });
			const long = { title: 'Shift change for the night team of Saturday' };
			await runOnce(sendRun(sandbox, [{ userId: users[1] }], long));
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }], long))).items);

			expectEachOnce(sandbox, users.slice(0, 2));
			expect(item).toMatchObject({ id: sendsTo(users[0])[0].id, recoveredAfter: 'ECONNRESET' });
		});

		test('an API that cuts titles, never seen cutting: the lost answer is "unknown", not sent again', async () => {
			sandbox.configure({ storedTitleMaxLength: 20 });
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
			const [item] = jsonOf(
				(
					await runOnce(
						sendRun(sandbox, [{ userId: users[0] }], {
							title: 'Shift change for the night team of Saturday',
						}),
					)
				).items,
			);

			expectEachOnce(sandbox, [users[0]]);
			expect(item.error).toContain('the outcome is unknown');
			expect(item.errorDescription).toContain('only with a shorter title');
		});
	});

	describe("8. n8n's store fails: the list decides only as far as it was read", () => {
		test('an event sent 25 h ago whose key is still kept, delivered again while the store fails: "unknown", not sent again', async () => {
			const event = keyedRun(sandbox, [{ userId: users[0], key: 'order-8:shipped' }]);
			sandbox.configure({ clockOffsetMs: -25 * HOUR });
			const first = jsonOf((await runOnce(event)).items)[0];
			sandbox.configure({ clockOffsetMs: 0 });
			expect(first.id).toBe(registeredSends(sandbox)[0].id);
			resetProcessState(); // delivered again to another n8n process: only n8n's store and the list remember
			useShortTimings();
			store.failing = 'connection to the database lost';
			const again = jsonOf((await runOnce(event)).items)[0];

			expectEachOnce(sandbox, [users[0]]);
			expect(again.error).toContain('the outcome is unknown');
			expect(again.errorDescription).toContain(
				`the list holds a send exactly like it (${first.id})`,
			);
		});

		test('the store fails and the list is longer than the node reads: "unknown", with how to check, not sent', async () => {
			// Pages of one send; more old sends than the node reads pages, none like ours.
			sandbox.configure({ listMaxPageSize: 1, clockOffsetMs: -25 * HOUR });
			await seedSends(sandbox, 31, { title: 'Weekly digest' });
			sandbox.configure({ clockOffsetMs: 0 });
			store.failing = 'connection to the database lost';
			const [item] = jsonOf(
				(await runOnce(keyedRun(sandbox, [{ userId: users[0], key: 'order-8:new' }]))).items,
			);

			expect(posts()).toBe(31);
			expect(item.error).toContain('the outcome is unknown');
			expect(item.errorDescription).toContain('the list of sends could not be read to its end');
			expect(item.errorDescription).toContain('Check the list of sends (Notification > Get Many)');
		});

		test('the store fails and the whole list was read with nothing like the send: sent once', async () => {
			sandbox.configure({ clockOffsetMs: -25 * HOUR });
			await seedSends(sandbox, 3, { title: 'Weekly digest' });
			sandbox.configure({ clockOffsetMs: 0 });
			store.failing = 'connection to the database lost';
			// A send of this process made meanwhile proves the list up to date once listed.
			const { result } = await runWithLaterSend(
				sandbox,
				keyedRun(sandbox, [{ userId: users[0], key: 'order-8:new' }]),
				users[5],
			);
			const [item] = jsonOf(result.items);

			expect(item.id).toBe(sendsTo(users[0]).at(-1)?.id);
			expect(posts()).toBe(5);
		});
	});

	describe('a run that stops: every send that may have gone out is named with why and how to check', () => {
		test('two sends lost at once, the node stopping on the first: the second is named with its reason, and neither is sent again', async () => {
			// Both answers lost before the API registered anything, with nothing listed after them (a list
			// a minute late: their list probe is not listed in time): each lookup ends "unknown". Without
			// Continue On Fail, only the stopping error tells of item 1.
			sandbox.configure({ listLagMs: 60_000 });
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 2 });
			const result = await runOnce(
				sendRun(
					sandbox,
					[{ userId: users[0] }, { userId: users[1] }],
					{ options: { maxParallelRequests: 2 } },
					{ continueOnFail: false },
				),
			);

			expect(result.error?.message).toMatch(/outcome is unknown/);
			const alsoFailed = /Also failed: item 1 \((.*)\)\.$/s.exec(result.error?.description ?? '');
			expect(alsoFailed?.[1]).toMatch(
				/^Sending the notification: the outcome is unknown \(.+\), so it was not sent again — What the API showed cannot prove whether it was registered: .*nothing shows the list is up to date.*Check the list of sends \(Notification > Get Many\) for a send titled "Shift change" to 1 recipient\(s\)/s,
			);
			expect(posts()).toBe(2);
		});
	});
});
