/**
 * Send and Schedule with "Deliver at Local Time" and "Quiet Hours", through n8n's engine against the
 * sandbox: what reaches the API (one scheduled send per time zone and batch, each `scheduled_at`
 * with the offset its zone has on that day), what the items say, and bad input that sends nothing.
 * This process's clock (n8n's and the sandbox's alike) is set to the instant each test needs.
 */
import type { IDataObject } from 'n8n-workflow';

import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import {
	expectEachOnce,
	jsonOf,
	NODE_SANDBOX,
	nodeResult,
	nodeWorkflow,
	passTime,
	processedDataStore,
	registeredSends,
	runOn,
	runWorkflow,
	SEND,
	sendParameters,
	sentBodies,
	storeFor,
	useSandbox,
	whileSendingLater,
	type MemoryProcessedData,
	type NodeRunOptions,
} from '../harness/index.cts';

/** Sets this process's clock to `iso` (it then runs on from there). */
function clockAt(iso: string) {
	passTime(Date.parse(iso) - Date.now());
}

const MADRID = 'Europe/Madrid';
const MEXICO = 'America/Mexico_City';
const MANILA = 'Asia/Manila';

describe('Deliver at Local Time and Quiet Hours', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 3_040, resetBeforeEach: true });
	let users: string[];
	beforeAll(() => {
		users = sandbox.orgs.primary.userIds;
	});
	afterEach(() => jest.useRealTimers());

	/** One item per person, all in one send ("One Send for All Items"), each with its zone. */
	function peopleRun(people: Array<{ userId: string; timeZone?: string }>, options: IDataObject) {
		return {
			items: people,
			parameters: sendParameters({
				sendMode: 'combined',
				userIds: '={{ $json.userId }}',
				options: { recipientTimeZone: '={{ $json.timeZone }}', ...options },
			}),
		};
	}

	test('3,000 people in three zones and 40 without one, 09:00 local on a daylight-saving day: one scheduled send per zone and batch', async () => {
		// 00:30 UTC on 25 October 2026: Madrid (02:30) and London (01:30) still on summer time, both
		// change at 01:00 UTC; Mexico City is still on the 24th (18:30), Manila on the 25th (08:30).
		clockAt('2026-10-25T00:30:00Z');
		const zones = [
			...Array<string>(1_200).fill(MADRID),
			...Array<string>(1_000).fill(MEXICO),
			...Array<string>(800).fill(MANILA),
		];
		// The zones mixed (7919 is prime to 3,000, so this visits every index once), then 40 without.
		const people: Array<{ userId: string; timeZone?: string }> = zones.map((_, index) => ({
			userId: users[index],
			timeZone: zones[(index * 7_919) % zones.length],
		}));
		const withoutZone = users.slice(3_000, 3_040);
		people.push(
			...withoutZone.map((userId, index) => (index % 2 ? { userId } : { userId, timeZone: ' ' })),
		);

		const { items, error } = await runOn(sandbox, {
			timezone: 'Europe/London',
			...peopleRun(people, { deliverAtLocalTime: '09:00' }),
		});

		expect(error).toBeUndefined();
		const sends = sentBodies(sandbox).map((body) => ({
			at: body.scheduled_at,
			people: (body.target_user_ids as string[]).length,
		}));
		// Madrid and London on winter time by 09:00: +01:00 and +00:00, not the +02:00 / +01:00 of now.
		const inTimeOrder = sends.sort(
			(a, b) => Date.parse(String(a.at)) - Date.parse(String(b.at)) || b.people - a.people,
		);
		expect(inTimeOrder).toEqual([
			{ at: '2026-10-25T09:00:00+08:00', people: 800 },
			{ at: '2026-10-25T09:00:00+01:00', people: 1_000 },
			{ at: '2026-10-25T09:00:00+01:00', people: 200 },
			{ at: '2026-10-25T09:00:00+00:00', people: 40 },
			{ at: '2026-10-25T09:00:00-06:00', people: 1_000 },
		]);
		// Everyone once, in the send of their own zone.
		expectEachOnce(sandbox, users.slice(0, 3_040));
		const zoneOf = new Map(
			people.map((person) => [person.userId, person.timeZone?.trim() || 'Europe/London']),
		);
		for (const body of sentBodies(sandbox)) {
			const inSend = new Set(
				(body.target_user_ids as string[]).map((userId) => zoneOf.get(userId)),
			);
			expect(inSend.size).toBe(1);
		}

		const byZone = jsonOf(items).map((item) => ({
			timeZone: item.timeZone,
			localTime: item.localTime,
			scheduledAtUtc: item.scheduledAtUtc,
			movedToNextDay: item.movedToNextDay ?? false,
			withoutZone: (item.usersWithoutTimeZone as string[] | undefined)?.length ?? 0,
			status: item.status,
		}));
		expect(byZone).toHaveLength(5);
		expect(byZone).toEqual(
			expect.arrayContaining([
				{
					timeZone: MADRID,
					localTime: '2026-10-25 09:00',
					scheduledAtUtc: '2026-10-25T08:00:00.000Z',
					movedToNextDay: false,
					withoutZone: 0,
					status: 'scheduled',
				},
				{
					timeZone: MEXICO,
					localTime: '2026-10-25 09:00',
					scheduledAtUtc: '2026-10-25T15:00:00.000Z',
					// 09:00 of the 24th had passed in Mexico City: it goes out on the 25th.
					movedToNextDay: true,
					withoutZone: 0,
					status: 'scheduled',
				},
				{
					timeZone: MANILA,
					localTime: '2026-10-25 09:00',
					scheduledAtUtc: '2026-10-25T01:00:00.000Z',
					movedToNextDay: false,
					withoutZone: 0,
					status: 'scheduled',
				},
				{
					timeZone: 'Europe/London',
					localTime: '2026-10-25 09:00',
					scheduledAtUtc: '2026-10-25T09:00:00.000Z',
					movedToNextDay: false,
					withoutZone: 40,
					status: 'scheduled',
				},
			]),
		);
		const mexico = jsonOf(items).find((item) => item.timeZone === MEXICO)!;
		expect(mexico.deliveryNote).toMatch(/America\/Mexico_City: .*goes out the next day/);
		const london = jsonOf(items).find((item) => item.timeZone === 'Europe/London')!;
		expect([...(london.usersWithoutTimeZone as string[])].sort()).toEqual([...withoutZone].sort());
		// Each send's own id, as the API gave it.
		expect(new Set(jsonOf(items).map((item) => item.id)).size).toBe(5);
	}, 300_000); // 8-13 s alone; 3,040 items through n8n's engine took over 60 s in a loaded CI run

	test('Quiet Hours on Send at 23:10 in Madrid: scheduled for 07:00 there; in Manila (06:10) for 07:00 there; Mexico City (16:10) now', async () => {
		clockAt('2026-10-25T22:10:00Z');
		const [inMadrid, inManila, inMexico] = users;
		const { items, error } = await runOn(sandbox, {
			timezone: MADRID,
			...peopleRun(
				[
					{ userId: inMadrid, timeZone: MADRID },
					{ userId: inManila, timeZone: MANILA },
					{ userId: inMexico, timeZone: MEXICO },
				],
				{ quietHours: '22:00-07:00' },
			),
		});

		expect(error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => [body.target_user_ids, body.scheduled_at])).toEqual([
			[[inMadrid], '2026-10-26T07:00:00+01:00'],
			[[inManila], '2026-10-26T07:00:00+08:00'],
			[[inMexico], undefined],
		]);
		expect(
			jsonOf(items).map((item) => [
				item.timeZone,
				item.movedByQuietHours ?? false,
				item.sentNow ?? false,
			]),
		).toEqual([
			[MADRID, true, false],
			[MANILA, true, false],
			[MEXICO, false, true],
		]);
	});

	test("one zone under two names (the workflow's Asia/Kolkata, a person's Asia/Calcutta): one send for both; items show the names people gave, not Intl's old ones", async () => {
		clockAt('2026-10-25T00:30:00Z');
		const [noZone, kolkata, calcutta, kathmandu, lowerCase] = users;
		const { items, error } = await runOn(sandbox, {
			timezone: 'Asia/Kolkata',
			...peopleRun(
				[
					{ userId: noZone },
					{ userId: kolkata, timeZone: 'Asia/Kolkata' },
					{ userId: calcutta, timeZone: 'Asia/Calcutta' },
					{ userId: kathmandu, timeZone: 'Asia/Kathmandu' },
					{ userId: lowerCase, timeZone: 'asia/kathmandu' },
				],
				{ deliverAtLocalTime: '09:00' },
			),
		});

		expect(error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => [body.target_user_ids, body.scheduled_at])).toEqual([
			[[noZone, kolkata, calcutta], '2026-10-25T09:00:00+05:30'],
			[[kathmandu, lowerCase], '2026-10-25T09:00:00+05:45'],
		]);
		expect(jsonOf(items).map((item) => [item.timeZone, item.usersWithoutTimeZone])).toEqual([
			['Asia/Kolkata', [noZone]],
			['Asia/Kathmandu', undefined],
		]);
	});

	test("Quiet Hours in the workflow's zone (no Recipient Time Zone): a non-critical send at 23:10 Madrid time waits for 07:00, a critical one goes now", async () => {
		clockAt('2026-10-25T22:10:00Z');
		const run = (critical: boolean) =>
			runOn(sandbox, {
				timezone: MADRID,
				parameters: sendParameters({
					userIds: users[0],
					options: { quietHours: '22:00-07:00', critical },
				}),
			});

		const quiet = await run(false);
		expect(quiet.error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => body.scheduled_at)).toEqual([
			'2026-10-26T07:00:00+01:00',
		]);
		expect(jsonOf(quiet.items)[0]).toMatchObject({
			status: 'scheduled',
			timeZone: MADRID,
			localTime: '2026-10-26 07:00',
			scheduledAtUtc: '2026-10-26T06:00:00.000Z',
			movedByQuietHours: true,
		});

		const critical = await run(true);
		expect(critical.error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => body.scheduled_at)).toEqual([
			'2026-10-26T07:00:00+01:00',
			undefined,
		]);
		expect(jsonOf(critical.items)[0].status).toBe('sending');
		expect(jsonOf(critical.items)[0].timeZone).toBeUndefined();
	});

	test('Schedule with Deliver at Local Time: Scheduled At gives the day, each zone gets 09:00 of it; quiet hours move a late time to their end', async () => {
		clockAt('2026-10-20T12:00:00Z');
		const scheduleRun = (options: IDataObject) => ({
			...peopleRun(
				[
					{ userId: users[0], timeZone: MADRID },
					{ userId: users[1], timeZone: MEXICO },
				],
				options,
			),
		});
		const withDay = (run: ReturnType<typeof scheduleRun>) => ({
			...run,
			parameters: { ...run.parameters, operation: 'schedule', scheduledAt: '2026-10-25' },
		});

		const { error } = await runOn(sandbox, {
			timezone: 'UTC',
			...withDay(scheduleRun({ deliverAtLocalTime: '09:00' })),
		});
		expect(error).toBeUndefined();
		const late = await runOn(sandbox, {
			timezone: 'UTC',
			...withDay(scheduleRun({ deliverAtLocalTime: '23:30', quietHours: '22:00-07:00' })),
		});
		expect(late.error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => body.scheduled_at)).toEqual([
			'2026-10-25T09:00:00+01:00',
			'2026-10-25T09:00:00-06:00',
			'2026-10-26T07:00:00+01:00',
			'2026-10-26T07:00:00-06:00',
		]);
	});

	test('Schedule without a local time: Quiet Hours move a Scheduled At inside them to their end', async () => {
		clockAt('2026-10-20T12:00:00Z');
		const { items, error } = await runOn(sandbox, {
			timezone: MADRID,
			parameters: sendParameters({
				operation: 'schedule',
				scheduledAt: '2026-10-21T05:30:00',
				userIds: users[0],
				options: { quietHours: '22:00-07:00' },
			}),
		});
		expect(error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => body.scheduled_at)).toEqual([
			'2026-10-21T07:00:00+02:00',
		]);
		expect(jsonOf(items)[0].movedByQuietHours).toBe(true);
	});

	describe('bad input: the error names the field, nothing is sent', () => {
		test.each([
			[
				{ deliverAtLocalTime: '09:00', recipientTimeZone: 'Europe/Madird' },
				/"Recipient Time Zone" of \w+ is not a time zone: "Europe\/Madird"\. Use an IANA name .*\[item 0\]/,
			],
			[{ deliverAtLocalTime: '9am' }, /"Deliver at Local Time" must be a time of day as HH:mm/],
			[{ deliverAtLocalTime: '24:00' }, /"Deliver at Local Time" must be a time of day/],
			[{ quietHours: '22-07' }, /"Quiet Hours" must be a span of the day as HH:mm-HH:mm/],
			[{ quietHours: '22:00-22:00' }, /"Quiet Hours" starts and ends at the same time/],
			[{ quietHours: '10pm-7am', critical: true }, /"Quiet Hours" must be a span of the day/],
			[
				{ quietHours: '22:00-07:00', recipientTimeZone: 42 },
				/"Recipient Time Zone" of \w+ must be a time zone name/,
			],
		])('%j', async (options, message) => {
			const { items, error } = await runOn(sandbox, {
				timezone: MADRID,
				parameters: sendParameters({ userIds: users[0], options }),
			});
			expect(items).toEqual([]);
			expect(error?.message).toMatch(message);
			expect(sandbox.requestLog()).toEqual([]);
		});

		test('one person with a bad zone among many: nothing is sent for anyone, the error names the person', async () => {
			const people = users.slice(0, 5).map((userId) => ({ userId, timeZone: MADRID }));
			people[3].timeZone = 'Mars/Olympus';
			const { error } = await runOn(sandbox, {
				timezone: MADRID,
				...peopleRun(people, { deliverAtLocalTime: '09:00' }),
			});
			expect(error?.message).toMatch(
				new RegExp(
					`^"Recipient Time Zone" of ${users[3]} is not a time zone: "Mars/Olympus".*\\[item 3\\]$`,
				),
			);
			expect(sandbox.requestLog()).toEqual([]);
		});

		test('Schedule with a day already past in a zone: the error names Scheduled At, nothing is sent', async () => {
			clockAt('2026-10-25T12:00:00Z');
			const { error } = await runOn(sandbox, {
				timezone: 'UTC',
				parameters: sendParameters({
					operation: 'schedule',
					scheduledAt: '2026-10-20',
					userIds: users[0],
					options: { deliverAtLocalTime: '09:00' },
				}),
			});
			expect(error?.message).toMatch(/"Scheduled At" is a day already past in UTC \(2026-10-20\)/);
			expect(sandbox.requestLog().filter((entry) => entry.endpoint === SEND)).toEqual([]);
		});
	});

	describe('never twice: a zone-send goes through the same path as any batch', () => {
		let store: MemoryProcessedData;
		beforeAll(async () => {
			store = await processedDataStore();
		});
		beforeEach(() => {
			store.reset();
			resetProcessState();
			useTimings({ lookupSettleMs: 200, lookupEvidenceWaitMs: 1_000, heldKeyWaitMs: 300 });
		});
		afterAll(() => resetProcessState());

		/** Four people in four zones, one send for all, one send at a time (a fault meets a known zone). */
		function fourZonesRun(options: IDataObject = {}, extra: Partial<NodeRunOptions> = {}) {
			const zones = [MADRID, MEXICO, MANILA, 'Europe/London'];
			const people = zones.map((timeZone, index) => ({
				userId: users[index],
				timeZone,
				key: 'shift-digest',
			}));
			const { items, parameters } = peopleRun(people, {
				deliverAtLocalTime: '09:00',
				maxParallelRequests: 1,
				...options,
			});
			return {
				type: 'companionPush',
				credentials: storeFor(sandbox),
				timezone: 'UTC',
				items,
				parameters,
				...extra,
			} satisfies NodeRunOptions;
		}

		test('a lost answer on a zone-send is looked up in the list, not sent again', async () => {
			clockAt('2026-10-25T00:30:00Z');
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', skip: 1, times: 1 });
			const result = nodeResult(await runWorkflow(nodeWorkflow(fourZonesRun())));

			expect(result.error).toBeUndefined();
			expectEachOnce(sandbox, users.slice(0, 4));
			const mexico = jsonOf(result.items)[1];
			expect(mexico).toMatchObject({ timeZone: MEXICO, status: 'scheduled' });
			expect(mexico.recoveredAfter).toBeDefined();
			expect(mexico.id).toBe(registeredSends(sandbox)[1].id);
		});

		test('Retry On Fail after a refusal of the 3rd of 4 zone-sends: the 2 sent are not sent again', async () => {
			clockAt('2026-10-25T00:30:00Z');
			sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 2, times: 1 });
			const settings = { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 };
			const result = nodeResult(await runWorkflow(nodeWorkflow(fourZonesRun({}, { settings }))));

			expect(result.error).toBeUndefined();
			expectEachOnce(sandbox, users.slice(0, 4));
			expect(
				jsonOf(result.items).map((item) => [item.timeZone, item.sentByEarlierTry ?? false]),
			).toEqual([
				[MADRID, true],
				[MEXICO, true],
				[MANILA, false],
				['Europe/London', false],
			]);
		});

		test('an Idempotency Key covers the whole item: after 2 of 4 zone-sends, a re-run sends only the other 2', async () => {
			clockAt('2026-10-25T00:30:00Z');
			const run = fourZonesRun({ idempotencyKey: '={{ $json.key }}' });
			sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 2, times: 1 });
			const first = nodeResult(await runWorkflow(nodeWorkflow(run)));
			expect(first.error?.description).toContain('Batch 3 of 4 failed.');
			expect(registeredSends(sandbox)).toHaveLength(2);

			// The re-run finds the key claimed by the failed run: what that run did not send is proven
			// absent only by a send made after its lookup started, listed (a busy n8n's), as for any
			// batch. Its four lookups run at once, so one such send serves them all.
			const rerun = {
				...run,
				parameters: {
					...run.parameters,
					options: { ...(run.parameters.options as IDataObject), maxParallelRequests: 4 },
				},
			};
			const { result } = await whileSendingLater(
				sandbox,
				() => runWorkflow(nodeWorkflow(rerun)),
				run,
				users[5],
			);
			const again = nodeResult(result);
			expect(again.error).toBeUndefined();
			// The four people once each, and the person of the later send.
			expectEachOnce(sandbox, [...users.slice(0, 4), users[5]]);
			expect(jsonOf(again.items).map((item) => [item.timeZone, item.skipped ?? false])).toEqual([
				[MADRID, true],
				[MEXICO, true],
				[MANILA, false],
				['Europe/London', false],
			]);
		});
	});
});
