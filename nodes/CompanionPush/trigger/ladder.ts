import { parseTime } from '../helpers/time';
import type { NotificationRecord } from '../transport';

/**
 * The alert ladder of Not Opened in Time: one or more deadlines after a send went out, level 1, 2,
 * 3 ... in order. A person reached on a phone who opened on none by a level's deadline gets that
 * level, once; a person who opened by a deadline gets no level from it on (an open after a
 * deadline does not undo the levels already passed). Someone who got any level and opens later gets
 * Opened After Escalation, once, so the workflow can stand the ladder down.
 * Keys: level 1 keeps the key of the single deadline (`<userId>:notOpened`), so the state of a
 * trigger saved before the ladder existed does not tell anyone again; level n is
 * `<userId>:notOpened:<n>`.
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
