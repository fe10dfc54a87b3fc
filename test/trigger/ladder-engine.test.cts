/**
 * The alert ladder through n8n's engine on the sandbox's manual clock, at the size of a real alert:
 * 5,000 people in five sends of 1,000 (as Send batches them); 3,500 open within 10 minutes, 1,000
 * never, 300 between minutes 20 and 40, 200 have no phone. Deadlines 15, 30, 45 minutes, one item
 * per notification and group of people, and each level group reminded by one Send keyed with the
 * item's groupKey (run twice, as a retried execution would). n8n restarts at minute 20 (a new
 * engine instance over the stored static data, the process memory gone) and two polls fail on the
 * way (the list at minute 21, the detail reads at the second deadline): nobody gets a level twice,
 * nobody is skipped, and the reminders are not escalated in turn (Title Does Not Contain).
 */
import type { IDataObject } from 'n8n-workflow';

import { resetProcessState } from '../../devkit/processState.cts';
import {
	jsonOf,
	MINUTE,
	processedDataStore,
	runOn,
	sendParameters,
	useTriggerFixtures,
} from '../harness/index.cts';
import type { MemoryProcessedData } from '../harness/index.cts';

const LADDER = {
	events: ['noDevice', 'notOpenedInTime', 'openedAfterEscalation'],
	deadlineMode: 'ladder',
	openDeadlines: '15, 30, 45',
	output: 'perGroup',
	filters: { titleExcludes: 'Reminder:' },
};
const HALF_MINUTE = MINUTE / 2;

/** One Send for all the groups a poll gave: each item's people, keyed with its groupKey. */
const REMINDER = sendParameters({
	title: '=Reminder: {{ $json.title }}',
	body: '={{ $json.body }}',
	audience: 'userIds',
	userIds: '={{ $json.userIds }}',
	options: { idempotencyKey: '={{ $json.groupKey }}' },
});

function duplicates(values: string[]): string[] {
	return values.filter((value, index) => values.indexOf(value) !== index);
}

