import { isSettled } from './sendStates';
import { outcomesByUser } from './userOutcomes';

/**
 * One report over several sends (e.g. every batch of one Send): the API's counters added up, and
 * one row per user, a user's phones and sends collapsed. Sends are added one at a time as they are
 * read, so only the rows stay in memory, not the sends' delivery lists.
 */

const COUNTERS = ['targeted_users', 'devices', 'sent', 'failed', 'opened', 'no_device'] as const;
type Counters = Record<(typeof COUNTERS)[number], number>;

export interface UserRow {
	userId: string;
	/** At least one of the user's phones got it (in any of the sends). */
	reached: boolean;
	/** Opened (tapped) on at least one phone. */
	opened: boolean;
	/** At least one of the user's phones could not be reached (another one may have been). */
	failed: boolean;
	/** No active app on any phone (the API's `no_device` entry) in one of the sends. */
	noDevice: boolean;
	/** The most phones the user had in one send. */
	phones: number;
	/** The earliest open, as the API gave it. */
	firstOpenedAt: string | null;
	/** The sends the user was in. */
	notificationIds: string[];
}

/** What the report reads of a send: the transport's NotificationDetail has these fields. */
interface SendDetail {
	notification: { id: string; status: string; stats?: Partial<Record<string, unknown>> };
	deliveries: ReadonlyArray<{ user_id: string; status: string; opened_at?: string | null }>;
}

export class DeliveryReport {
	readonly notificationIds: string[] = [];
	private readonly rows = new Map<string, UserRow>();
	private readonly statuses: Record<string, number> = {};
	private readonly counters = Object.fromEntries(COUNTERS.map((name) => [name, 0])) as Counters;

	add(detail: SendDetail): void {
		const { notification } = detail;
		this.notificationIds.push(notification.id);
		this.statuses[notification.status] = (this.statuses[notification.status] ?? 0) + 1;
		for (const name of COUNTERS) {
			const value = notification.stats?.[name];
			if (typeof value === 'number' && Number.isFinite(value)) this.counters[name] += value;
		}
		for (const outcome of outcomesByUser(detail.deliveries).values()) {
			let row = this.rows.get(outcome.userId);
			if (!row) {
				row = {
					userId: outcome.userId,
					reached: false,
					opened: false,
					failed: false,
					noDevice: false,
					phones: 0,
					firstOpenedAt: null,
					notificationIds: [],
				};
				this.rows.set(outcome.userId, row);
			}
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

	/** One row per user, in the order the sends named them. */
	userRows(): UserRow[] {
		return [...this.rows.values()];
	}

	/** The sends' counters added up, their states, and the users counted by what happened to them. */
	totals() {
		const users = {
			total: 0,
			reached: 0,
			opened: 0,
			notOpened: 0,
			notReached: 0,
			failed: 0,
			noDevice: 0,
		};
		for (const row of this.rows.values()) {
			users.total++;
			if (row.reached) users.reached++;
			else users.notReached++;
			if (row.opened) users.opened++;
			else if (row.reached) users.notOpened++;
			if (row.failed) users.failed++;
			if (row.noDevice) users.noDevice++;
		}
		const allSettled = Object.keys(this.statuses).every((status) => isSettled(status));
		return {
			notificationIds: this.notificationIds,
			notifications: this.notificationIds.length,
			allSettled,
			statuses: { ...this.statuses },
			stats: { ...this.counters },
			userCounts: users,
		};
	}
}
