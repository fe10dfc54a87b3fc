import { parseTime, readApiTime, WALL_TIME_SPREAD } from '../../common/time';
import type { SendRequest } from '../schemas';

/**
 * Whether a send the API shows (an element of the list of sends, or a send's detail record) is the
 * send of a request, field by field. Pure: no call, no clock; what the API was seen to do with our
 * own texts (TextEvidence) is given.
 *
 * Each field the request defines is `same`, `different`, `notShown` (the record does not carry it)
 * or `unsure` (it carries it, but what it shows cannot tell). The list's body is not part of the
 * API's documented contract, so any field may be missing from it; the detail record carries title, body, image, deeplink, scheduled time and creation time,
 * and the recipients only through its delivery entries (one per phone, or one `no_device` entry per
 * user without an active app) once the send was dispatched.
 */

/** `unsure`: shown, but what is shown cannot tell (a shorter text, with no evidence that this API cuts
 * texts; no scheduled time, for a send made about when ours was due; a scheduled time without a zone
 * that some zone's wall time of ours would read as). */
export type FieldVerdict = 'same' | 'different' | 'notShown' | 'unsure';

/** The fields that must be shown the same before a send counts as ours: without them two sends
 * with the same text (a daily message, one message per user) cannot be told apart. */
const REQUIRED: ReadonlyArray<keyof Comparison> = ['title', 'body', 'recipients', 'scheduledAt'];

export interface Comparison {
	title: FieldVerdict;
	body: FieldVerdict;
	imageUrl: FieldVerdict;
	deeplink: FieldVerdict;
	announcementId: FieldVerdict;
	scheduledAt: FieldVerdict;
	recipients: FieldVerdict;
}

/** What a comparison adds up to: not ours; ours, proven; or not enough shown to tell. */
export type Match = 'different' | 'exact' | 'undecided';

/** What this API was seen to do with the texts of our own sends, for one field (see listings.ts):
 * where it cut them, and how long a text it kept whole. Nothing seen: both empty. */
export interface TextEvidence {
	/** The lengths (code points, as shown, an ellipsis included) of texts of ours it showed cut short. */
	cutLengths: number[];
	/** The longest text of ours (code points, trimmed) it showed whole; 0 when none was seen. */
	longestWhole: number;
}

/** Evidence on titles and bodies, learned from the list of sends. */
export interface SeenTexts {
	title: TextEvidence;
	body: TextEvidence;
}

export const NO_EVIDENCE: SeenTexts = {
	title: { cutLengths: [], longestWhole: 0 },
	body: { cutLengths: [], longestWhole: 0 },
};

/** Code points, as a database column counts them. */
export function lengthOf(text: string): number {
	return Array.from(text).length;
}

/** Whether `shown` (trimmed) is `sent` (trimmed) cut short: a strict, non-empty prefix of it, with or
 * without an ellipsis. */
export function isCutOf(shown: string, sent: string): boolean {
	const cut = shown.replace(/(…|\.\.\.)$/, '').trimEnd();
	return cut.length > 0 && cut.length < sent.length && sent.startsWith(cut);
}

/**
 * A text as the API shows it: the same once surrounding white space is trimmed. Shorter, as a prefix
 * of ours (an API may cut texts on storage), it is ours only when this API was seen to cut a text of
 * ours to that very length; it is another text when this API was seen to keep a text of ours at least
 * as long whole; otherwise nothing tells (`unsure`): "New message from Ann" may be another client's
 * text, or ours cut.
 */
function compareText(
	shown: unknown,
	sent: string | undefined,
	evidence?: TextEvidence,
): FieldVerdict {
	if (shown === undefined) return 'notShown';
	const wanted = (sent ?? '').trim();
	const got = typeof shown === 'string' ? shown.trim() : shown === null ? '' : undefined;
	if (got === undefined) return 'different';
	if (got === wanted) return 'same';
	if (!isCutOf(got, wanted)) return 'different';
	if (evidence?.cutLengths.includes(lengthOf(shown as string))) return 'same';
	if (evidence && evidence.longestWhole >= lengthOf(wanted)) return 'different';
	return 'unsure';
}

/** Digits of a fraction of a second in a written time: how precise it is, in ms (whole seconds: 1000). */
function precisionMs(written: string): number {
	const fraction = /T\d{2}:\d{2}:\d{2}[.,](\d+)/.exec(written)?.[1];
	return fraction === undefined ? 1000 : Math.max(1, 10 ** (3 - Math.min(3, fraction.length)));
}

/**
 * The scheduled time. A time shown: the same instant (the API may write it with another offset or
 * without milliseconds). Null: the send was not scheduled, which a send of ours with a scheduled time
 * is too when that time was already past on the API's clock when it registered it (the spec: "in the
 * past, the notification is sent immediately"; the record: "Null when the send was not scheduled").
 * So null is ours when ours was due at or before the send's creation time (the API's clock); not
 * ours when due after it, beyond that time's precision; in between, or without a creation time
 * (or one without a zone), nothing tells. A scheduled time without a zone is a wall time of some zone:
 * not ours when no zone's wall time of ours is that far from it, otherwise nothing tells.
 */
