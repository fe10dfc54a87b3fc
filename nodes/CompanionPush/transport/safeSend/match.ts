import { parseTime, readApiTime, WALL_TIME_SPREAD } from '../../common/time';
import type { SendRequest } from '../schemas';

/**
 * Whether a send the API shows (an element of the list of sends, or a send's detail record) is the
 * send of a request, field by field: the same, different (proven), or it cannot tell. Pure: no call,
 * no clock; what the API was seen to do with our own texts (TextEvidence) is given. "Not ours" needs
 * proof as strong as "ours": a difference the spec lets the API make (surrounding space, a cut
 * counted in code points or UTF-16 units, the case of user IDs, recipients outside the organization
 * shown or counted or not, fields left out of the list, whose body is "not shown") proves nothing; a
 * canceled send is never the one looked for. The detail shows recipients only through its delivery
 * entries, once the send went out.
 */

/** `unsure`: shown, but what is shown cannot tell (a shorter text, with no evidence that this API cuts
 * texts; no scheduled time, for a send made about when ours was due; a scheduled time without a zone
 * that some zone's wall time of ours would read as). */
export type FieldVerdict = 'same' | 'different' | 'notShown' | 'unsure';

/** The fields that must be shown the same before a send counts as ours: without them two sends
 * with the same text (a daily message, one message per user) cannot be told apart, nor a canceled
 * send from ours. */
const REQUIRED = ['state', 'title', 'body', 'recipients', 'scheduledAt'] as const;

export interface Comparison {
	/** Its status: `different` when canceled, `same` when any other. */
	state: FieldVerdict;
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
 * where it cut them, counted both ways an API may count (the spec's enforced lengths are "not
 * shown"): code points and UTF-16 units. Nothing seen: all empty. */
export interface TextEvidence {
	/** The lengths (code points, as shown, an ellipsis included) of texts of ours it showed cut short. */
	cutLengths: number[];
	/** The same lengths in UTF-16 units. */
	cutUnits: number[];
}

/** Evidence on titles and bodies, learned from the list of sends. */
export interface SeenTexts {
	title: TextEvidence;
	body: TextEvidence;
}

/** Evidence of nothing, to fill in as the list shows sends of ours (learnText). */
export function noEvidence(): SeenTexts {
	const none = () => ({ cutLengths: [], cutUnits: [] });
	return { title: none(), body: none() };
}

export const NO_EVIDENCE: SeenTexts = noEvidence();

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

/** What the list showed of a text of ours (`sent`): the length it was cut to, both counts. */
export function learnText(evidence: TextEvidence, shown: unknown, sent: string): void {
	if (typeof shown !== 'string') return;
	if (isCutOf(shown.trim(), sent.trim())) {
		if (!evidence.cutLengths.includes(lengthOf(shown))) evidence.cutLengths.push(lengthOf(shown));
		if (!evidence.cutUnits.includes(shown.length)) evidence.cutUnits.push(shown.length);
	}
}

/** Whether `shown`, a cut of `wanted`, has a length this API was seen to cut ours to, counted either
 * way; a cut by UTF-16 units inside an emoji may also have dropped the half it kept (one unit less). */
function cutAsSeen(shown: string, wanted: string, evidence: TextEvidence): boolean {
	if (evidence.cutLengths.includes(lengthOf(shown)) || evidence.cutUnits.includes(shown.length))
		return true;
	const kept = shown.trim();
	const next = wanted.startsWith(kept) ? wanted.charCodeAt(kept.length) : NaN;
	return next >= 0xd800 && next <= 0xdbff && evidence.cutUnits.includes(shown.length + 1);
}

/**
 * A text as the API shows it ("As sent"): the same once surrounding white space is trimmed. Shorter,
 * as a prefix of ours (the spec: "Enforced maximum lengths of title and body: not shown", nor how they
 * count), ours only where this API was seen to cut a text of ours to that length, in either count;
 * otherwise nothing tells (`unsure`): "New message from Ann" may be another client's text, or ours
 * cut. Texts kept whole before prove nothing: an API's limit may change between two sends (a
 * deployment, a setting), and a limit lowered since would make ours look like another's text.
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
	if (!evidence) return 'unsure';
	if (cutAsSeen(shown as string, wanted, evidence)) return 'same';
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

/** A user ID as compared: the spec says nothing of case, so an API may show ours in another case. */
function idKey(userId: unknown): string {
	return String(userId).trim().toLowerCase();
}

/** Users a send shows against ours: one that is not ours proves another send; all of ours, ours;
 * only some of ours, nothing (IDs outside the organization "do not receive", so an API may leave
 * them out). */
function compareUsers(shown: Iterable<unknown>, wanted: ReadonlySet<string>): FieldVerdict {
	const users = new Set([...shown].map(idKey));
	const ours = new Set([...wanted].map(idKey));
	if ([...users].some((userId) => !ours.has(userId))) return 'different';
	if (users.size === ours.size) return 'same';
	return users.size === 0 ? 'notShown' : 'unsure';
}

/** Recipients from a detail: the users of its delivery entries (one entry at least per recipient of
 * the organization, once the send went out), and its targeted-users counter: "Users in the recipient
 * list", which an API may count with or without those outside the organization, so only more users
 * than ours prove another send. */
export function compareDeliveries(
	deliveries: ReadonlyArray<{ user_id: string }>,
	targetedUsers: number | undefined,
	wanted: ReadonlySet<string>,
): FieldVerdict {
	if (targetedUsers !== undefined && targetedUsers > wanted.size) return 'different';
	return compareUsers(
		deliveries.map((delivery) => delivery.user_id),
		wanted,
	);
}

/** Canceled "before sending": nothing went out, so it is never the send looked for. */
const stateOf = (status: unknown): FieldVerdict =>
	typeof status !== 'string' ? 'notShown' : status === 'canceled' ? 'different' : 'same';

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
	const targets = record.target_user_ids;
	return {
		state: stateOf(record.status),
		title: compareText(record.title, request.title, seen.title),
		body: compareText(record.body, request.body, seen.body),
		// Nothing is learned of links and ids: shown shorter, they cannot tell.
		imageUrl: compareText(record.image_url, request.image_url),
		deeplink: compareText(record.deeplink, request.deeplink),
		announcementId: compareText(record.announcement_id, request.announcement_id),
		scheduledAt: compareSchedule(record.scheduled_at, request.scheduled_at, record.created_at),
		recipients: recipients ?? (Array.isArray(targets) ? compareUsers(targets, wanted) : 'notShown'),
	};
}

const VERDICTS_FIRST_WINS: FieldVerdict[] = ['different', 'same', 'unsure'];

/** Two views of one send (the list entry and the detail): a field shown in either counts. */
export function combine(first: Comparison, second: Comparison): Comparison {
	const both = {} as Comparison;
	for (const field of Object.keys(first) as Array<keyof Comparison>) {
		const a = first[field];
		const b = second[field];
		const either = (verdict: FieldVerdict) => a === verdict || b === verdict;
		both[field] = VERDICTS_FIRST_WINS.find(either) ?? 'notShown';
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
		recipients:
			'only with some of its recipients (this API may leave out, or not count, users outside the organization)',
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
	state: 'status',
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
