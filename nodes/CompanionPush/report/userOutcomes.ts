import { parseTime } from '../common/time';

/**
 * What a send did for each person, from its delivery entries: the spec gives one entry per phone
 * (`sent`, `opened`, `failed`), or a single `no_device` entry for a user without an active app on
 * any phone. A person with several phones is one outcome: reached when any phone got it, opened
 * when any phone opened it.
 */
export interface UserOutcome {
	userId: string;
	/** Phones: delivery entries but `no_device`; reached: `sent` or `opened`. */
	phones: number;
	phonesReached: number;
	phonesOpened: number;
	phonesFailed: number;
	noDevice: boolean;
	/** The earliest `opened_at` (ms), when the API gave one; unknown: an open without one. */
	firstOpenedAt?: number;
	openedAtUnknown: boolean;
}

/** The fields of a delivery entry read here (the transport's Delivery has them). */
interface DeliveryEntry {
	user_id: string;
	status: string;
	opened_at?: string | null;
}

/** One outcome per person, in the order the entries first name them. */
export function outcomesByUser(deliveries: readonly DeliveryEntry[]): Map<string, UserOutcome> {
	const outcomes = new Map<string, UserOutcome>();
	for (const delivery of deliveries) {
		let outcome = outcomes.get(delivery.user_id);
		if (!outcome) {
			outcome = {
				userId: delivery.user_id,
				phones: 0,
				phonesReached: 0,
				phonesOpened: 0,
				phonesFailed: 0,
				noDevice: false,
				openedAtUnknown: false,
			};
			outcomes.set(delivery.user_id, outcome);
		}
		if (delivery.status === 'no_device') {
			outcome.noDevice = true;
			continue;
		}
		outcome.phones++;
		const openedAt = parseTime(delivery.opened_at);
		const opened = delivery.status === 'opened' || openedAt !== undefined;
		if (delivery.status === 'sent' || opened) outcome.phonesReached++;
		if (delivery.status === 'failed') outcome.phonesFailed++;
		if (!opened) continue;
		outcome.phonesOpened++;
		if (openedAt === undefined) outcome.openedAtUnknown = true;
		else if (outcome.firstOpenedAt === undefined || openedAt < outcome.firstOpenedAt)
			outcome.firstOpenedAt = openedAt;
	}
	return outcomes;
}

/** True when the person opened it on some phone by `deadline` (ms). An open whose time the API did
 * not give counts as in time: a person who opened is never chased as one who did not. */
export function openedBy(outcome: UserOutcome, deadline: number): boolean {
	return (
		outcome.openedAtUnknown ||
		(outcome.firstOpenedAt !== undefined && outcome.firstOpenedAt <= deadline)
	);
}
