import { isSettled } from '../common/sendStates';
import { MINUTE_MS } from '../common/time';
import type { TriggerState, WatchedSend } from './state';

/**
 * One poll's plan, as plain functions of the state and the server's time.
 * Cost rule: a send still `sending`/`scheduled` is read every poll; a settled send is read again
 * after 1, 2, 4 ... minutes (back to 1 after a read that found something new, at most
 * MAX_BACKOFF_MINUTES) until its watch window passes, and once more right at its open deadline
 * (Not Opened in Time) when the back-off would read it later; at most `maxReads` detail reads per
 * poll, given to the sends most overdue, so every send gets its turn.
 */

export const MAX_BACKOFF_MINUTES = 60;
/** A send due a few seconds after this poll is read now: polls do not run at exact times. */
export const DUE_TOLERANCE_MS = 5_000;

/** A send scheduled for later: only a cancel can change it before then, so it is read with the
 * budget the sends already out leave (a send whose ladder comes due is not kept waiting behind
 * hundreds of sends scheduled ahead). */
function waitingOf(send: WatchedSend, now: number): number {
	return send.status === 'scheduled' && send.from > now ? 1 : 0;
}

/** The ids to read this poll, in order: sends scheduled for later last; before them, never-read
 * sends first, then the most overdue, then the least recently read (so sends left out by the
 * budget come first next time). */
export function planReads(state: TriggerState, now: number, maxReads: number): string[] {
	const due = Object.entries(state.sends).filter(
		([, send]) => send.dueAt <= now + DUE_TOLERANCE_MS,
	);
	due.sort(([idA, a], [idB, b]) => {
		const readA = a.readAt ?? -Infinity;
		const readB = b.readAt ?? -Infinity;
		const neverRead = (readA === -Infinity ? 0 : 1) - (readB === -Infinity ? 0 : 1);
		return (
			waitingOf(a, now) - waitingOf(b, now) ||
			neverRead ||
			a.dueAt - b.dueAt ||
			(readA === readB ? 0 : readA < readB ? -1 : 1) ||
			a.from - b.from ||
			(idA < idB ? -1 : idA > idB ? 1 : 0)
		);
	});
	return due.slice(0, Math.max(0, Math.floor(maxReads))).map(([id]) => id);
}

/** When a send just read is due again: on the back-off, or at `openDeadline` (server time) when
 * that comes first, so the people who did not open are known as soon as it passes. */
export function scheduleNextRead(
	send: WatchedSend,
	observed: { status: string; foundSomethingNew: boolean },
	now: number,
	openDeadline?: number,
): Pick<WatchedSend, 'dueAt' | 'backoffMinutes'> {
	if (!isSettled(observed.status)) return { dueAt: now, backoffMinutes: 0 };
	const backoffMinutes =
		observed.foundSomethingNew || send.backoffMinutes === 0
			? 1
			: Math.min(MAX_BACKOFF_MINUTES, send.backoffMinutes * 2);
	const dueAt = now + backoffMinutes * MINUTE_MS;
	return {
		dueAt: openDeadline !== undefined && openDeadline > now ? Math.min(dueAt, openDeadline) : dueAt,
		backoffMinutes,
	};
}

/** Start of a send's watch window: the latest of its creation, its scheduled time and its dispatch. */
export function windowStart(current: number, ...times: Array<number | undefined>): number {
	return Math.max(current, ...times.filter((time): time is number => time !== undefined));
}
