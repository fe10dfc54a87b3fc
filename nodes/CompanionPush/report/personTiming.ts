import { MINUTE_MS, readApiTime } from '../common/time';
import type { UserOutcome } from './userOutcomes';

/**
 * A person's time to open over the sends of one report, on the API's clock: from the earliest
 * dispatch (`sent_at`) of their sends to their first open on any phone. A time without a zone places
 * nothing (common/time.ts): the time is then "unknown", never a guessed duration.
 */

/** A send's dispatch: `ms` when placed (else Infinity); `unplaced` when `sent_at` is a text that
 * places nothing (no zone, or not a time). Neither: `sent_at` null, not dispatched yet. */
type Dispatch = { ms: number; unplaced: boolean };

export function readDispatch(sentAt: unknown): Dispatch {
	const time = readApiTime(sentAt);
	if (time.kind === 'placed') return { ms: time.ms, unplaced: false };
	return { ms: Infinity, unplaced: sentAt !== null && sentAt !== undefined };
}

/** One per person of a report, so every field is set from the start (Infinity: no such time): a
 * fixed shape keeps 100,000 of them small. */
export class PersonTiming {
	/** The earliest placed dispatch and open (ms), and whether one of either cannot be placed. */
	dispatchMs = Infinity;
	dispatchUnplaced = false;
	openedMs = Infinity;
	openUnplaced = false;
	opened = false;
	reached = false;
	/** The API's clock when the earliest read that showed them answered (its Date header). */
	shownAtMs = Infinity;

	/** Adds one send: its dispatch, the person's outcome, the API's clock when read (its Date). */
	add(dispatch: Dispatch, outcome: UserOutcome, readAtMs: number | undefined): void {
		this.dispatchMs = Math.min(this.dispatchMs, dispatch.ms);
		this.dispatchUnplaced ||= dispatch.unplaced;
		this.opened ||= outcome.phonesOpened > 0;
		this.reached ||= outcome.phonesReached > 0;
		this.openedMs = Math.min(this.openedMs, outcome.firstOpenedAt ?? Infinity);
		this.openUnplaced ||= outcome.openedAtUnknown;
		this.shownAtMs = Math.min(this.shownAtMs, readAtMs ?? Infinity);
	}

	/** Opened, but when, counted from the dispatch, cannot be told: an open or a dispatch written
	 * without a zone (or not given), or an open before the dispatch (two clocks that disagree). */
	get timeToOpenUnknown(): boolean {
		if (!this.opened) return false;
		return (
			this.openUnplaced ||
			this.dispatchUnplaced ||
			this.openedMs === Infinity ||
			this.dispatchMs === Infinity ||
			this.openedMs < this.dispatchMs
		);
	}

	/** Ms from dispatch to first open, or undefined: not opened, or its time is unknown. */
	get msToOpen(): number | undefined {
		if (!this.opened || this.timeToOpenUnknown) return undefined;
		return this.openedMs - this.dispatchMs;
	}

	/**
	 * The ladder levels (1-based) that would have escalated the person: those whose deadline
	 * (`deadlinesMinutes` after the dispatch) passed before they opened, or, never opened, by the
	 * time the API was read. Only people a phone got it on are escalated (no device, or every phone
	 * failed: none); an open exactly at a deadline is in time. Null when it cannot be told (a time
	 * that places nothing, an open time unknown, no Date header to say how late the read was).
	 */
	escalationLevels(deadlinesMinutes: number[]): number[] | null {
		if (!this.reached) return [];
		if (this.dispatchUnplaced) return null;
		if (this.dispatchMs === Infinity) return this.opened ? null : [];
		let elapsedMs: number;
		if (this.opened) {
			const ms = this.msToOpen;
			if (ms === undefined) return null;
			elapsedMs = ms;
		} else {
			if (this.shownAtMs === Infinity) return null;
			elapsedMs = this.shownAtMs - this.dispatchMs;
		}
		const levels: number[] = [];
		deadlinesMinutes.forEach((minutes, index) => {
			const deadlineMs = minutes * MINUTE_MS;
			if (this.opened ? elapsedMs > deadlineMs : elapsedMs >= deadlineMs) levels.push(index + 1);
		});
		return levels;
	}
}
