/**
 * The alert ladder's pure parts, without n8n or the sandbox: Not Opened in Time at several
 * deadlines (each level once per person, none after an open), Opened After Escalation, the
 * deadlines as the node takes them, and the per-group output a reminder Send is keyed with.
 */
import type { IDataObject } from 'n8n-workflow';

import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import type { NotificationDetail } from '../../nodes/CompanionPush/transport';
import { detectEvents } from '../../nodes/CompanionPush/trigger/events';
import { matchesFilters } from '../../nodes/CompanionPush/trigger/filters';
import type { TriggerEvent } from '../../nodes/CompanionPush/trigger/events';
import { toItems } from '../../nodes/CompanionPush/trigger/output';

const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const minute = (m: number) => T0 + m * MINUTE_MS;
const iso = (ms: number) => new Date(ms).toISOString();
const LADDER_MS = [15, 30, 45].map((m) => m * MINUTE_MS);

/** When each person opens (minutes after sending), or null for never; `noApp` has no phone. */
const OPENS: Record<string, number | null> = {
	never: null,
	between1and2: 20,
	between2and3: 35,
	afterLast: 50,
	inTime: 5,
};

/** The send's detail as the API shows it at `now`: a person has opened once their time came. */
function detailAt(now: number, sentAt = iso(T0)): NotificationDetail {
	const deliveries: NotificationDetail['deliveries'] = Object.entries(OPENS).map(
		([userId, opensAt]) => {
			const opened = opensAt !== null && minute(opensAt) <= now;
			return {
				user_id: userId,
				status: opened ? 'opened' : 'sent',
				sent_at: iso(T0),
				opened_at: opened ? iso(minute(opensAt)) : null,
			};
		},
	);
	deliveries.push({ user_id: 'noApp', status: 'no_device', sent_at: iso(T0), opened_at: null });
	return {
		notification: {
			id: 'n1',
			title: 'Gas leak',
			body: 'Leave hall B',
			status: 'sent',
			sent_at: sentAt,
		},
		deliveries,
	};
}

const LADDER_EVENTS = new Set(['noDevice', 'notOpenedInTime', 'openedAfterEscalation'] as const);

function read(now: number, emitted: Set<string>, detail = detailAt(now)): TriggerEvent[] {
	const found = detectEvents({
		detail,
		emittedKeys: emitted,
		selected: LADDER_EVENTS,
		now,
		openDeadlinesMs: LADDER_MS,
	});
	for (const event of found) emitted.add(event.key);
	return found;
}

const brief = (events: TriggerEvent[]) =>
	events.map((event) =>
		event.name === 'notOpenedInTime'
			? `${event.json.userId} level ${event.level}`
			: `${event.json.userId} ${event.name}`,
	);

describe('alert ladder: Not Opened in Time at 15, 30 and 45 minutes', () => {
	test('polled every few minutes: each level once, none after an open, Opened After Escalation once with the level reached', () => {
		const emitted = new Set<string>();
		const byMinute: Record<number, string[]> = {};
		for (const m of [1, 14, 16, 17, 21, 29, 31, 36, 44, 46, 51, 60, 90]) {
			const found = brief(read(minute(m), emitted));
			if (found.length > 0) byMinute[m] = found;
		}
		expect(byMinute).toEqual({
			1: ['noApp noDevice'],
			16: ['never level 1', 'between1and2 level 1', 'between2and3 level 1', 'afterLast level 1'],
			21: ['between1and2 openedAfterEscalation'],
			31: ['never level 2', 'between2and3 level 2', 'afterLast level 2'],
			36: ['between2and3 openedAfterEscalation'],
			46: ['never level 3', 'afterLast level 3'],
			51: ['afterLast openedAfterEscalation'],
		});
	});

	test('the items: each level with its deadline; Opened After Escalation with the level reached and the seconds from sent_at to the open', () => {
		const emitted = new Set<string>();
		read(minute(16), emitted);
		const [levelTwo] = read(minute(31), emitted);
		expect(levelTwo).toMatchObject({ key: 'never:notOpened:2', level: 2 });
		expect(levelTwo.json).toEqual({
			event: 'notOpenedInTime',
			eventKey: 'n1:never:notOpened:2',
			notificationId: 'n1',
			title: 'Gas leak',
			body: 'Leave hall B',
			userId: 'never',
			sentAt: iso(T0),
			level: 2,
			deadline: iso(minute(30)),
			phonesReached: 1,
			openedAt: null,
		});
		const [opened] = read(minute(36), emitted);
		expect(opened.json).toEqual({
			event: 'openedAfterEscalation',
			eventKey: 'n1:between2and3:openedAfterEscalation',
			notificationId: 'n1',
			title: 'Gas leak',
			body: 'Leave hall B',
			userId: 'between2and3',
			sentAt: iso(T0),
			level: 2,
			openedAt: iso(minute(35)),
			secondsToOpen: 35 * 60,
		});
	});

	test('one read long after the last deadline (polls missed or failed): every level due at once, nobody skipped', () => {
		const found = read(minute(55), new Set());
		expect(brief(found)).toEqual([
			'never level 1',
			'never level 2',
			'never level 3',
			'between1and2 level 1',
			'between1and2 openedAfterEscalation',
			'between2and3 level 1',
			'between2and3 level 2',
			'between2and3 openedAfterEscalation',
			'afterLast level 1',
			'afterLast level 2',
			'afterLast level 3',
			'afterLast openedAfterEscalation',
			'noApp noDevice',
		]);
		expect(
			found.find((event) => event.key === 'afterLast:openedAfterEscalation')?.json,
		).toMatchObject({ level: 3, secondsToOpen: 50 * 60 });
	});

	test('a state saved with one deadline: level 1 keeps its key, so nobody is told it again', () => {
		const emitted = new Set(['never:notOpened', 'between1and2:notOpened']);
		expect(brief(read(minute(31), emitted))).toEqual(
			[
				'between2and3 level 1',
				'between2and3 level 2',
				'afterLast level 1',
				'afterLast level 2',
				'between1and2 openedAfterEscalation',
				'never level 2',
				'noApp noDevice',
			].sort((a, b) => order(a) - order(b)),
		);
	});

	test('a sent_at without a time zone places no deadline: no level and no Opened After Escalation', () => {
		const found = read(minute(90), new Set(), detailAt(minute(90), '2026-03-02T09:00:00'));
		expect(brief(found)).toEqual(['noApp noDevice']);
	});
});

