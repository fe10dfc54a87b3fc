/**
 * What the alert ladder remembers: one entry per person (their highest level, and whether Opened
 * After Escalation was told) instead of one key per person and level. The stored form must keep
 * every level told, and a state saved the older way (a key per level) must be read without telling
 * anyone again.
 */
import type { IDataObject } from 'n8n-workflow';

import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import { resetProcessState } from '../../devkit/processState.cts';
import type { NotificationDetail } from '../../nodes/CompanionPush/transport';
import { detectEvents } from '../../nodes/CompanionPush/trigger/events';
import {
	isStoredLadder,
	keysOfLadder,
	ladderFromKeys,
	readLadder,
	rememberLevel,
	rememberOpenedAfter,
	storeLadder,
} from '../../nodes/CompanionPush/trigger/ladder';
import type { LadderTold } from '../../nodes/CompanionPush/trigger/ladder';
import { MINUTE, useTriggerFixtures } from '../harness/index.cts';

const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const TEN_DEADLINES_MS = Array.from({ length: 10 }, (_, index) => (index + 1) * 10 * MINUTE_MS);

/** One person who never opened, read after all ten deadlines, with what the state says they were told. */
function levelsToldNow(emittedKeys: Set<string>, userId: string): number[] {
	const detail: NotificationDetail = {
		notification: { id: 'n1', title: 'Alert', status: 'sent', sent_at: new Date(T0).toISOString() },
		deliveries: [
			{ user_id: userId, status: 'sent', sent_at: new Date(T0).toISOString(), opened_at: null },
		],
	};
	return detectEvents({
		detail,
		emittedKeys,
		selected: new Set(['notOpenedInTime', 'openedAfterEscalation']),
		now: T0 + 200 * MINUTE_MS,
		openDeadlinesMs: TEN_DEADLINES_MS,
	}).map((event) => event.level as number);
}

describe('the ladder in the state: one entry per person', () => {
	test.each([1, 2, 3, 5, 9, 10])(
		'levels 1 to %i told, stored, saved as JSON and read back: none is told again, the next ones are',
		(highest) => {
			for (const openedAfter of [false, true]) {
				const userId = 'user:with:notOpened:2';
				const told = new Map<string, LadderTold>();
				for (let level = 1; level <= highest; level++) rememberLevel(told, userId, level);
				if (openedAfter) rememberOpenedAfter(told, userId);
				const saved = JSON.parse(JSON.stringify(storeLadder(told))) as unknown;
				expect(isStoredLadder(saved)).toBe(true);

				const back = readLadder(saved as never);
				expect(back.get(userId)).toEqual({ level: highest, openedAfter });
				const remaining = Array.from({ length: 10 - highest }, (_, index) => highest + index + 1);
				expect(levelsToldNow(new Set(keysOfLadder(back)), userId)).toEqual(remaining);
			}
		},
	);

	test('a person costs their id and 3 characters, whatever the levels', () => {
		const told = new Map<string, LadderTold>();
		const userIds = Array.from(
			{ length: 1000 },
			(_, index) => `65f1c2a9e4b0${String(index).padStart(12, '0')}`,
		);
		for (const userId of userIds) for (const level of [1, 2, 3]) rememberLevel(told, userId, level);
		const size = JSON.stringify(storeLadder(told)).length;
		expect(size).toBeLessThanOrEqual(1000 * (24 + 3) + 10);
		expect(readLadder(storeLadder(told)).size).toBe(1000);
	});

	test('keys saved the older way: the ladder keys become entries, the other keys stay as they were', () => {
		const { told, otherKeys } = ladderFromKeys([
			'status:sent',
			'a:notOpened',
			'a:notOpened:2',
			'a:openedAfterEscalation',
			'b:0:opened',
			'b:notReached',
			'c:notOpened:c:notOpened',
			'c:notOpened:c:notOpened:3',
			'c:notOpened:c:notOpened:2',
			'd:noDevice',
		]);
		expect(otherKeys).toEqual(['status:sent', 'b:0:opened', 'b:notReached', 'd:noDevice']);
		expect(Object.fromEntries(told)).toEqual({
			a: { level: 2, openedAfter: true },
			'c:notOpened:c': { level: 3, openedAfter: false },
		});
	});

	test('a stored ladder of another shape is not taken for one', () => {
		expect(isStoredLadder({ '2': ['a'], '3+opened': ['b'] })).toBe(true);
		expect(isStoredLadder({ '0': ['a'] })).toBe(false);
		expect(isStoredLadder({ '2+later': ['a'] })).toBe(false);
		expect(isStoredLadder({ '2': 'a' })).toBe(false);
		expect(isStoredLadder(['a'])).toBe(false);
	});
});

const LADDER = {
	events: ['noDevice', 'notOpenedInTime', 'openedAfterEscalation'],
	deadlineMode: 'ladder',
	openDeadlines: '15, 30, 45',
	output: 'perEvent',
};

