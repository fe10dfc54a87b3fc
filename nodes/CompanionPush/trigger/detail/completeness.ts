import type { IDataObject } from 'n8n-workflow';

import type { NotificationDetail } from '../../transport';

/**
 * Whether a detail lists every delivery entry its counters count. The spec does not say that the
 * detail lists them all (an API may cap or page them): a detail whose entries fall short of its
 * counters is incomplete. Then:
 * - what the listed entries show is still told (a failure, an open, a `no_device` entry: each
 *   proves itself);
 * - nothing is concluded from an absence: when phone entries are missing, no Not Reached for
 *   failed phones and no Not Opened in Time, for anyone (a person's missing phone may have been
 *   reached, or opened); the people not listed at all are told nothing;
 * - the workflow is told once per send, with a `detailIncomplete` item naming the send and what
 *   is missing. A later complete read tells what was withheld.
 * Each counter is checked against the entries it counts, as the sandbox counts them; a counter
 * that counts fewer (an API whose `sent` leaves out opened phones) never reads as a shortfall.
 * A detail without counters proves no shortfall.
 */

type Delivery = NotificationDetail['deliveries'][number];
const opened = (entry: Delivery) => entry.status === 'opened' || Boolean(entry.opened_at);

/** The counters checked, each with the entries it counts. */
const COUNTED_BY = {
	devices: (entry: Delivery) => entry.status !== 'no_device',
	sent: (entry: Delivery) => entry.status === 'sent' || opened(entry),
	failed: (entry: Delivery) => entry.status === 'failed',
	opened,
	no_device: (entry: Delivery) => entry.status === 'no_device',
} as const;
type Counter = keyof typeof COUNTED_BY;

/** The counters of phone entries: a shortfall there leaves a person's phones unknown. */
const PHONE_COUNTERS: readonly Counter[] = ['devices', 'sent', 'failed', 'opened'];

export interface Shortfall {
	/** Entries the detail lists. */
	entriesShown: number;
	/** Per counter short of its entries: how many entries it counts that the detail does not list. */
	missing: Partial<Record<Counter, number>>;
	/** Phone entries are missing: conclusions from an absence are withheld. */
	phonesMissing: boolean;
}

/** The shortfall of a detail, or undefined when its entries reach every counter. */
export function shortfallOf(detail: NotificationDetail): Shortfall | undefined {
	const stats = detail.notification.stats as Partial<Record<Counter, number>> | undefined;
	if (!stats) return undefined;
	const missing: Partial<Record<Counter, number>> = {};
	for (const [counter, counts] of Object.entries(COUNTED_BY) as Array<
		[Counter, (entry: Delivery) => boolean]
	>) {
		const counted = stats[counter];
		if (typeof counted !== 'number') continue;
		const shown = detail.deliveries.filter(counts).length;
		if (counted > shown) missing[counter] = counted - shown;
	}
	if (Object.keys(missing).length === 0) return undefined;
	return {
		entriesShown: detail.deliveries.length,
		missing,
		phonesMissing: PHONE_COUNTERS.some((counter) => missing[counter] !== undefined),
	};
}

/** The fields of the `detailIncomplete` item. `withheld`: the events not concluded at this read. */
export function incompleteFields(shortfall: Shortfall, withheld: readonly string[]): IDataObject {
	const what = Object.entries(shortfall.missing)
		.map(([counter, count]) => `${count} ${counter}`)
		.join(', ');
	return {
		entriesShown: shortfall.entriesShown,
		missing: shortfall.missing,
		withheld: [...withheld],
		message:
			`The API's detail of this notification lists ${shortfall.entriesShown} delivery entries, fewer than its counters count (missing: ${what}). ` +
			'The people it does not list are not reported, and nothing is concluded from what it does not show' +
			(withheld.length > 0
				? ` (${withheld.join(', ')} wait for a read that lists every entry).`
				: '.'),
	};
}
