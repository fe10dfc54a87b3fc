/**
 * Notification > Get Report, how fast people opened: per user the time from the send's dispatch
 * (`sent_at`) to their first open on any phone, the summary's opens per bucket, median, 90th
 * percentile and open rate of those reached, and with Escalation Deadlines the levels a ladder would
 * have escalated. Opens are taps at known times on the sandbox's manual clock, so every figure is
 * exact; the report reads each send once and nothing else.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	DETAIL,
	MANUAL_CLOCK,
	REFRESH,
	jsonOf,
	runOn,
	send,
	tokenFor,
	useSandbox,
} from '../harness/index.cts';

const MINUTE = 60_000;

const report = (options: IDataObject = {}, output = 'summary') => ({
	resource: 'notification',
	operation: 'getReport',
	output,
	options,
});

describe('Get Report: how fast people opened', () => {
	const sandbox = useSandbox({
		...MANUAL_CLOCK,
		seedUsers: 60,
		deliveryMs: 0,
		resetBeforeEach: true,
	});
	let users: Record<string, string[]>;
	beforeAll(() => {
		const org = sandbox.orgs.primary;
		users = {
			onePhone: org.usersOfKind('onePhone', 6),
			twoPhones: org.usersOfKind('twoPhones', 2),
			noPhone: org.usersOfKind('noPhone', 1),
			uninstalled: org.usersOfKind('uninstalled', 1),
		};
	});

	/** The clock moved to `minutes` after `start` (never backwards). */
	async function at(start: number, minutes: number): Promise<void> {
		await sandbox.clock.advance(start + minutes * MINUTE - sandbox.clock.now());
	}

	/** Reads the report over `ids`, checking it read each send once and called nothing else. */
	async function readReport(ids: string[], options: IDataObject = {}, output = 'summary') {
		const logStart = sandbox.requestLog().length;
		const { items, error } = await runOn(sandbox, {
			items: ids.map((id) => ({ id })),
			parameters: report(options, output),
		});
		expect(error).toBeUndefined();
		const calls = sandbox.requestLog().slice(logStart);
		expect(
			calls.filter((entry) => entry.endpoint !== REFRESH).map((entry) => entry.endpoint),
		).toEqual(ids.map(() => DETAIL));
		return jsonOf(items);
	}

	/**
	 * One send to 10 people: 6 with one phone, 2 with two, 1 without a phone, 1 whose app is gone.
	 * Opens (minutes after dispatch): 1, 4, 6 (a two-phone user on the second phone; the first phone
	 * opens at 20, which does not count), 12, exactly 15, 33; one one-phone and one two-phone user
	 * never open.
	 */
	async function seededSend() {
		const token = await tokenFor(sandbox);
		const start = sandbox.clock.now();
		const [a, b, c, d, e, never] = users.onePhone;
		const [twoOpened, twoNever] = users.twoPhones;
		const { id } = await send(sandbox, token, [
			...users.onePhone,
			...users.twoPhones,
			...users.noPhone,
			...users.uninstalled,
		]);
		const taps: Array<[number, string, number?]> = [
			[1, a],
			[4, b],
			[6, twoOpened, 1],
			[12, c],
			[15, d],
			[20, twoOpened, 0],
			[33, e],
		];
		for (const [minutes, user, phone] of taps) {
			await at(start, minutes);
			sandbox.tap(id, user, phone);
		}
		return { id, start, never: [never, twoNever], opened: { a, d, e, twoOpened } };
	}

	test('exact figures: opens per bucket, median and 90th percentile, open rate of those reached; first open of several phones counts', async () => {
		const { id, start, opened, never } = await seededSend();
		await at(start, 50);
		const [summary] = await readReport([id]);

		expect(summary.timeToOpen).toEqual({
			bucketMinutes: 5,
			// 8 reached (the user without a phone and the one whose app is gone are not), 6 opened.
			reached: 8,
			opened: 6,
			openRate: 0.75,
			timed: 6,
			timeUnknown: 0,
			sendsNotDispatched: 0,
			// 60, 240, 360, 720, 900, 1980 s: nearest rank 3 of 6 and 6 of 6.
			medianSeconds: 360,
			p90Seconds: 1980,
			opensPerBucket: [
				{ fromMinute: 0, toMinute: 5, opened: 2, openedSoFar: 2 },
				{ fromMinute: 5, toMinute: 10, opened: 1, openedSoFar: 3 },
				{ fromMinute: 10, toMinute: 15, opened: 1, openedSoFar: 4 },
				{ fromMinute: 15, toMinute: 20, opened: 1, openedSoFar: 5 },
				{ fromMinute: 20, toMinute: 25, opened: 0, openedSoFar: 5 },
				{ fromMinute: 25, toMinute: 30, opened: 0, openedSoFar: 5 },
				{ fromMinute: 30, toMinute: 35, opened: 1, openedSoFar: 6 },
			],
		});
		expect(summary.escalation).toBeUndefined();

		const rows = new Map((summary.users as IDataObject[]).map((row) => [row.userId, row]));
		expect(rows.get(opened.a)).toMatchObject({ secondsToOpen: 60, timeToOpenUnknown: false });
		expect(rows.get(opened.twoOpened)).toMatchObject({
			phones: 2,
			secondsToOpen: 360,
			firstOpenedAt: new Date(start + 6 * MINUTE).toISOString(),
		});
		expect(rows.get(never[0])).toMatchObject({ secondsToOpen: null, timeToOpenUnknown: false });
		expect(rows.get(users.noPhone[0])).toMatchObject({ noDevice: true, secondsToOpen: null });
		expect(rows.get(opened.a)).not.toHaveProperty('escalationLevels');

		// Another bucket size: 10 minutes.
		const [tens] = await readReport([id], { bucketMinutes: 10 }, 'totals');
		expect(
			(tens.timeToOpen as { opensPerBucket: IDataObject[] }).opensPerBucket.map(
				(bucket) => bucket.opened,
			),
		).toEqual([3, 2, 0, 1]);
	});

	test('Escalation Deadlines: the levels passed before each user opened, or by the read if they never did', async () => {
		const { id, start, opened, never } = await seededSend();
		const deadlines = { escalationDeadlines: '15, 30, 45' };

		// At 40 minutes the third deadline has not come: those who never opened are at level 2.
		await at(start, 40);
		const [early] = await readReport([id], deadlines);
		const earlyRows = new Map((early.users as IDataObject[]).map((row) => [row.userId, row]));
		expect(never.map((user) => earlyRows.get(user)!.escalationLevels)).toEqual([
			[1, 2],
			[1, 2],
		]);
		expect(early.escalation).toEqual({
			deadlinesMinutes: [15, 30, 45],
			levels: [
				{ level: 1, afterMinutes: 15, people: 3, openedLater: 1 },
				{ level: 2, afterMinutes: 30, people: 3, openedLater: 1 },
				{ level: 3, afterMinutes: 45, people: 0, openedLater: 0 },
			],
			unknown: 0,
		});

		await at(start, 50);
		const rows = await readReport([id], deadlines, 'perUser');
		const levelsOf = new Map(rows.map((row) => [row.userId, row.escalationLevels]));
		expect(levelsOf.get(opened.a)).toEqual([]);
		expect(levelsOf.get(opened.d)).toEqual([]); // opened exactly at the first deadline: in time
		expect(levelsOf.get(opened.e)).toEqual([1, 2]); // opened at 33 minutes
		expect(never.map((user) => levelsOf.get(user))).toEqual([
			[1, 2, 3],
			[1, 2, 3],
		]);
		expect(levelsOf.get(users.noPhone[0])).toEqual([]);
		expect(levelsOf.get(users.uninstalled[0])).toEqual([]);
		const row33 = rows.find((row) => row.userId === opened.e)!;
		expect(row33).toMatchObject({
			secondsToOpen: 33 * 60,
			firstOpenedAt: new Date(start + 33 * MINUTE).toISOString(),
		});
	});

	test('times written without a zone place nothing: who opened counts as time unknown, never a guessed duration', async () => {
		await sandbox.configure({ timesWithoutZone: 'UTC' });
		const { id, start, never } = await seededSend();
		await at(start, 50);
		const [summary] = await readReport([id], { escalationDeadlines: '15, 30, 45' });
		expect(summary.timeToOpen).toEqual({
			bucketMinutes: 5,
			reached: 8,
			opened: 6,
			openRate: 0.75,
			timed: 0,
			timeUnknown: 6,
			sendsNotDispatched: 0,
			medianSeconds: null,
			p90Seconds: null,
			opensPerBucket: [],
		});
		// A ladder could not place its deadlines either: every user reached is unknown.
		expect(summary.escalation).toMatchObject({
			levels: [
				{ level: 1, people: 0 },
				{ level: 2, people: 0 },
				{ level: 3, people: 0 },
			],
			unknown: 8,
		});
		const rows = new Map((summary.users as IDataObject[]).map((row) => [row.userId, row]));
		expect(rows.get(users.onePhone[0])).toMatchObject({
			opened: true,
			secondsToOpen: null,
			timeToOpenUnknown: true,
			escalationLevels: null,
		});
		expect(rows.get(never[0])).toMatchObject({
			opened: false,
			timeToOpenUnknown: false,
			escalationLevels: null,
		});
		expect(rows.get(users.noPhone[0])).toMatchObject({ escalationLevels: [] });
	});

	test('a scheduled send not yet dispatched has no times; a reminder counts from the first send', async () => {
		const token = await tokenFor(sandbox);
		const start = sandbox.clock.now();
		const [first, second] = users.onePhone;
		const scheduled = await send(sandbox, token, [second], {
			scheduled_at: new Date(sandbox.clock.apiNow() + 120 * MINUTE).toISOString(),
		});
		const [alone] = await readReport([scheduled.id], { escalationDeadlines: '15' });
		expect(alone).toMatchObject({
			notifications: 1,
			statuses: { scheduled: 1 },
			userCounts: { total: 0 },
			timeToOpen: {
				reached: 0,
				opened: 0,
				openRate: null,
				timed: 0,
				sendsNotDispatched: 1,
				medianSeconds: null,
				opensPerBucket: [],
			},
			escalation: { levels: [{ level: 1, people: 0 }], unknown: 0 },
		});

		// A first send, and a reminder 10 minutes later, opened at 12: 12 minutes from the first.
		const alert = await send(sandbox, token, [first]);
		await at(start, 10);
		const reminder = await send(sandbox, token, [first]);
		await at(start, 12);
		sandbox.tap(reminder.id, first);
		const [both] = await readReport([alert.id, reminder.id, scheduled.id], {
			escalationDeadlines: '5, 11, 30',
		});
		expect(both.users).toEqual([
			expect.objectContaining({
				userId: first,
				secondsToOpen: 12 * 60,
				escalationLevels: [1, 2],
				notificationIds: [alert.id, reminder.id],
			}),
		]);
		expect(both.timeToOpen).toMatchObject({
			reached: 1,
			opened: 1,
			openRate: 1,
			medianSeconds: 720,
			p90Seconds: 720,
			sendsNotDispatched: 1,
		});
	});

	test('bad options: a clear error naming the field, nothing read', async () => {
		const cases: Array<[IDataObject, RegExp]> = [
			[
				{ escalationDeadlines: '30, 15' },
				/^"Escalation Deadlines \(Minutes\)" must grow from one level to the next \(got 15 after 30\)/,
			],
			[
				{ escalationDeadlines: '15, 15' },
				/^"Escalation Deadlines \(Minutes\)" must grow from one level to the next \(got 15 after 15\)/,
			],
			[
				{ escalationDeadlines: '15, 0' },
				/^"Escalation Deadlines \(Minutes\)" must be positive numbers of minutes \(got "0"\)/,
			],
			[
				{ escalationDeadlines: '15, soon' },
				/^"Escalation Deadlines \(Minutes\)" must be positive numbers of minutes \(got "soon"\)/,
			],
			[
				{ escalationDeadlines: '1,2,3,4,5,6,7,8,9,10,11' },
				/^"Escalation Deadlines \(Minutes\)" may hold at most 10 deadlines \(got 11\)/,
			],
			[
				{ bucketMinutes: 0 },
				/^"Time to Open Bucket \(Minutes\)" must be a whole number of minutes from 1 to 1440 \(got 0\)/,
			],
			[
				{ bucketMinutes: 2.5 },
				/^"Time to Open Bucket \(Minutes\)" must be a whole number of minutes from 1 to 1440 \(got 2.5\)/,
			],
		];
		for (const [options, message] of cases) {
			const { error } = await runOn(sandbox, {
				parameters: { ...report(options), notificationIds: 'abc' },
			});
			expect(error?.message).toMatch(message);
		}
		expect(sandbox.requestLog()).toEqual([]);
	});
});
