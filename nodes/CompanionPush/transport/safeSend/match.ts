import type { SendRequest } from '../schemas';

/**
 * Whether a send the API shows (an element of the list of sends, or a send's detail record) is the
 * send of a request, field by field. Pure: no call, no clock.
 *
 * Each field the request defines is `same`, `different`, or `notShown` (the record does not carry
 * it). The list's body is not part of the API's documented contract, so any field may be missing
 * from it; the detail record carries title, body, image, deeplink, scheduled time and creation time,
 * and the recipients only through its delivery entries (one per phone, or one `no_device` entry per
 * user without an active app) once the send was dispatched.
 */

export type FieldVerdict = 'same' | 'different' | 'notShown';

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

/** A text as the API may store it: surrounding white space trimmed, or cut (with or without an
 * ellipsis). A cut text still matches, since it is no contradiction; other fields must then tell. */
function compareText(shown: unknown, sent: string | undefined): FieldVerdict {
	if (shown === undefined) return 'notShown';
	const wanted = (sent ?? '').trim();
	const got = typeof shown === 'string' ? shown.trim() : shown === null ? '' : undefined;
	if (got === undefined) return 'different';
	if (got === wanted) return 'same';
	const cut = got.replace(/(…|\.\.\.)$/, '').trimEnd();
	return cut.length > 0 && cut.length < wanted.length && wanted.startsWith(cut) ? 'same' : 'different';
}

/** The same instant (the API may write it with another offset or without milliseconds). */
function compareTime(shown: unknown, sent: string | undefined): FieldVerdict {
	if (shown === undefined) return 'notShown';
	if (shown === null || shown === '') return sent === undefined ? 'same' : 'different';
	if (sent === undefined) return 'different';
	const shownMs = Date.parse(String(shown));
	const sentMs = Date.parse(sent);
	if (Number.isNaN(shownMs)) return 'notShown';
	return Math.abs(shownMs - sentMs) < 1000 ? 'same' : 'different';
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
	if (targetedUsers !== undefined && targetedUsers > 0 && targetedUsers !== wanted.size) return 'different';
	if (deliveries.length === 0) return 'notShown';
	const users = new Set(deliveries.map((delivery) => String(delivery.user_id)));
	if ([...users].some((userId) => !wanted.has(userId))) return 'different';
	return users.size === wanted.size ? 'same' : 'notShown';
}

/** Compares a record the API shows with the request. `recipients` may be given when the record
 * itself does not carry them (a detail's deliveries). */
export function compareSend(record: Record<string, unknown>, request: SendRequest, recipients?: FieldVerdict): Comparison {
	const wanted = new Set(request.target_user_ids);
	return {
		title: compareText(record.title, request.title),
		body: compareText(record.body, request.body),
		imageUrl: compareText(record.image_url, request.image_url),
		deeplink: compareText(record.deeplink, request.deeplink),
		announcementId: compareText(record.announcement_id, request.announcement_id),
		scheduledAt: compareTime(record.scheduled_at, request.scheduled_at),
		recipients: recipients ?? compareTargets(record.target_user_ids, wanted),
	};
}

/** Two views of one send (the list entry and the detail): a field shown in either counts. */
export function combine(first: Comparison, second: Comparison): Comparison {
	const both = {} as Comparison;
	for (const field of Object.keys(first) as Array<keyof Comparison>) {
		const a = first[field];
		const b = second[field];
		both[field] = a === 'different' || b === 'different' ? 'different' : a === 'same' || b === 'same' ? 'same' : 'notShown';
	}
	return both;
}

export function matchOf(comparison: Comparison, request: SendRequest): Match {
	const fields = Object.values(comparison);
	if (fields.includes('different')) return 'different';
	const required = REQUIRED.filter((field) => field !== 'scheduledAt' || request.scheduled_at !== undefined);
	return required.every((field) => comparison[field] === 'same') ? 'exact' : 'undecided';
}

/** The fields a comparison could not see, in words for an "unknown" message. */
export function notShown(comparison: Comparison): string[] {
	const names: Record<keyof Comparison, string> = {
		title: 'title',
		body: 'body',
		imageUrl: 'image',
		deeplink: 'deeplink',
		announcementId: 'announcement',
		scheduledAt: 'scheduled time',
		recipients: 'recipients',
	};
	return (Object.keys(comparison) as Array<keyof Comparison>).filter((field) => comparison[field] === 'notShown').map((field) => names[field]);
}
