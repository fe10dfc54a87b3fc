import { DateTime, IANAZone } from 'luxon';

import type { DeliveryRecord, SandboxSettings } from '../types.cts';

/**
 * How the API writes the times it shows. The spec says only "ISO 8601", which also allows a time
 * without a zone designator: `timesWithoutZone` makes the sandbox such an API, writing every time
 * as the wall time of one zone (`2026-11-25T19:04:18.123` for Europe/Berlin), so a client can
 * place it only by guessing that zone.
 */

/** Whether `zone` names a zone luxon knows (an IANA name such as `UTC` or `Europe/Berlin`). */
export function isKnownZone(zone: string): boolean {
	return IANAZone.isValidZone(zone);
}

/** A time as the API shows it: as stored (ISO with `Z`), or the wall time of `zone` without a zone. */
export function shownTime(iso: string, zone: string | null): string;
export function shownTime(iso: string | null, zone: string | null): string | null;
export function shownTime(iso: string | null, zone: string | null): string | null {
	if (iso === null || zone === null) return iso;
	return DateTime.fromISO(iso, { zone }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");
}

/** A delivery entry as the API shows it (its sent_at and opened_at written as `shownTime` says). */
export function shownDelivery(delivery: DeliveryRecord, settings: SandboxSettings): DeliveryRecord {
	const zone = settings.timesWithoutZone;
	return {
		...delivery,
		sent_at: shownTime(delivery.sent_at, zone),
		opened_at: shownTime(delivery.opened_at, zone),
	};
}
