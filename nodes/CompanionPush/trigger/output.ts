import type { IDataObject } from 'n8n-workflow';

import type { NotificationRecord } from '../transport';
import type { TriggerEvent, TriggerEventName } from './events';
import { levelOfKey } from './ladder';

/**
 * The items a poll emits:
 * - perEvent: one item per event;
 * - perNotification: one item per send with its new events inside;
 * - perGroup: one item per send and group of people, a group being the people of one event, or of
 *   one level of Not Opened in Time, told in this poll; their ids in `userIds`, so that one Send
 *   reaches them all (it makes the batches), with a `groupKey` for its Idempotency Key.
 */
export type OutputMode = 'perEvent' | 'perNotification' | 'perGroup';

/** The group of an event: `level-<n>` for Not Opened in Time, else the event's name. */
function groupOf(event: Pick<TriggerEvent, 'name' | 'level'>): string {
	return event.name === 'notOpenedInTime' ? `level-${event.level ?? 1}` : event.name;
}

/** The group of an event key remembered before (see TriggerEvent.key). */
function groupOfKey(key: string): string {
	const level = levelOfKey(key);
	if (level !== undefined) return `level-${level}`;
	if (key.startsWith('status:')) return 'notificationSettled';
	const byEnding: Record<string, TriggerEventName> = {
		failed: 'deliveryFailed',
		opened: 'deliveryOpened',
		noDevice: 'noDevice',
		notReached: 'notReached',
		openedAfterEscalation: 'openedAfterEscalation',
	};
	return byEnding[key.slice(key.lastIndexOf(':') + 1)] ?? key;
}

/**
 * The key of a group: `<notificationId>-level-<n>` (or `-<event>`). A group of the same send and
 * level can follow in a later poll (someone reached late): it is `…-after-<k>`, k being the events
 * of that group told before. Both come from the state the poll started from, so the same group
 * told again gets the same key, and a Send keyed with it never reminds twice.
 */
function groupKeyOf(notificationId: string, group: string, earlierKeys: readonly string[]) {
	const earlier = earlierKeys.filter((key) => groupOfKey(key) === group).length;
	return `${notificationId}-${group}${earlier > 0 ? `-after-${earlier}` : ''}`;
}

/** An event as it sits inside a per-send or per-group item (the record is on the item, once). */
function innerOf(event: TriggerEvent): IDataObject {
	const inner = { ...event.json };
	delete inner.notification;
	return inner;
}

/** The items to emit (see OutputMode), in the order the sends were read. `earlierKeys` are the
 * event keys each send had before this poll (perGroup names its groups with them). */
export function toItems(
	events: TriggerEvent[],
	output: OutputMode,
	records: Map<string, NotificationRecord>,
	earlierKeys: ReadonlyMap<string, readonly string[]> = new Map(),
): IDataObject[] {
	if (output === 'perEvent') return events.map((event) => event.json);
	if (output === 'perGroup') return perGroup(events, records, earlierKeys);
	const perSend = new Map<string, IDataObject[]>();
	for (const event of events) {
		const list = perSend.get(event.notificationId) ?? [];
		list.push(innerOf(event));
		perSend.set(event.notificationId, list);
	}
	return [...perSend.entries()].map(([notificationId, sendEvents]) => {
		const record = records.get(notificationId);
		return {
			notificationId,
			title: record?.title ?? null,
			status: record?.status ?? null,
			notification: (record ?? null) as IDataObject | null,
			events: sendEvents,
		};
	});
}

function perGroup(
	events: TriggerEvent[],
	records: Map<string, NotificationRecord>,
	earlierKeys: ReadonlyMap<string, readonly string[]>,
): IDataObject[] {
	const groups = new Map<string, TriggerEvent[]>();
	for (const event of events) {
		const id = `${event.notificationId}\n${groupOf(event)}`;
		const group = groups.get(id) ?? [];
		group.push(event);
		groups.set(id, group);
	}
	return [...groups.values()].map((groupEvents) => {
		const [first] = groupEvents;
		const record = records.get(first.notificationId);
		const userIds = [
			...new Set(
				groupEvents
					.map((event) => event.json.userId)
					.filter((userId): userId is string => typeof userId === 'string'),
			),
		];
		return {
			event: first.name,
			...(first.level === undefined ? {} : { level: first.level }),
			groupKey: groupKeyOf(
				first.notificationId,
				groupOf(first),
				earlierKeys.get(first.notificationId) ?? [],
			),
			notificationId: first.notificationId,
			title: record?.title ?? null,
			body: record?.body ?? null,
			people: userIds.length,
			userIds,
			events: groupEvents.map(innerOf),
		};
	});
}
