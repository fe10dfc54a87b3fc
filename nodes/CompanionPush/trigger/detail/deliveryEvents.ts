import { parseTime } from '../../common/time';
import type { NotificationDetail } from '../../transport';

/**
 * Delivery Failed and Delivery Opened, one per phone of a person. A delivery entry carries no
 * phone identity and the spec does not say in which order the entries come (an API may list them
 * by last update, so an entry moves when it is opened). So a phone is not named by its place among
 * the person's entries: the trigger counts the person's entries in each state, and tells as many
 * events as that count has grown past what it told before. The n-th event of a person and state
 * has the key `<userId>:<n>:failed` (or `:opened`); `n` is its `deliveryIndex` (0 for the first).
 * - Opens only grow (`sent` -> `opened`): each open is told once, the latest opens (by
 *   `opened_at`) being the new ones.
 * - A failed phone that the service's retries reach later lowers the count: told failures stay
 *   told, and a count that grows again only tells what passes the highest count told.
 * Keys remembered by versions that named an entry by its place (`<userId>:<place>:failed`) count
 * as told, so an update tells nobody again.
 */

type Delivery = NotificationDetail['deliveries'][number];

export type DeliveryEventName = 'deliveryFailed' | 'deliveryOpened';

/** A delivery event not told before: its key (see above) and the entry it is told with. */
export interface DeliveryFinding {
	name: DeliveryEventName;
	key: string;
	deliveryIndex: number;
	entry: Delivery;
}

const STATE_OF: Record<DeliveryEventName, 'failed' | 'opened'> = {
	deliveryFailed: 'failed',
	deliveryOpened: 'opened',
};

/** The event a delivery entry counts for, when any. Opened: tapped, or an `opened_at` given. */
function eventsOf(entry: Delivery, settled: boolean): DeliveryEventName[] {
	const names: DeliveryEventName[] = [];
	// Before the send settles the service may still be on its first round.
	if (entry.status === 'failed' && settled) names.push('deliveryFailed');
	if (entry.status === 'opened' || entry.opened_at) names.push('deliveryOpened');
	return names;
}

/** When an entry reached its state: the newest ones are the ones not told yet. */
function timeOf(entry: Delivery, name: DeliveryEventName): number {
	return parseTime(name === 'deliveryOpened' ? entry.opened_at : entry.sent_at) ?? Infinity;
}

const KEY = /^(.*):(\d+):(failed|opened)$/;

/** The numbers of the keys told per person and state (`<state>\n<userId>`). */
function toldNumbers(emittedKeys: ReadonlySet<string>): Map<string, Set<number>> {
	const told = new Map<string, Set<number>>();
	for (const key of emittedKeys) {
		const parts = KEY.exec(key);
		if (!parts) continue;
		const slot = `${parts[3]}\n${parts[1]}`;
		const numbers = told.get(slot) ?? new Set<number>();
		numbers.add(Number(parts[2]));
		told.set(slot, numbers);
	}
	return told;
}

/** The delivery events of a detail not told before (see above), in the order the entries first
 * name each person. */
export function deliveryFindings(
	deliveries: readonly Delivery[],
	emittedKeys: ReadonlySet<string>,
	settled: boolean,
): DeliveryFinding[] {
	const byPersonAndEvent = new Map<string, { name: DeliveryEventName; entries: Delivery[] }>();
	for (const entry of deliveries) {
		for (const name of eventsOf(entry, settled)) {
			const slot = `${STATE_OF[name]}\n${entry.user_id}`;
			const group = byPersonAndEvent.get(slot) ?? { name, entries: [] };
			group.entries.push(entry);
			byPersonAndEvent.set(slot, group);
		}
	}
	const told = toldNumbers(emittedKeys);
	const findings: DeliveryFinding[] = [];
	for (const [slot, { name, entries }] of byPersonAndEvent) {
		const used = told.get(slot) ?? new Set<number>();
		const untold = entries.length - used.size;
		if (untold <= 0) continue;
		const newest = entries
			.map((entry, place) => ({ entry, place, at: timeOf(entry, name) }))
			.sort((a, b) => a.at - b.at || a.place - b.place)
			.slice(-untold);
		let number = 0;
		for (const { entry } of newest) {
			while (used.has(number)) number++;
			findings.push({
				name,
				key: `${entry.user_id}:${number}:${STATE_OF[name]}`,
				deliveryIndex: number,
				entry,
			});
			number++;
		}
	}
	return findings;
}
