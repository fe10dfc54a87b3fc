/**
 * A lost answer in a quiet organization: nothing shows the list of sends up to date past the loss,
 * so the lookup makes the evidence, a list probe (transport/safeSend/probe.ts): a send to nobody,
 * scheduled a year ahead and canceled at once, whose listing proves the list current. A lone 500
 * and an outage on a few items end in one send each, not in "unknown"; a send the 500 registered
 * is found, never made twice; probes never show in Get Many or the trigger. Runs go through n8n's
 * engine against the sandbox; who was notified, and what the probes were, is read from the
 * sandbox's request log.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	DEFAULT_TIMINGS,
	resetProcessState,
	useTimings,
	useWait,
} from '../../devkit/processState.cts';
import { forgetProbes, PROBE_TITLE } from '../../nodes/CompanionPush/transport/safeSend/probe';
import {
	CANCEL,
	detail,
	fetchTestEvent,
	expectEachOnce,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	probeRequests,
	registeredSends,
	runOnce,
	SEND,
	sendRun,
	TestClock,
	tokenFor,
	useSandbox,
	useShortTimings,
	useTriggerFixtures,
} from '../harness/index.cts';
import type { NodeRunOptions } from '../harness/index.cts';
import type { LoggedRequest } from '../../sandbox/index.cts';

const SETTLE_MS = 600;
const YEAR_MS = 365 * 24 * 60 * 60_000;
/** This process, as the test's clock names its waits. */
const HERE = 'here';
const RETRY_ON_FAIL = { retryOnFail: true, maxTries: 3, waitBetweenTries: 0 };

/** The body of a logged request. */
const bodyOf = (entry: LoggedRequest) => entry.body as IDataObject;

