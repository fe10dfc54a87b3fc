import { DateTime } from 'luxon';

export const MINUTE_MS = 60_000;

/**
 * A time the API gave as text. The spec says only "ISO 8601", which allows a time without a zone
 * (`2026-11-25T18:04:18`): the wall time of an unnamed zone, up to a day from its instant, so it
 * places nothing (read in the host's zone, our own send looked older than its first attempt).
 * `placed`: an instant (ms) on the API's clock. `withoutZone`: `wallMs` is the wall time read as
 * UTC (see WALL_TIME_SPREAD). `none`: no time, or not one.
 */
export type ApiTime =
	| { kind: 'placed'; ms: number }
	| { kind: 'withoutZone'; wallMs: number }
	| { kind: 'none' };

/** The wall time of a zone is between 12 h behind and 14 h ahead of UTC (UTC-12 to UTC+14). */
export const WALL_TIME_SPREAD = { behindMs: 12 * 60 * MINUTE_MS, aheadMs: 14 * 60 * MINUTE_MS };

/** An ISO 8601 date and time in its extended form, the spec's usual one: date, time, designator. */
const ISO_EXTENDED =
	/^(\d{4}-\d\d-\d\d)(?:[Tt ](\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?)([Zz]|[+-]\d\d(?::?\d\d)?)?)?$/;

const READERS = [DateTime.fromISO, DateTime.fromRFC2822, DateTime.fromHTTP, DateTime.fromSQL];

/** The text read with `zone` standing for any zone it does not give; undefined when unreadable. */
function readInZone(text: string, zone: string): number | undefined {
	for (const read of READERS) {
		const time = read(text, { zone });
		if (time.isValid) return time.toMillis();
	}
	return undefined;
}

const definedMs = (ms: number) => (Number.isNaN(ms) ? undefined : ms);

/** What a time the API gave tells (see ApiTime). */
export function readApiTime(value: unknown): ApiTime {
	if (typeof value !== 'string' || value.trim() === '') return { kind: 'none' };
	const text = value.trim();
	// The usual form first, with Date.parse (a list holds thousands of these; luxon is far slower).
	const iso = ISO_EXTENDED.exec(text);
	if (iso) {
		const [, date, time, designator] = iso;
		if (designator !== undefined) {
			const ms = definedMs(Date.parse(text)) ?? readInZone(text, 'UTC');
			return ms === undefined ? { kind: 'none' } : { kind: 'placed', ms };
		}
		const wallMs = definedMs(Date.parse(`${date}T${(time ?? '00:00').replace(',', '.')}Z`));
		return wallMs === undefined ? { kind: 'none' } : { kind: 'withoutZone', wallMs };
	}
	// Other forms (RFC 2822, HTTP dates, ISO's basic form): a text that carries its zone is the same
	// instant whatever zone stands in for a missing one.
	const asUtc = readInZone(text, 'UTC');
	if (asUtc === undefined) return { kind: 'none' };
	return readInZone(text, 'UTC+1') === asUtc
		? { kind: 'placed', ms: asUtc }
		: { kind: 'withoutZone', wallMs: asUtc };
}

/** A time the API gave, in ms on its clock; undefined unless it is placed (see ApiTime). */
export function parseTime(value: unknown): number | undefined {
	const time = readApiTime(value);
	return time.kind === 'placed' ? time.ms : undefined;
}

/** Whether the API gave a date and time without a zone: shown, but placing nothing. */
export function isTimeWithoutZone(value: unknown): boolean {
	return readApiTime(value).kind === 'withoutZone';
}

/** How precisely a placed time is written, in ms (its instant may be this far either side): no
 * seconds, 1 min; whole seconds, 1 s; each decimal, ten times less (at least 1 ms). */
export function timePrecisionMs(value: unknown): number | undefined {
	if (readApiTime(value).kind !== 'placed') return undefined;
	const iso = ISO_EXTENDED.exec((value as string).trim());
	if (!iso) return 1_000; // RFC 2822 and HTTP dates count whole seconds
	// A placed ISO time has a time of day (the zone designator comes with it).
	const [, seconds, decimals] = /^\d\d:\d\d(:\d\d)?(?:[.,](\d+))?$/.exec(iso[2] ?? '') ?? [];
	if (seconds === undefined) return MINUTE_MS;
	return decimals === undefined ? 1_000 : Math.max(1, 10 ** (3 - decimals.length));
}
