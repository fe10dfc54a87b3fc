import { DateTime } from 'luxon';

const MIN_OFFSET_MINUTES = -12 * 60;
const MAX_OFFSET_MINUTES = 14 * 60;

/**
 * Reads the "Scheduled At" value: an ISO text (with or without zone), a JS Date, a Luxon DateTime
 * or epoch milliseconds. A time without a zone is read in the workflow's time zone. Returns it
 * with an explicit offset (the spec: a time without a zone is ambiguous and may be rejected).
 */
export function toScheduledAtWithOffset(
	value: unknown,
	timezone: string,
): { iso: string; epochMs: number } | { problem: string } {
	let parsed: DateTime | undefined;
	if (DateTime.isDateTime(value))
		parsed = value; // a Luxon DateTime always carries its zone
	else if (value instanceof Date) parsed = DateTime.fromJSDate(value, { zone: timezone });
	else if (typeof value === 'number') parsed = DateTime.fromMillis(value, { zone: timezone });
	else if (typeof value === 'string' && value.trim() !== '') {
		const text = value.trim();
		parsed = DateTime.fromISO(text, { zone: timezone, setZone: true });
		if (!parsed.isValid) parsed = DateTime.fromSQL(text, { zone: timezone, setZone: true });
		if (!parsed.isValid) parsed = DateTime.fromRFC2822(text, { zone: timezone, setZone: true });
	}
	if (!parsed) {
		if (
			value === undefined ||
			value === null ||
			(typeof value === 'string' && value.trim() === '')
		) {
			return { problem: 'is empty: pick a date and time' };
		}
		const given = Array.isArray(value)
			? 'a list'
			: typeof value === 'object'
				? 'an object'
				: `a ${typeof value}`;
		return { problem: `must be a date and time, but the expression gave ${given}` };
	}
	if (!parsed.isValid) {
		return {
			problem: `is not a date and time: "${String(value).slice(0, 60)}" (use e.g. 2026-12-24T09:00:00 or 2026-12-24T09:00:00+01:00)`,
		};
	}
	// Luxon accepts any offset (+25:00, even +99:99 read as +100:39); real zones run from -12:00 to +14:00.
	const offsetMinutesTooBig = typeof value === 'string' && /[+-]\d\d:?[6-9]\d$/.test(value.trim());
	if (
		parsed.offset < MIN_OFFSET_MINUTES ||
		parsed.offset > MAX_OFFSET_MINUTES ||
		offsetMinutesTooBig
	) {
		return {
			problem: `has a time zone offset no place uses: "${String(value).slice(0, 60)}" (offsets run from -12:00 to +14:00)`,
		};
	}
	return { iso: parsed.toISO({ suppressMilliseconds: true })!, epochMs: parsed.toMillis() };
}
