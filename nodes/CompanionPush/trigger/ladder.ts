import { parseTime } from '../common/time';
import type { NotificationRecord } from '../transport';

/**
 * The alert ladder of Not Opened in Time: one or more deadlines after a send went out, level 1, 2,
 * 3 ... in order. A person reached on a phone who opened on none by a level's deadline gets that
 * level, once; a person who opened by a deadline gets no level from it on (an open after a
 * deadline does not undo the levels already passed). Someone who got any level and opens later gets
 * Opened After Escalation, once, so the workflow can stand the ladder down.
 * Event keys (each event's `eventKey`): level 1 keeps the key of the single deadline
 * (`<userId>:notOpened`), level n is `<userId>:notOpened:<n>`. The state does not keep them one by
 * one but per person (StoredLadder, below); a state saved with them, one per person and level, is
 * read into it (ladderFromKeys), so an update tells nobody again.
 */

export function levelKey(userId: string, level: number): string {
	return level === 1 ? `${userId}:notOpened` : `${userId}:notOpened:${level}`;
}

export function openedAfterEscalationKey(userId: string): string {
	return `${userId}:openedAfterEscalation`;
}

/** The level a person key holds, or undefined for a key of another event. */
export function levelOfKey(key: string): number | undefined {
	const level = /:notOpened(?::(\d+))?$/.exec(key);
	return level ? Number(level[1] ?? 1) : undefined;
}

/** The deadlines of a send (ms on the API's clock), level 1 first: `sent_at` (for a scheduled send
 * its dispatch) plus each one; undefined before it went out or when its `sent_at` has no zone. */
export function deadlinesOf(
	record: NotificationRecord,
	deadlinesMs: readonly number[] | undefined,
): number[] | undefined {
	const sentAt = parseTime(record.sent_at);
	if (deadlinesMs === undefined || sentAt === undefined) return undefined;
	return deadlinesMs.map((deadlineMs) => sentAt + deadlineMs);
}

/** The first deadline still to come after `now`: the send is read right at it. */
export function nextDeadline(deadlines: number[] | undefined, now: number): number | undefined {
	return deadlines?.find((deadline) => deadline > now);
}

/**
 * What the ladder told each person of a send, as the state stores it: one entry per person told any
 * level, not one key per level. A level is told only once every level below it was, so the highest
 * one says them all; Opened After Escalation is once per person. Stored as the people grouped by
 * what they were told: `"2"` holds those told levels 1 and 2, `"2+opened"` those also told Opened
 * After Escalation. A person costs their id and 3 characters of JSON, whatever the levels.
 */
export type StoredLadder = Record<string, string[]>;

/** What one person was told: the highest level, and whether Opened After Escalation. */
export interface LadderTold {
	level: number;
	openedAfter: boolean;
}

const GROUP = /^([1-9]\d*)(\+opened)?$/;

function groupOf(told: LadderTold): string {
	return `${told.level}${told.openedAfter ? '+opened' : ''}`;
}

/** True for a stored ladder this version reads: groups named as above, each a list of user ids. */
export function isStoredLadder(value: unknown): value is StoredLadder {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
	return Object.entries(value).every(
		([group, people]) =>
			GROUP.test(group) &&
			Array.isArray(people) &&
			people.every((userId) => typeof userId === 'string'),
	);
}

/** The stored ladder as a map by user id, for the reads of one poll. */
export function readLadder(stored: StoredLadder | undefined): Map<string, LadderTold> {
	const told = new Map<string, LadderTold>();
	for (const [group, people] of Object.entries(stored ?? {})) {
		const [, level, openedAfter] = GROUP.exec(group) as RegExpExecArray;
		for (const userId of people)
			told.set(userId, { level: Number(level), openedAfter: openedAfter !== undefined });
	}
	return told;
}

/** The map back in its stored form (undefined when nobody was told anything). */
export function storeLadder(told: ReadonlyMap<string, LadderTold>): StoredLadder | undefined {
	if (told.size === 0) return undefined;
	const stored: StoredLadder = {};
	for (const [userId, person] of told) (stored[groupOf(person)] ??= []).push(userId);
	return stored;
}

/** Remembers a level told to a person (their highest one stays: levels are told in order). */
export function rememberLevel(told: Map<string, LadderTold>, userId: string, level: number): void {
	const person = told.get(userId);
	told.set(userId, {
		level: Math.max(level, person?.level ?? 0),
		openedAfter: person?.openedAfter ?? false,
	});
}

/** Remembers Opened After Escalation told to a person (told only to someone told a level: level 1
 * stands in should none be remembered, so that nothing is told twice). */
export function rememberOpenedAfter(told: Map<string, LadderTold>, userId: string): void {
	told.set(userId, { level: Math.max(1, told.get(userId)?.level ?? 0), openedAfter: true });
}

/** The keys of the ladder events told (those events carry them in `eventKey`, see levelKey). */
export function keysOfLadder(told: ReadonlyMap<string, LadderTold>): string[] {
	const keys: string[] = [];
	for (const [userId, person] of told) {
		for (let level = 1; level <= person.level; level++) keys.push(levelKey(userId, level));
		if (person.openedAfter) keys.push(openedAfterEscalationKey(userId));
	}
	return keys;
}

/** Keys remembered the older way, one per person and level: the ladder's go into the map, the
 * other events' keys are returned as they were. */
export function ladderFromKeys(keys: readonly string[]): {
	told: Map<string, LadderTold>;
	otherKeys: string[];
} {
	const told = new Map<string, LadderTold>();
	const otherKeys: string[] = [];
	const openedAfterSuffix = openedAfterEscalationKey('');
	for (const key of keys) {
		const level = /:notOpened(?::(\d+))?$/.exec(key);
		if (level) rememberLevel(told, key.slice(0, level.index), Number(level[1] ?? 1));
		else if (key.endsWith(openedAfterSuffix))
			rememberOpenedAfter(told, key.slice(0, -openedAfterSuffix.length));
		else otherKeys.push(key);
	}
	return { told, otherKeys };
}