describe('a lost answer in a quiet organization: the lookup makes its evidence', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let users: string[];

	beforeAll(() => {
		users = sandbox.orgs.primary.usersOfKind('onePhone', 6);
	});
	afterAll(() => resetProcessState());
	beforeEach(() => {
		resetProcessState();
		forgetProbes();
		useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 2_000 });
	});

	/** Every probe sent went to one probe recipient, a year ahead with an explicit offset, and was
	 * canceled (its cancel answered 200, and its detail says canceled). */
	async function expectProbesCanceled(): Promise<LoggedRequest[]> {
		const probes = probeRequests(sandbox, SEND).filter((entry) => entry.status === 202);
		const token = await tokenFor(sandbox);
		for (const probe of probes) {
			const body = bodyOf(probe);
			expect(body.target_user_ids).toEqual([
				expect.stringMatching(/^companion-push-list-probe-[0-9a-f]{16}$/),
			]);
			expect(String(body.scheduled_at)).toMatch(/(Z|[+-]\d\d:\d\d)$/);
			expect(Date.parse(String(body.scheduled_at)) - probe.time).toBeGreaterThan(YEAR_MS - 60_000);
			const { notification, deliveries } = await detail(sandbox, token, probe.notificationId!);
			expect(notification.status).toBe('canceled');
			expect(deliveries).toEqual([]);
		}
		const cancels = probeRequests(sandbox, CANCEL);
		expect(cancels.map((entry) => entry.status)).toEqual(probes.map(() => 200));
		return probes;
	}

	describe('the default waits (a 10 s settle wait), on a clock the test moves', () => {
		beforeEach(() => {
			resetProcessState();
			useTimings(DEFAULT_TIMINGS);
		});
		afterEach(() => jest.useRealTimers()); // after the clock moved Date

		/** Runs `run`, moving the clock to the package's next wait each time it waits. */
		async function runOnTheClock(run: NodeRunOptions) {
			const clock = new TestClock();
			clock.drive({ useWait }, HERE);
			const result = runOnce(run);
			await clock.advanceWhileWaiting(result, HERE);
			return await result;
		}

		test('(a) one item, a lone 500 that registered nothing, a list that shows sends at once: one send, the item succeeds, one probe to nobody, canceled', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500 });
			const result = await runOnTheClock(sendRun(sandbox, [{ userId: users[0] }]));

			expectEachOnce(sandbox, [users[0]]);
			expect(logOf(sandbox, SEND).filter((entry) => entry.status === 202)).toHaveLength(1);
			const [item] = jsonOf(result.items);
			expect(item.error).toBeUndefined();
			expect(item.id).toBe(registeredSends(sandbox)[0].id);
			const [probe] = await expectProbesCanceled();
			expect(probeRequests(sandbox, SEND)).toHaveLength(1);
			// After the settle wait, before the send it proved absent.
			const [lost, sent] = logOf(sandbox, SEND);
			expect(probe.time - lost.time).toBeGreaterThanOrEqual(DEFAULT_TIMINGS.lookupSettleMs);
			expect(sent.time).toBeGreaterThan(probe.time);
		});

		test('(b) Retry On Fail, five items at once, the API answering 500 to items 3 to 5: each person one send, every item succeeds, one probe serves the three', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500, skip: 2, times: 3 });
			const people = users.slice(0, 5);
			const result = await runOnTheClock({
				...sendRun(
					sandbox,
					people.map((userId) => ({ userId })),
					{ options: { maxParallelRequests: 5 } },
					{ continueOnFail: false },
				),
				settings: RETRY_ON_FAIL,
			});

			expect(result.error).toBeUndefined();
			expectEachOnce(sandbox, people);
			expect(logOf(sandbox, SEND).filter((entry) => entry.status === 202)).toHaveLength(5);
			const items = jsonOf(result.items);
			expect(items.map((item) => item.error)).toEqual(people.map(() => undefined));
			expect(logOf(sandbox, SEND).filter((entry) => entry.status === 500)).toHaveLength(3);
			await expectProbesCanceled();
			expect(probeRequests(sandbox, SEND)).toHaveLength(1);
		});
	});

	test('(c) a 500 that registered the send: found, never sent again, no probe needed', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500, afterProcessing: true });
		const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

		expectEachOnce(sandbox, [users[0]]);
		expect(item).toMatchObject({ id: registeredSends(sandbox)[0].id, recoveredAfter: 'HTTP 500' });
		expect(probeRequests(sandbox)).toEqual([]);
	});

	test('(c) a 500 that registered the send half a settle wait late: the probe comes after the settle wait, so the send is found, never sent again', async () => {
		sandbox.addFault({
			endpoint: SEND,
			kind: 'status5xx',
			status: 500,
			afterProcessing: true,
			registerAfterMs: SETTLE_MS / 2,
		});
		const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

		expectEachOnce(sandbox, [users[0]]);
		expect(item).toMatchObject({ id: registeredSends(sandbox)[0].id, recoveredAfter: 'HTTP 500' });
		// Found during the settle wait: no probe was needed.
		expect(probeRequests(sandbox)).toEqual([]);
	});

	describe('(d) a list that shows every send 1 s late (more than the settle wait)', () => {
		const LAG_MS = 1_000;
		beforeEach(() => {
			sandbox.configure({ listLagMs: LAG_MS });
			useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 6_000 });
		});

		test('the lost send never registered: the decision waits for the probe to be listed, then one send', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500 });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

			expectEachOnce(sandbox, [users[0]]);
			expect(item.error).toBeUndefined();
			const [probe] = await expectProbesCanceled();
			const sent = logOf(sandbox, SEND).find((entry) => entry.status === 202)!;
			expect(sent.time - probe.time).toBeGreaterThanOrEqual(LAG_MS);
		});

		test('the lost send registered (its answer reset): found once the list shows it, never sent again', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

			expectEachOnce(sandbox, [users[0]]);
			expect(item).toMatchObject({
				id: registeredSends(sandbox)[0].id,
				recoveredAfter: 'ECONNRESET',
			});
		});

		test('a list 30 s late (beyond the wait): the probe is not listed in time, so "unknown", nothing sent again', async () => {
			sandbox.configure({ listLagMs: 30_000 });
			useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 2_000 });
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500 });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

			expect(registeredSends(sandbox)).toEqual([]);
			expect(item.error).toBe(
				'Sending the notification: the outcome is unknown (HTTP 500), so it was not sent again',
			);
			expect(item.errorDescription).toContain(
				'the sends this process made after it were not listed yet',
			);
			expect(probeRequests(sandbox, SEND)).toHaveLength(1);
		});
	});

	describe("a probe's own answer lost", () => {
		test('the first probe answered 500: never sent again at once nor looked up; a second one a settle wait later proves the send absent', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500, times: 2 });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

			expectEachOnce(sandbox, [users[0]]);
			expect(item.error).toBeUndefined();
			const probes = probeRequests(sandbox, SEND);
			expect(probes.map((entry) => entry.status)).toEqual([500, 202]);
			expect(probes[1].time - probes[0].time).toBeGreaterThanOrEqual(SETTLE_MS);
			await expectProbesCanceled();
		});

		test('every probe answered 500: at most 3, a settle wait apart, then "unknown" and nothing sent again', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500, times: 1_000 });
			useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 4 * SETTLE_MS * 2 });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

			expect(registeredSends(sandbox)).toEqual([]);
			expect(logOf(sandbox, SEND)).toHaveLength(1);
			expect(item.error).toBe(
				'Sending the notification: the outcome is unknown (HTTP 500), so it was not sent again',
			);
			const probes = probeRequests(sandbox, SEND);
			expect(probes).toHaveLength(3);
			for (let index = 1; index < probes.length; index++)
				expect(probes[index].time - probes[index - 1].time).toBeGreaterThanOrEqual(SETTLE_MS);
		});
	});

	test('an API that refuses sends to nobody (422): the probe is never tried again at once, and the lookup ends "unknown" as without probes, nothing sent again', async () => {
		sandbox.configure({ sendWithoutOrganizationUser: 'reject' });
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500 });
		const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

		expect(registeredSends(sandbox)).toEqual([]);
		expect(item.error).toBe(
			'Sending the notification: the outcome is unknown (HTTP 500), so it was not sent again',
		);
		expect(item.errorDescription).toContain(
			'nothing shows the list is up to date: no send of this process made after it was listed',
		);
		const probes = probeRequests(sandbox, SEND);
		expect(probes.map((entry) => entry.status)).toEqual(probes.map(() => 422));
		expect(probes.length).toBeGreaterThanOrEqual(1);
		expect(probes.length).toBeLessThanOrEqual(3);
		for (let index = 1; index < probes.length; index++)
			expect(probes[index].time - probes[index - 1].time).toBeGreaterThanOrEqual(SETTLE_MS);
	});

	describe('(e) probes never show', () => {
		test('Get Many leaves the probe out', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500 });
			await runOnce(sendRun(sandbox, [{ userId: users[0] }]));
			expect(probeRequests(sandbox, SEND)).toHaveLength(1);

			const listed = jsonOf(
				(
					await runOnce({
						...sendRun(sandbox, [{}]),
						parameters: { resource: 'notification', operation: 'getMany', returnAll: true },
					})
				).items,
			);
			expect(listed.map((send) => send.id)).toEqual([registeredSends(sandbox)[0].id]);
		});

		test('Get Report of the send and of the probe (its id given): the report counts the send only', async () => {
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500 });
			await runOnce(sendRun(sandbox, [{ userId: users[0] }]));
			const [probe] = probeRequests(sandbox, SEND);
			const sent = registeredSends(sandbox)[0].id;

			const [report] = jsonOf(
				(
					await runOnce({
						...sendRun(sandbox, [{}]),
						parameters: {
							resource: 'notification',
							operation: 'getReport',
							notificationIds: [sent, probe.notificationId].join(','),
							output: 'totals',
						},
					})
				).items,
			);
			expect(report).toMatchObject({ notificationIds: [sent], notifications: 1 });
		});
	});
});