/** The people in the order the deliveries name them (the order events come in). */
function order(line: string): number {
	return [...Object.keys(OPENS), 'noApp'].indexOf(line.split(' ')[0]);
}

describe('alert ladder: one item per notification and group of people', () => {
	const records = new Map([['n1', detailAt(minute(31)).notification]]);
	const groups = (events: TriggerEvent[], earlier: string[] = []) =>
		toItems(events, 'perGroup', records, new Map([['n1', earlier]]));

	test('the people of one level together, keyed <notificationId>-level-<n>', () => {
		const emitted = new Set<string>();
		read(minute(1), emitted); // No Device
		const first = read(minute(16), emitted);
		const items = groups(first);
		expect(items).toHaveLength(1);
		expect(items[0]).toEqual({
			event: 'notOpenedInTime',
			level: 1,
			groupKey: 'n1-level-1',
			notificationId: 'n1',
			title: 'Gas leak',
			body: 'Leave hall B',
			people: 4,
			userIds: ['never', 'between1and2', 'between2and3', 'afterLast'],
			events: first.map((event) => event.json),
		});
		// Levels and events of one poll stay apart: one Send per group.
		const atOnce = groups(read(minute(55), new Set()));
		expect(atOnce.map((item) => [item.groupKey, item.people])).toEqual([
			['n1-level-1', 4],
			['n1-level-2', 3],
			['n1-level-3', 2],
			['n1-openedAfterEscalation', 3],
			['n1-noDevice', 1],
		]);
	});

	test('a later group of a level already told (someone reached late) gets a key of its own, the same each time it is built from the same state', () => {
		const earlier = ['a:notOpened', 'b:notOpened', 'a:notOpened:2', 'status:sent'];
		const late: TriggerEvent = {
			name: 'notOpenedInTime',
			key: 'c:notOpened',
			level: 1,
			notificationId: 'n1',
			json: { event: 'notOpenedInTime', userId: 'c' } as IDataObject,
		};
		expect(groups([late], earlier)[0]).toMatchObject({
			groupKey: 'n1-level-1-after-2',
			userIds: ['c'],
		});
		expect(groups([late], earlier)[0].groupKey).toBe('n1-level-1-after-2');
		expect(groups([{ ...late, key: 'c:notOpened:3', level: 3 }], earlier)[0].groupKey).toBe(
			'n1-level-3',
		);
	});
});

describe('alert ladder: the reminders kept out by their title', () => {
	test('Title Does Not Contain: not case-sensitive; a listed send without a title waits for its detail, a detail without one is watched', () => {
		const filters = { titleExcludes: 'reminder:' };
		expect(matchesFilters({ title: 'Reminder: Gas leak' }, filters)).toBe(false);
		expect(matchesFilters({ title: 'Gas leak' }, filters)).toBe(true);
		expect(matchesFilters({}, filters)).toBeUndefined();
		expect(matchesFilters({}, filters, true)).toBe(true);
		expect(
			matchesFilters({ title: 'Reminder: Gas leak' }, { ...filters, titleContains: 'gas' }),
		).toBe(false);
	});
});
