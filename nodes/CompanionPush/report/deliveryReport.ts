import { PersonTiming, readDispatch } from './personTiming';
import { isSettled } from '../common/sendStates';
import { timeToOpenSpread } from './timeToOpen';
import { outcomesByUser } from './userOutcomes';

/**
 * One report over several sends (e.g. every batch of one Send): the API's counters added up, and
 * one row per user, a user's phones and sends collapsed. Sends are added one at a time as they are
 * read, so only the rows (and each person's times) stay in memory, not the sends' delivery lists.
 */

export const DEFAULT_BUCKET_MINUTES = 5;

export interface ReportOptions {
	/** The size of the buckets opens are counted in, in whole minutes. */
	bucketMinutes: number;
	/** A ladder's deadlines (minutes after dispatch, increasing): each row tells the levels that
	 * would have escalated the person. Empty: no such field. */
	escalationMinutes: number[];
}

const COUNTERS = ['targeted_users', 'devices', 'sent', 'failed', 'opened', 'no_device'] as const;
type Counters = Record<(typeof COUNTERS)[number], number>;

/** A user over all sends: reached, opened or failed on any phone; no active app (`no_device`) in
 * a send; the most phones in one send. Times: see personTiming. */
interface UserRow {
	userId: string;
	reached: boolean;
	opened: boolean;
	failed: boolean;
	noDevice: boolean;
	phones: number;
	firstOpenedAt: string | null;
	notificationIds: string[];
	secondsToOpen: number | null;
	timeToOpenUnknown: boolean;
	escalationLevels?: number[] | null;
}

/** What the report reads of a send: the transport's NotificationDetail has these fields. */
interface SendDetail {
	notification: {
		id: string;
		status: string;
		sent_at?: string | null;
		stats?: Partial<Record<string, unknown>>;
	};
	deliveries: ReadonlyArray<{ user_id: string; status: string; opened_at?: string | null }>;
}

export class DeliveryReport {
	readonly notificationIds: string[] = [];
	/** Per user, their row and their times (from which the row's times are filled in at the end). */
	private readonly people = new Map<string, { row: UserRow; timing: PersonTiming }>();
	/** Sends whose `sent_at` is null: not dispatched yet, so no times. */
	private notDispatched = 0;
	private timesFilledIn = false;
	private readonly statuses: Record<string, number> = {};
	private readonly counters = Object.fromEntries(COUNTERS.map((name) => [name, 0])) as Counters;

	constructor(private readonly options: ReportOptions) {}

	/** Adds a send as read; `readAtMs` is the API's clock when it answered (its Date header). */
	add(detail: SendDetail, readAtMs?: number): void {
		const { notification } = detail;
		this.timesFilledIn = false;
		this.notificationIds.push(notification.id);
		if (notification.sent_at === null || notification.sent_at === undefined) this.notDispatched++;
		const dispatch = readDispatch(notification.sent_at);
		this.statuses[notification.status] = (this.statuses[notification.status] ?? 0) + 1;
		for (const name of COUNTERS) {
			const value = notification.stats?.[name];
			if (typeof value === 'number' && Number.isFinite(value)) this.counters[name] += value;
		}
		for (const outcome of outcomesByUser(detail.deliveries).values()) {
			let person = this.people.get(outcome.userId);
			if (!person) {
				person = {
					row: {
						userId: outcome.userId,
						reached: false,
						opened: false,
						failed: false,
						noDevice: false,
						phones: 0,
						firstOpenedAt: null,
						notificationIds: [],
						secondsToOpen: null,
						timeToOpenUnknown: false,
					},
					timing: new PersonTiming(),
				};
				this.people.set(outcome.userId, person);
			}
			const { row } = person;
			person.timing.add(dispatch, outcome, readAtMs);
			row.reached ||= outcome.phonesReached > 0;
			row.opened ||= outcome.phonesOpened > 0;
			row.failed ||= outcome.phonesFailed > 0;
			row.noDevice ||= outcome.noDevice && outcome.phones === 0;
			row.phones = Math.max(row.phones, outcome.phones);
			if (
				outcome.firstOpenedAt !== undefined &&
				(row.firstOpenedAt === null || outcome.firstOpenedAt < Date.parse(row.firstOpenedAt))
			) {
				row.firstOpenedAt = new Date(outcome.firstOpenedAt).toISOString();
			}
			row.notificationIds.push(notification.id);
		}
	}