describe('(e) the trigger leaves probes out', () => {
	const fixtures = useTriggerFixtures();
	afterAll(() => resetProcessState());
	beforeEach(() => {
		resetProcessState();
		forgetProbes();
		useShortTimings({ lookupSettleMs: SETTLE_MS, lookupEvidenceWaitMs: 2_000 });
	});

	test('a probe whose cancel failed stays scheduled a year ahead: the trigger never watches it, and Fetch Test Event never shows it', async () => {
		const fixture = await fixtures.start({}, { seedUsers: 10, deliveryMs: 0 });
		const { sandbox } = fixture;
		const person = fixture.user('onePhone');
		await fixture.poll(); // the starting point, before the probe
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500 });
		sandbox.addFault({ endpoint: CANCEL, kind: 'status5xx', status: 503, times: 100 });
		const credentials = fixture.credentials;
		const [item] = jsonOf(
			(await runOnce(sendRun(sandbox, [{ userId: person }], {}, { credentials }))).items,
		);
		sandbox.clearFaults();
		expect(item.error).toBeUndefined();
		const [probe] = probeRequests(sandbox, SEND);
		const token = await tokenFor(sandbox);
		expect((await detail(sandbox, token, probe.notificationId!)).notification.status).toBe(
			'scheduled',
		);

		const outcome = await fixture.poll();
		expect(outcome.error).toBeUndefined();
		const watched = Object.keys((fixture.staticData().watch as { sends: object }).sends);
		expect(watched).toEqual([registeredSends(sandbox)[0].id]);

		// Fetch Test Event, filtered on the probe's title: no send of the workflow matches.
		const test = await fetchTestEvent(fixture, { filters: { titleContains: PROBE_TITLE } });
		expect(test.items).toEqual([]);
		expect(test.error?.message).toMatch(/^None of the latest 1 notifications matches the filters/);
	});
});