describe('Companion Push Trigger: a ladder state saved the older way, one key per level', () => {
	const triggers = useTriggerFixtures();
	afterEach(() => resetProcessState());

	test('after an update at minute 32 nobody is told a level or Opened After Escalation again, and level 3 and the later opens still are', async () => {
		const fixture = await triggers.start(LADDER);
		const { sandbox } = fixture;
		expect((await fixture.poll()).error).toBeUndefined();
		const kinds = sandbox.orgs.primary.userKinds;
		const withPhones = [...kinds.onePhone, ...kinds.twoPhones];
		const opensEarly = withPhones.slice(0, 10);
		const never = withPhones.slice(10, 20);
		const opensAt21 = withPhones.slice(20, 25);
		const opensAt41 = withPhones.slice(25, 30);
		const noPhone = kinds.noPhone.slice(0, 3);
		const id = await fixture.send(
			[...opensEarly, ...never, ...opensAt21, ...opensAt41, ...noPhone],
			{
				title: 'Gas leak',
			},
		);
		const t0 = sandbox.clock.now();
		const opens = new Map<number, string[]>([
			[5, opensEarly],
			[21, opensAt21],
			[41, opensAt41],
		]);
		const items: Array<IDataObject & { minute: number }> = [];
		const pollUntil = async (last: number, from: number) => {
			for (let minute = from; minute <= last; minute++) {
				await sandbox.clock.advance(t0 + minute * MINUTE - sandbox.clock.now() - MINUTE / 2);
				for (const userId of opens.get(minute - 1) ?? []) sandbox.tap(id, userId);
				await sandbox.clock.advance(MINUTE / 2);
				const outcome = await fixture.poll();
				expect(outcome.error).toBeUndefined();
				items.push(...outcome.items.map((item) => ({ ...item, minute })));
			}
		};
		await pollUntil(32, 1);
		const before = items.length;
		const eventsOf = (name: string, level?: number, from = 0) =>
			items
				.slice(from)
				.filter((item) => item.event === name && (level === undefined || item.level === level))
				.map((item) => item.userId as string)
				.sort();
		expect(eventsOf('notOpenedInTime', 1)).toEqual([...never, ...opensAt21, ...opensAt41].sort());
		expect(eventsOf('notOpenedInTime', 2)).toEqual([...never, ...opensAt41].sort());
		expect(eventsOf('openedAfterEscalation')).toEqual([...opensAt21].sort());

		// The state as the version before saved it: version 2, one key per person and level.
		const stored = JSON.parse(JSON.stringify(fixture.staticData().watch)) as IDataObject & {
			sends: Record<string, IDataObject & { keys: string[]; ladder?: unknown }>;
		};
		const send = stored.sends[id];
		expect(send.ladder).toBeDefined();
		delete send.ladder;
		for (const item of items) {
			const userId = item.userId as string;
			if (item.event === 'notOpenedInTime')
				send.keys.push(
					item.level === 1 ? `${userId}:notOpened` : `${userId}:notOpened:${item.level}`,
				);
			if (item.event === 'openedAfterEscalation') send.keys.push(`${userId}:openedAfterEscalation`);
		}
		expect(send.keys).toHaveLength(3 + 20 + 15 + 5);
		stored.version = 2;

		// The updated package starts over that state (a new engine instance, the process memory gone).
		resetProcessState();
		fixture.activate(LADDER, { [`node:${fixture.target.node.name}`]: { watch: stored } });
		await pollUntil(60, 33);
		const after = items.length;

		expect(eventsOf('notOpenedInTime', 1, before)).toEqual([]);
		expect(eventsOf('notOpenedInTime', 2, before)).toEqual([]);
		expect(eventsOf('notOpenedInTime', 3, before)).toEqual([...never].sort());
		// Those who opened at 41 had reached level 2 before the update: told once, with that level.
		const openedAfter = items
			.slice(before)
			.filter((item) => item.event === 'openedAfterEscalation');
		expect(openedAfter.map((item) => item.userId as string).sort()).toEqual([...opensAt41].sort());
		expect(openedAfter.every((item) => item.level === 2)).toBe(true);
		expect(after - before).toBe(15);

		// Stored the new way from then on: no ladder key left, one entry per person told.
		const watch = fixture.staticData().watch as {
			version: number;
			sends: Record<string, { keys: string[]; ladder: Record<string, string[]> }>;
		};
		expect(watch.version).toBe(3);
		expect(
			watch.sends[id].keys.filter((key) => /notOpened|openedAfterEscalation/.test(key)),
		).toEqual([]);
		expect(
			Object.fromEntries(
				Object.entries(watch.sends[id].ladder).map(([group, people]) => [
					group,
					[...people].sort(),
				]),
			),
		).toEqual({
			'1+opened': [...opensAt21].sort(),
			'2+opened': [...opensAt41].sort(),
			'3': [...never].sort(),
		});
	});
});
