import { DateTime, IANAZone } from 'luxon';

/*
 * When a send reaches the people of one time zone: "Deliver at Local Time" (a time of day in their
 * zone) and "Quiet Hours" (a span of their night, moved to its end). Plain functions on plain
 * inputs; luxon does the zone arithmetic, daylight-saving days included.
 */

/** A time of day, as the user typed it ("09:00"). */
export interface TimeOfDay {
	hour: number;
	minute: number;
}

/** Quiet hours: from `start` to `end`, over midnight when `end` comes before `start`. */
export interface QuietHours {
	start: TimeOfDay;
	end: TimeOfDay;
}

const TIME_OF_DAY = /^([01]?\d|2[0-3]):([0-5]\d)$/;

function readTimeOfDay(text: string): TimeOfDay | undefined {
	const match = TIME_OF_DAY.exec(text.trim());
	return match ? { hour: Number(match[1]), minute: Number(match[2]) } : undefined;
}

function shown(value: unknown): string {
	return JSON.stringify(typeof value === 'string' ? value.slice(0, 60) : value) ?? String(value);
}

/** "09:00" (24-hour clock, HH:mm). */
export function parseTimeOfDay(value: unknown): TimeOfDay | { problem: string } {
	const time = typeof value === 'string' ? readTimeOfDay(value) : undefined;
	return (
		time ?? {
			problem: `must be a time of day as HH:mm on the 24-hour clock, e.g. 09:00 (got ${shown(value)})`,
		}
	);
}

/** "22:00-07:00": start and end, HH:mm each. */
export function parseQuietHours(value: unknown): QuietHours | { problem: string } {
	const problem = {
		problem: `must be a span of the day as HH:mm-HH:mm on the 24-hour clock, e.g. 22:00-07:00 (got ${shown(value)})`,
	};
	if (typeof value !== 'string') return problem;
	const parts = value.split(/[-–]/);
	if (parts.length !== 2) return problem;
	const [start, end] = parts.map(readTimeOfDay);
	if (!start || !end) return problem;
	if (start.hour === end.hour && start.minute === end.minute) {
		return {
			problem: `starts and ends at the same time (got ${shown(value)}): give a span such as 22:00-07:00`,
		};
	}
	return { start, end };
}

/** A person's time zone as given: an IANA name (trimmed, as the user wrote it), or nothing (the
 * caller then uses the workflow's). `whose` names the people in a problem ("of 65f1c2a9e4b0..."). */
export function checkTimeZone(
	value: unknown,
	whose = '',
): { zone: string } | { missing: true } | { problem: string } {
	if (value === undefined || value === null) return { missing: true };
	const of = whose ? `${whose} ` : '';
	if (typeof value !== 'string')
		return { problem: `${of}must be a time zone name such as Europe/Madrid (got ${shown(value)})` };
	const zone = value.trim();
	if (zone === '') return { missing: true };
	if (!IANAZone.isValidZone(zone)) {
		return {
			problem: `${of}is not a time zone: ${shown(zone)}. Use an IANA name such as Europe/Madrid, America/Mexico_City or Asia/Manila`,
		};
	}
	return { zone };
}

/** One name per zone, to compare names: europe/madrid is Europe/Madrid, a renamed zone its old
 * name (Intl gives Asia/Kolkata as Asia/Calcutta). Show people the name they gave, not this one. */
export function sameZoneKey(zone: string): string {
	try {
		return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
	} catch {
		return zone; // not a zone Intl knows: only the same name is the same zone
	}
}

/** What decides when a send reaches one zone: "Deliver at Local Time", "Quiet Hours" (unless the
 * send is critical); Schedule's day (YYYY-MM-DD) and time (else today, now). */
export interface DeliveryRule {
	localTime?: TimeOfDay;
	quietHours?: QuietHours;
	day?: string;
	atMs?: number;
}

/** When a send reaches a zone: `scheduledAt` with the zone's offset, as the API receives it (absent
 * when it goes out now); `localTime` the wall time there ("2026-10-25 09:00"). */
export interface DeliveryTime {
	timeZone: string;
	scheduledAt?: string;
	scheduledAtUtc?: string;
	localTime: string;
	movedToNextDay?: boolean;
	movedByQuietHours?: boolean;
}

function atTimeOfDay(day: DateTime, time: TimeOfDay): DateTime {
	return day.set({ hour: time.hour, minute: time.minute, second: 0, millisecond: 0 });
}

const minutesOf = (time: TimeOfDay) => time.hour * 60 + time.minute;

/** The end of the quiet hours `local` falls in, or undefined when it falls outside them. */
function quietHoursEnd(local: DateTime, quiet: QuietHours): DateTime | undefined {
	const minute = minutesOf(local);
	const [start, end] = [minutesOf(quiet.start), minutesOf(quiet.end)];
	const inside = start < end ? minute >= start && minute < end : minute >= start || minute < end;
	if (!inside) return undefined;
	const endToday = atTimeOfDay(local, quiet.end);
	return endToday > local ? endToday : atTimeOfDay(local.plus({ days: 1 }), quiet.end);
}

/**
 * When a send reaches the people of `timeZone`, seen at `nowMs`: at the local time of its day (the
 * next day when that time has passed), or at its own time, or now; then, inside the quiet hours, at
 * their end. A problem when the day of the local time is over (Schedule only).
 */
export function deliveryTimeIn(
	timeZone: string,
	rule: DeliveryRule,
	nowMs: number,
): DeliveryTime | { problem: string } {
	const now = DateTime.fromMillis(nowMs, { zone: timeZone });
	let at = rule.atMs === undefined ? now : DateTime.fromMillis(rule.atMs, { zone: timeZone });
	let movedToNextDay = false;
	if (rule.localTime) {
		const day = rule.day ? DateTime.fromISO(rule.day, { zone: timeZone }) : now;
		at = atTimeOfDay(day, rule.localTime);
		if (at <= now) {
			at = atTimeOfDay(day.plus({ days: 1 }), rule.localTime);
			movedToNextDay = true;
		}
		// A day already over would go out at once: a late run must not notify people unexpectedly.
		if (at <= now)
			return { problem: `is a day already past in ${timeZone} (${rule.day}): pick today or later` };
	}
	const quietEnd = rule.quietHours ? quietHoursEnd(at, rule.quietHours) : undefined;
	if (quietEnd) at = quietEnd;
	const scheduled = at > now;
	return {
		timeZone,
		...(scheduled
			? {
					scheduledAt: at.toISO({ suppressMilliseconds: true })!,
					scheduledAtUtc: at.toUTC().toISO()!,
				}
			: {}),
		localTime: at.toFormat('yyyy-MM-dd HH:mm'),
		...(movedToNextDay ? { movedToNextDay } : {}),
		...(quietEnd ? { movedByQuietHours: true } : {}),
	};
}