describe('Companion Push Trigger: the alert ladder', () => {
	const triggers = useTriggerFixtures();
	let store: MemoryProcessedData;
	beforeAll(async () => {
		store = await processedDataStore();
	});
	afterEach(() => {
		store.reset();
		resetProcessState();
	});

	test('5,000 people, 15, 30, 45 minutes: each level once to exactly those who had not opened, across a restart and two failed polls; one keyed reminder per level and send', async () => {
		const startedAt = performance.now(); // Date.now follows the sandbox's clock below
		const fixture = await triggers.start(LADDER, { seedUsers: 10_000 });
		fixture.hostClockFollowsSandbox();
		const { sandbox } = fixture;
		expect((await fixture.poll()).error).toBeUndefined(); // the starting point

		const kinds = sandbox.orgs.primary.userKinds;
		const withPhones = [...kinds.onePhone, ...kinds.twoPhones, ...kinds.threePhones];
		const opensEarly = withPhones.slice(0, 3500);
		const never = withPhones.slice(3500, 4500);
		const opensLater = withPhones.slice(4500, 4800);
		const noPhone = kinds.noPhone.slice(0, 200);
		expect(opensLater).toHaveLength(300);
		expect(noPhone).toHaveLength(200);

		// Five sends of 1,000, each a mix of everyone, as Send's batches.
		const everyone = [...opensEarly, ...never, ...opensLater, ...noPhone];
		const sendOf = new Map<string, string>();
		const sendIds: string[] = [];
		for (let batch = 0; batch < 5; batch++) {
			const people = everyone.filter((_, index) => index % 5 === batch);
			const id = await fixture.send(people, { title: 'Gas leak in hall B' });
			sendIds.push(id);
			for (const userId of people) sendOf.set(userId, id);
		}
		const t0 = sandbox.clock.now();
		const sentAt = new Map(
			sandbox
				.notifications('primary')
				.filter((send) => sendIds.includes(send.id))
				.map((send) => [send.id, Date.parse(send.sent_at ?? '')]),
		);
		expect([...sentAt.values()].every((time) => time >= t0 - MINUTE && time <= t0)).toBe(true);

		// Opens on half minutes: the early ones within 10 minutes, the later ones from 20.5 to 39.5.
		const opensAt = new Map<string, number>();
		opensEarly.forEach((userId, index) =>
			opensAt.set(userId, t0 + (index % 10) * MINUTE + HALF_MINUTE),
		);
		opensLater.forEach((userId, index) =>
			opensAt.set(userId, t0 + (20 + (index % 20)) * MINUTE + HALF_MINUTE),
		);
		const deadline = (userId: string, minutes: number) =>
			sentAt.get(sendOf.get(userId)!)! + minutes * MINUTE;
		// The first poll at or after the second deadline of every send fails on its detail reads.
		const failsAtSecondDeadline = Math.ceil(
			(Math.max(...sentAt.values()) + 30 * MINUTE - t0) / MINUTE,
		);

		const polls: Array<{ minute: number; items: IDataObject[] }> = [];
		const failures: number[] = [];
		const callsPerPoll: number[] = [];
		const reminderRuns: IDataObject[][] = [];
		for (let minute = 1; minute <= 80; minute++) {
			await sandbox.clock.advance(t0 + minute * MINUTE - HALF_MINUTE - sandbox.clock.now());
			const now = sandbox.clock.now();
			for (const [userId, time] of opensAt)
				if (time === now) sandbox.tap(sendOf.get(userId)!, userId);
			await sandbox.clock.advance(HALF_MINUTE);

			if (minute === 20) {
				// n8n restarts: a new engine instance over the static data it had stored, memory gone.
				const stored = JSON.parse(JSON.stringify(fixture.staticData())) as IDataObject;
				resetProcessState();
				fixture.activate(LADDER, { [`node:${fixture.target.node.name}`]: stored });
			}
			const failing = minute === 21 || minute === failsAtSecondDeadline;
			if (failing)
				sandbox.addFault({
					endpoint: minute === 21 ? 'GET /push-notification/list' : 'GET /push-notification/:id',
					kind: 'status5xx',
					status: 503,
					times: 100,
				});
			const logStart = sandbox.requestLog().length;
			const outcome = await fixture.poll();
			const calls = sandbox.requestLog().length - logStart;
			sandbox.clearFaults();
			if (failing) {
				expect(outcome.error?.message).toMatch(/503|unavailable/i);
				expect(outcome.items).toEqual([]);
				failures.push(minute);
				continue;
			}
			expect(outcome.error).toBeUndefined();
			callsPerPoll.push(calls);
			if (outcome.items.length === 0) continue;
			polls.push({ minute, items: outcome.items });

			// The workflow's one Send reminds each level group; n8n retries the execution once.
			const levelGroups = outcome.items.filter((item) => item.event === 'notOpenedInTime');
			if (levelGroups.length === 0) continue;
			const reminded = jsonOf(
				(await runOn(sandbox, { parameters: REMINDER, items: levelGroups })).items,
			);
			const retried = jsonOf(
				(await runOn(sandbox, { parameters: REMINDER, items: levelGroups })).items,
			);
			expect(reminded.every((item) => typeof item.id === 'string' && !item.skipped)).toBe(true);
			expect(retried.every((item) => item.skipped === true)).toBe(true);
			reminderRuns.push(reminded);
		}
		expect(failures).toEqual([21, failsAtSecondDeadline]);
		// The cost bound holds with the ladder: 1 list page + the 5 sends' reads (+ a token renewal).
		expect(Math.max(...callsPerPoll)).toBeLessThanOrEqual(7);

		const groups = polls.flatMap((poll) => poll.items);
		const events = groups.flatMap((group) => group.events as IDataObject[]);
		const usersOf = (event: string, level?: number) =>
			events
				.filter((item) => item.event === event && (level === undefined || item.level === level))
				.map((item) => item.userId as string);
		const sorted = (users: string[]) => [...users].sort();

		// No Device: the 200, all at the first poll after sending.
		expect(polls[0].minute).toBe(1);
		expect(sorted(polls[0].items.flatMap((group) => group.userIds as string[]))).toEqual(
			sorted(noPhone),
		);
		expect(sorted(usersOf('noDevice'))).toEqual(sorted(noPhone));

		// Each level exactly once to those who had opened on no phone by its deadline.
		const openedBy = (userId: string, minutes: number) =>
			opensAt.has(userId) && opensAt.get(userId)! <= deadline(userId, minutes);
		const notOpenedBy = (minutes: number) =>
			[...opensEarly, ...never, ...opensLater].filter((userId) => !openedBy(userId, minutes));
		const levels = [1, 2, 3].map((level) => usersOf('notOpenedInTime', level));
		for (const users of levels) expect(duplicates(users)).toEqual([]);
		expect(levels[0]).toHaveLength(1300);
		expect(sorted(levels[0])).toEqual(sorted([...never, ...opensLater]));
		const laterUnopenedAt30 = opensLater.filter((userId) => !openedBy(userId, 30));
		expect(sorted(levels[1])).toEqual(sorted([...never, ...laterUnopenedAt30]));
		expect(sorted(levels[1])).toEqual(sorted(notOpenedBy(30)));
		expect(levels[2]).toHaveLength(1000);
		expect(sorted(levels[2])).toEqual(sorted(never));

		// Opened After Escalation: once for each of the 300, with the level reached and the time to open.
		const openedAfter = events.filter((item) => item.event === 'openedAfterEscalation');
		expect(sorted(openedAfter.map((item) => item.userId as string))).toEqual(sorted(opensLater));
		for (const item of openedAfter) {
			const userId = item.userId as string;
			expect(item).toMatchObject({
				level: openedBy(userId, 30) ? 1 : 2,
				openedAt: new Date(opensAt.get(userId)!).toISOString(),
				secondsToOpen: Math.round((opensAt.get(userId)! - sentAt.get(sendOf.get(userId)!)!) / 1000),
			});
		}

		// One group per send and level, keyed <id>-level-<n>; one reminder send each, to its people.
		const levelGroups = groups.filter((group) => group.event === 'notOpenedInTime');
		expect(sorted(levelGroups.map((group) => group.groupKey as string))).toEqual(
			sorted(sendIds.flatMap((id) => [1, 2, 3].map((level) => `${id}-level-${level}`))),
		);
		const reminders = sandbox
			.notifications('primary')
			.filter((send) => send.title.startsWith('Reminder:'));
		expect(reminders).toHaveLength(15);
		expect(reminderRuns.flat()).toHaveLength(15);
		for (const level of [1, 2, 3]) {
			const remindedPeople = levelGroups
				.filter((group) => group.level === level)
				.map((group) => reminders.find((send) => send.id === reminderIdOf(group))!)
				.flatMap((send) => send.target_user_ids);
			expect(sorted(remindedPeople)).toEqual(sorted(levels[level - 1]));
		}
		// The reminders were not watched by the ladder: every event is of the five alert sends.
		expect(events.every((item) => sendIds.includes(item.notificationId as string))).toBe(true);
		// Nothing after the last open was told (the last open is at 39.5 minutes).
		expect(polls.filter((poll) => poll.minute > 50)).toEqual([]);

		function reminderIdOf(group: IDataObject): string {
			const run = reminderRuns.flat().find((item) => item.idempotencyKey === group.groupKey);
			return run?.id as string;
		}
		console.log(
			`Alert ladder, 5,000 people in 5 sends: ${polls.length} polls emitted; API calls per successful poll: max ${Math.max(...callsPerPoll)}; ` +
				`levels ${levels.map((users) => users.length).join(', ')}, opened after ${openedAfter.length}; ` +
				`static data ${JSON.stringify(fixture.staticData()).length.toLocaleString('en-US')} characters; ${Math.round(performance.now() - startedAt)} ms`,
		);
	}, 300_000);

	test('bad deadlines or events: a clear error naming the field, before any call', async () => {
		const fixture = await triggers.start({ ...LADDER, openDeadlines: '15, 30, 30' });
		const problems: Array<[IDataObject, string]> = [
			[
				{ openDeadlines: '15, 30, 30' },
				'Escalation Deadlines must grow from one level to the next (got 30 after 30), e.g. 15, 30, 45',
			],
			[
				{ openDeadlines: '15, -30' },
				'Escalation Deadlines must be positive numbers of minutes (got "-30")',
			],
			[
				{ openDeadlines: '1,2,3,4,5,6,7,8,9,10,11' },
				'Escalation Deadlines may hold at most 10 deadlines (got 11)',
			],
			[{ openDeadlines: '' }, 'Escalation Deadlines is empty'],
			[
				{ openDeadlines: '15, 1440', options: { watchWindow: 24 } },
				'Escalation Deadlines (1440 minutes) must be shorter than the Watch Window (24 hours)',
			],
			[
				{ events: ['openedAfterEscalation'] },
				'Opened After Escalation needs Not Opened in Time in "Trigger On"',
			],
		];
		for (const [parameters, message] of problems) {
			fixture.activate({ ...LADDER, ...parameters });
			expect((await fixture.poll()).error?.message).toBe(message);
		}
		expect(fixture.sandbox.requestLog()).toEqual([]);
	});
});