function compareSchedule(
	shown: unknown,
	sent: string | undefined,
	createdAt: unknown,
): FieldVerdict {
	if (shown === undefined) return 'notShown';
	if (shown === null || shown === '') {
		if (sent === undefined) return 'same';
		const createdMs = parseTime(createdAt);
		if (createdMs === undefined) return 'notShown';
		const dueMs = Date.parse(sent);
		if (dueMs <= createdMs) return 'same';
		return dueMs >= createdMs + precisionMs(createdAt as string) ? 'different' : 'unsure';
	}
	if (sent === undefined) return 'different';
	const shownTime = readApiTime(shown);
	// Ours always leaves with an explicit offset.
	const sentMs = Date.parse(sent);
	if (shownTime.kind === 'none') return 'notShown';
	if (shownTime.kind === 'withoutZone') {
		const { behindMs, aheadMs } = WALL_TIME_SPREAD;
		const fromSent = shownTime.wallMs - sentMs;
		return fromSent > -behindMs - 1000 && fromSent < aheadMs + 1000 ? 'unsure' : 'different';
	}
	return Math.abs(shownTime.ms - sentMs) < 1000 ? 'same' : 'different';
}

function sameSet(shown: string[], wanted: ReadonlySet<string>): boolean {
	const unique = new Set(shown);
	return unique.size === wanted.size && [...unique].every((userId) => wanted.has(userId));
}

/** Recipients from a listed send's `target_user_ids`. */
function compareTargets(shown: unknown, wanted: ReadonlySet<string>): FieldVerdict {
	if (!Array.isArray(shown)) return 'notShown';
	return sameSet(shown.map(String), wanted) ? 'same' : 'different';
}

/** Recipients from a detail: the users of its delivery entries, and its targeted-users counter.
 * Every recipient of the organization has at least one entry once the send went out; users of other
 * organizations have none, so fewer users than sent to cannot prove or disprove anything. */
export function compareDeliveries(
	deliveries: ReadonlyArray<{ user_id: string }>,
	targetedUsers: number | undefined,
	wanted: ReadonlySet<string>,
): FieldVerdict {
	if (targetedUsers !== undefined && targetedUsers > 0 && targetedUsers !== wanted.size)
		return 'different';
	if (deliveries.length === 0) return 'notShown';
	const users = new Set(deliveries.map((delivery) => String(delivery.user_id)));
	if ([...users].some((userId) => !wanted.has(userId))) return 'different';
	return users.size === wanted.size ? 'same' : 'notShown';
}

/** Compares a record the API shows with the request. `recipients` may be given when the record
 * itself does not carry them (a detail's deliveries). `seen`: what this API was seen to do with
 * texts of ours. */
export function compareSend(
	record: Record<string, unknown>,
	request: SendRequest,
	seen: SeenTexts,
	recipients?: FieldVerdict,
): Comparison {
	const wanted = new Set(request.target_user_ids);
	return {
		title: compareText(record.title, request.title, seen.title),
		body: compareText(record.body, request.body, seen.body),
		// Nothing is learned of links and ids: shown shorter, they cannot tell.
		imageUrl: compareText(record.image_url, request.image_url),
		deeplink: compareText(record.deeplink, request.deeplink),
		announcementId: compareText(record.announcement_id, request.announcement_id),
		scheduledAt: compareSchedule(record.scheduled_at, request.scheduled_at, record.created_at),
		recipients: recipients ?? compareTargets(record.target_user_ids, wanted),
	};
}

/** Two views of one send (the list entry and the detail): a field shown in either counts. */
export function combine(first: Comparison, second: Comparison): Comparison {
	const both = {} as Comparison;
	for (const field of Object.keys(first) as Array<keyof Comparison>) {
		const a = first[field];
		const b = second[field];
		const either = (verdict: FieldVerdict) => a === verdict || b === verdict;
		both[field] = either('different')
			? 'different'
			: either('same')
				? 'same'
				: either('unsure')
					? 'unsure'
					: 'notShown';
	}
	return both;
}

export function matchOf(comparison: Comparison, request: SendRequest): Match {
	const fields = Object.values(comparison);
	if (fields.includes('different')) return 'different';
	if (fields.includes('unsure')) return 'undecided';
	const required = REQUIRED.filter(
		(field) => field !== 'scheduledAt' || request.scheduled_at !== undefined,
	);
	return required.every((field) => comparison[field] === 'same') ? 'exact' : 'undecided';
}

/** What a comparison could not tell, in words for an "unknown" message: the fields not shown ("its
 * recipients") and those shown in a way that cannot tell ("only with a shorter title"). */
export function notTold(comparison: Comparison): string[] {
	const unsure: Partial<Record<keyof Comparison, string>> = {
		title:
			'only with a shorter title (and this API was never seen to cut a title of ours to that length)',
		body: 'only with a shorter body (and this API was never seen to cut a body of ours to that length)',
		imageUrl: 'only with a shorter image URL',
		deeplink: 'only with a shorter deeplink',
		announcementId: 'only with a shorter announcement id',
		scheduledAt:
			'only with a scheduled time that cannot tell (none, for a send made about when ours was due, or one written without a time zone)',
	};
	// Only the fields a send must show to count as ours keep it undecided when hidden.
	const hidden = notShown(comparison).filter((field) =>
		REQUIRED.some((required) => FIELD_NAMES[required] === field),
	);
	return [
		...(hidden.length > 0 ? [`the API does not show its ${hidden.join(', ')}`] : []),
		...(Object.keys(comparison) as Array<keyof Comparison>)
			.filter((field) => comparison[field] === 'unsure')
			.map((field) => unsure[field] ?? field),
	];
}

const FIELD_NAMES: Record<keyof Comparison, string> = {
	title: 'title',
	body: 'body',
	imageUrl: 'image',
	deeplink: 'deeplink',
	announcementId: 'announcement',
	scheduledAt: 'scheduled time',
	recipients: 'recipients',
};

/** The fields a comparison could not see, in words. */
function notShown(comparison: Comparison): string[] {
	return (Object.keys(comparison) as Array<keyof Comparison>)
		.filter((field) => comparison[field] === 'notShown')
		.map((field) => FIELD_NAMES[field]);
}