	/** Each row's time to open and levels, from the times of all its sends (once all are added). */
	private fillInTimes(): void {
		if (this.timesFilledIn) return;
		const deadlines = this.options.escalationMinutes;
		for (const { row, timing } of this.people.values()) {
			const ms = timing.msToOpen;
			row.secondsToOpen = ms === undefined ? null : ms / 1000;
			row.timeToOpenUnknown = timing.timeToOpenUnknown;
			if (deadlines.length > 0) row.escalationLevels = timing.escalationLevels(deadlines);
		}
		this.timesFilledIn = true;
	}

	/** One row per user, in the order the sends named them. */
	userRows(): UserRow[] {
		this.fillInTimes();
		return Array.from(this.people.values(), (person) => person.row);
	}

	/** How fast people opened: the open rate of those reached and the spread of the times to open. */
	private timeToOpen({ reached, opened }: { reached: number; opened: number }) {
		let timeUnknown = 0;
		let timed = 0;
		for (const { row } of this.people.values()) {
			if (row.timeToOpenUnknown) timeUnknown++;
			if (row.secondsToOpen !== null) timed++;
		}
		// One number per person who opened: the only part of the summary that grows with the audience.
		const timesMs = new Float64Array(timed);
		let index = 0;
		for (const { row } of this.people.values())
			if (row.secondsToOpen !== null) timesMs[index++] = Math.round(row.secondsToOpen * 1000);
		return {
			bucketMinutes: this.options.bucketMinutes,
			reached,
			opened,
			openRate: reached === 0 ? null : Math.round((opened / reached) * 10_000) / 10_000,
			timed,
			timeUnknown,
			sendsNotDispatched: this.notDispatched,
			...timeToOpenSpread(timesMs, this.options.bucketMinutes),
		};
	}

	/** Per level of the ladder, the people it would have escalated, and how many of them opened later. */
	private escalation() {
		const deadlines = this.options.escalationMinutes;
		const levels = deadlines.map((afterMinutes, index) => ({
			level: index + 1,
			afterMinutes,
			people: 0,
			openedLater: 0,
		}));
		let unknown = 0;
		for (const { row } of this.people.values()) {
			if (row.escalationLevels === null) unknown++;
			for (const level of row.escalationLevels ?? []) {
				levels[level - 1].people++;
				if (row.opened) levels[level - 1].openedLater++;
			}
		}
		return { deadlinesMinutes: [...deadlines], levels, unknown };
	}

	/** The sends' counters added up, their states, and the users counted by what happened to them. */
	totals() {
		this.fillInTimes();
		const users = {
			total: 0,
			reached: 0,
			opened: 0,
			notOpened: 0,
			notReached: 0,
			failed: 0,
			noDevice: 0,
		};
		for (const { row } of this.people.values()) {
			users.total++;
			if (row.reached) users.reached++;
			else users.notReached++;
			if (row.opened) users.opened++;
			else if (row.reached) users.notOpened++;
			if (row.failed) users.failed++;
			if (row.noDevice) users.noDevice++;
		}
		return {
			notificationIds: this.notificationIds,
			notifications: this.notificationIds.length,
			allSettled: Object.keys(this.statuses).every((status) => isSettled(status)),
			statuses: { ...this.statuses },
			stats: { ...this.counters },
			userCounts: users,
			timeToOpen: this.timeToOpen(users),
			...(this.options.escalationMinutes.length > 0 ? { escalation: this.escalation() } : {}),
		};
	}
}
