import type { DeliveryRecord, SandboxSettings } from '../types.cts';

/**
 * The delivery entries GET /push-notification/{id} shows. The spec gives their fields, not their
 * order, nor whether the detail lists them all; two switches model other APIs:
 * - `deliveryOrder`: `planned` (default) keeps the order of the recipients and their phones, as
 *   the send planned them; `lastUpdate` lists the entry updated last at the end (its `opened_at`,
 *   else its `sent_at`; equal times keep the planned order), so an entry moves when it is opened.
 * - `detailMaxDeliveries`: the detail lists at most this many entries (the first ones of its
 *   order) while its counters (`stats`) still count them all; null (default) lists every one.
 */
export function shownEntries(
	deliveries: readonly DeliveryRecord[],
	settings: Pick<SandboxSettings, 'deliveryOrder' | 'detailMaxDeliveries'>,
): DeliveryRecord[] {
	const ordered =
		settings.deliveryOrder === 'lastUpdate'
			? deliveries
					.map((entry, planned) => ({ entry, planned, updatedAt: lastUpdateOf(entry) }))
					.sort((a, b) => a.updatedAt - b.updatedAt || a.planned - b.planned)
					.map(({ entry }) => entry)
			: [...deliveries];
	const max = settings.detailMaxDeliveries;
	return max === null ? ordered : ordered.slice(0, max);
}

function lastUpdateOf(entry: DeliveryRecord): number {
	return Date.parse(entry.opened_at ?? entry.sent_at);
}
