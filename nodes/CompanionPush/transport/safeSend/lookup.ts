import { sleep } from 'n8n-workflow';

import { isTimeWithoutZone, parseTime } from '../../helpers/time';
import { processState, timings } from '../../processState';
import { getNotification, listNotificationsPage } from '../endpoints';
import type { CompanionPushContext } from '../http';
import type { ListedNotification, SendListPage, SendRequest } from '../schemas';
import { combine, compareDeliveries, compareSend, matchOf, notTold } from './match';
import type { Comparison } from './match';
import {
	learnFromListed,
	lookalikesAnswered,
	ownerOfSend,
	seenTexts,
	unresolvedLookalike,
} from './registry';

/**
 * After a send whose answer was lost, finds out from the list of sends what became of it: exactly
 * that send, proven absent, or unknown. Never a guess:
 * - ours is a send that matches every field we sent that the API shows (title, body, recipients as
 *   a set, scheduled time; image, deeplink and announcement when shown; a detail read fills in what
 *   the list leaves out; see match.ts), created inside the window that starts at this send's first
 *   attempt and ends when its last attempt may have been out at the latest (both on the API's clock,
 *   from its Date header, with a margin; the end also gives the API the time the proof of absence
 *   gives it to register a send late), and not owned by another send of this process. When nothing
 *   tells when a first attempt may have been made (n8n's store of Idempotency Keys failed, and a key
 *   may be kept for any time), the window is the whole list; a send made after the window's end is
 *   another one, whatever it looks like;
 * - the list's own sends of this process teach how this API stores texts (registry.ts), before
 *   anything is compared;
 * - one such send, and nothing else that could be ours: found, unless another send of this process
 *   exactly like it stayed unresolved (its outcome unknown, so no id is recorded for it): that one may
 *   be the send listed, so the outcome is unknown;
 * - nothing that could be ours, seen twice `lookupSettleMs` apart, each time reading back past the
 *   window's start (or to the end of the list; for a whole-list window, to its end only): absent, so
 *   the caller may send;
 * - anything else (two candidates, a candidate whose recipients or time the API does not show, a
 *   list that repeats itself before reaching the window's start): unknown.
 * A creation time without a zone (see helpers/time.ts) places nothing: such a send is never ours by
 * time (a candidate it stays, so the outcome is unknown), and never shows the window passed (the list
 * is then read to its end to prove a send absent).
 */

export type LookupResult =
	| { kind: 'found'; id: string; status: string }
	| { kind: 'absent' }
	| { kind: 'unknown'; reason: string };

export interface Lookup {
	request: SendRequest;
	/** The send this one stands for (see registry.ts): sends owned by others are never ours. */
	owner: string;
	/** When the first attempt of this send started, on n8n's clock; undefined when it cannot be told,
	 * so the whole list is the window. */
	firstAttemptAt: number | undefined;
	/** When its last attempt may have been out at the latest, on n8n's clock; undefined when nothing
	 * bounds it (the window then has no end). */
	lastAttemptEndedAt: number | undefined;
	itemIndex?: number;
}

const PAGE_SIZE = 100;
/** Pages read back at most (a window of seconds is one page; a claim from hours ago, a few): a
 * reading that stops there proves nothing absent. */
const MAX_PAGES = 30;
/** Detail reads at most for candidates the list does not show well enough. */
const MAX_DETAILS = 10;
/** How much earlier than the first attempt a send of ours may carry as its creation time: the
 * Date header counts whole seconds, and the API may stamp a send before it reads all of it. */
const MARGIN_WITH_SERVER_CLOCK_MS = 5_000;
/** Without a Date header the API's clock is unknown: a wider window, where more sends may look
 * like ours (and so the outcome is more often unknown, never guessed). */
const MARGIN_WITHOUT_SERVER_CLOCK_MS = 10 * 60_000;

interface Candidate {
	listed: ListedNotification;
}

/** Why a candidate that matches cannot be placed in the window, in words for an "unknown" message. */
const NO_CREATION_TIME = 'the API does not show its creation time';
const CREATION_TIME_WITHOUT_ZONE =
	"the API writes its creation time without a time zone, so nothing tells whether it was made before this send's first try";

/** One reading of the list back to the window's start: what could be ours, and whether the reading
 * got there. */
interface Reading {
	candidates: Candidate[];
	/** Why the reading stopped before the window's start or the list's end, if it did. */
	cutShort?: string;
	windowStart: number;
	windowEnd: number;
}

/** A page of the list read after `notBefore` (n8n's clock): one that another lookup of this run
 * started reading after that moment, or a new read. */
async function pageReadAfter(
	context: CompanionPushContext,
	skip: number,
	notBefore: number,
	itemIndex?: number,
): Promise<SendListPage> {
	let pages = processState.listPagesRead.get(context);
	if (!pages) processState.listPagesRead.set(context, (pages = new Map()));
	const shared = pages.get(skip);
	if (shared && shared.startedAt >= notBefore) return await shared.page;
	const read = {
		startedAt: Date.now(),
		page: listNotificationsPage(context, skip, PAGE_SIZE, itemIndex),
	};
	pages.set(skip, read);
	read.page.catch(() => pages.get(skip) === read && pages.delete(skip));
	return await read.page;
}

/**
 * The window on the API's clock (`serverTimeMs`, the Date header of a page; n8n's clock when the API
 * gives none, with a wider margin). It starts at the first attempt; it ends when the last attempt may
 * have been out at the latest, plus the time the proof of absence gives the API to register a send
 * late (a send registered later than that would pass that proof unseen anyway).
 */
function windowOf(
	lookup: Lookup,
	serverTimeMs: number | undefined,
): { windowStart: number; windowEnd: number } {
	const { firstAttemptAt, lastAttemptEndedAt } = lookup;
	const [offset, margin] =
		serverTimeMs !== undefined
			? [serverTimeMs - Date.now(), MARGIN_WITH_SERVER_CLOCK_MS]
			: [0, MARGIN_WITHOUT_SERVER_CLOCK_MS];
	return {
		windowStart: firstAttemptAt === undefined ? -Infinity : firstAttemptAt + offset - margin,
		windowEnd:
			lastAttemptEndedAt === undefined
				? Infinity
				: lastAttemptEndedAt + offset + margin + timings().lookupSettleMs,
	};
}

async function readBackToWindow(
	context: CompanionPushContext,
	lookup: Lookup,
	notBefore: number,
): Promise<Reading> {
	const seen = new Set<string>();
	const candidates: Candidate[] = [];
	let timesWithoutZone = false;
	let window: { windowStart: number; windowEnd: number } | undefined;
	let skip = 0;
	let pagesWithNothingNew = 0;
	for (let pages = 1; ; pages++) {
		const page = await pageReadAfter(context, skip, notBefore, lookup.itemIndex);
		window ??= windowOf(lookup, page.serverTimeMs);
		const { windowStart, windowEnd } = window;
		if (page.items.length === 0) return { candidates, ...window };
		for (const send of page.items) learnFromListed(context, send);
		const fresh = page.items.filter((send) => !seen.has(send.id));
		// Nothing new: sends listed since the last page pushed those already read down to this one
		// (newest first), or the API ignores skip. Read on; a second page in a row with nothing new
		// is the same page again.
		pagesWithNothingNew = fresh.length === 0 ? pagesWithNothingNew + 1 : 0;
		if (pagesWithNothingNew >= 2)
			return {
				candidates,
				...window,
				cutShort: 'the list of sends showed the same page again (it ignores paging)',
			};
		let passedWindow = false;
		for (const send of fresh) {
			seen.add(send.id);
			const createdAt = parseTime(send.created_at);
			if (createdAt !== undefined && createdAt < windowStart) passedWindow = true;
			// Made after the window's end: another send, whatever it looks like.
			else if (createdAt === undefined || createdAt <= windowEnd) {
				candidates.push({ listed: send });
				timesWithoutZone ||= isTimeWithoutZone(send.created_at);
			}
		}
		// A page without creation times: its oldest send's detail tells whether the window is passed
		// (not when the list writes them without a zone: the detail writes them the same way).
		if (
			windowStart > -Infinity &&
			!passedWindow &&
			fresh.length > 0 &&
			fresh.every(
				(send) => parseTime(send.created_at) === undefined && !isTimeWithoutZone(send.created_at),
			)
		) {
			const oldest = await getNotification(context, fresh[fresh.length - 1].id, lookup.itemIndex);
			const createdAt = parseTime(oldest.notification.created_at);
			passedWindow = createdAt !== undefined && createdAt < windowStart;
		}
		if (passedWindow) return { candidates, ...window };
		skip += page.items.length;
		// The end of the list: every send it counts was seen (pages read prove nothing if skip is ignored).
		if (page.total !== undefined && seen.size >= page.total) return { candidates, ...window };
		if (pages >= MAX_PAGES) {
			const notReached =
				windowStart === -Infinity
					? 'its end'
					: timesWithoutZone
						? 'its end (it writes creation times without a time zone, so they cannot show where the first try was)'
						: 'the time of the first try';
			return {
				candidates,
				...window,
				cutShort: `the list of sends could not be read to ${notReached} (${seen.size} sends in ${pages} pages were read)`,
			};
		}
	}
}

type Decision = LookupResult | { kind: 'none' };

/** Which candidates are ours: those the list shows well enough, and the others after a detail read. */
async function decide(
	context: CompanionPushContext,
	lookup: Lookup,
	reading: Reading,
): Promise<Decision> {
	// A send of this process still waiting for its answer may be among the candidates: its id is
	// known (recorded) once the answer comes.
	await lookalikesAnswered(context, lookup.request, lookup.owner);
	const wanted = new Set(lookup.request.target_user_ids);
	const seen = seenTexts(context);
	const exact: Candidate[] = [];
	/** `placedBy`: why its creation time does not place it in the window, when it does not. */
	const undecided: Array<Candidate & { comparison: Comparison; placedBy?: string }> = [];
	let detailsRead = 0;
	for (const candidate of reading.candidates) {
		const owner = ownerOfSend(context, candidate.listed.id);
		if (owner !== undefined && owner !== lookup.owner) continue;
		let comparison = compareSend(candidate.listed, lookup.request, seen);
		let createdAt = parseTime(candidate.listed.created_at);
		let withoutZone = isTimeWithoutZone(candidate.listed.created_at);
		let match = matchOf(comparison, lookup.request);
		if (match === 'different') continue;
		if ((match === 'undecided' || createdAt === undefined) && detailsRead < MAX_DETAILS) {
			detailsRead++;
			const detail = await getNotification(context, candidate.listed.id, lookup.itemIndex);
			const record = detail.notification;
			const recipients = compareDeliveries(detail.deliveries, record.stats?.targeted_users, wanted);
			comparison = combine(comparison, compareSend(record, lookup.request, seen, recipients));
			createdAt ??= parseTime(record.created_at);
			withoutZone ||= isTimeWithoutZone(record.created_at);
			if (
				createdAt !== undefined &&
				(createdAt < reading.windowStart || createdAt > reading.windowEnd)
			)
				continue;
			match = matchOf(comparison, lookup.request);
			if (match === 'different') continue;
			candidate.listed = { ...candidate.listed, status: candidate.listed.status ?? record.status };
		}
		if (match === 'exact' && createdAt !== undefined) exact.push(candidate);
		else if (createdAt !== undefined) undecided.push({ ...candidate, comparison });
		else {
			const placedBy = withoutZone ? CREATION_TIME_WITHOUT_ZONE : NO_CREATION_TIME;
			undecided.push({ ...candidate, comparison, placedBy });
		}
	}
	if (exact.length === 1 && undecided.length === 0) {
		const { id, status } = exact[0].listed;
		const since =
			lookup.firstAttemptAt === undefined
				? -Infinity
				: lookup.firstAttemptAt - MARGIN_WITHOUT_SERVER_CLOCK_MS;
		if (unresolvedLookalike(context, lookup.request, lookup.owner, since)) {
			return {
				kind: 'unknown',
				reason: `the list holds a send exactly like it (${id}), which may be another send of this process whose outcome stayed unknown`,
			};
		}
		return { kind: 'found', id, status: status ?? 'sending' };
	}
	if (exact.length === 0 && undecided.length === 0) return { kind: 'none' };
	const ids = [...exact, ...undecided].map((candidate) => candidate.listed.id);
	const shown = (ids.length > 5 ? [...ids.slice(0, 5), `and ${ids.length - 5} more`] : ids).join(
		', ',
	);
	if (exact.length > 1)
		return {
			kind: 'unknown',
			reason: `${exact.length} sends in the list match it exactly (${shown})`,
		};
	const untold = [
		...new Set([
			...undecided.flatMap((candidate) => notTold(candidate.comparison)),
			...undecided.flatMap((candidate) => candidate.placedBy ?? []),
		]),
	];
	const why = untold.length > 0 ? untold.join('; ') : NO_CREATION_TIME;
	return {
		kind: 'unknown',
		reason: `the list holds a send that could be it, but ${why} (${shown})`,
	};
}

/** Readings of the list that must each show nothing like the send before it counts as absent. */
const READINGS_FOR_ABSENT = 2;

/** The lookup described at the top. Errors of the list or detail reads are thrown. */
export async function lookUpSend(
	context: CompanionPushContext,
	lookup: Lookup,
): Promise<LookupResult> {
	let notBefore = Date.now();
	for (let readings = 1; ; readings++) {
		const reading = await readBackToWindow(context, lookup, notBefore);
		const decision = await decide(context, lookup, reading);
		if (decision.kind !== 'none') return decision;
		if (reading.cutShort)
			return {
				kind: 'unknown',
				reason: `nothing in the list of sends looks like it, but ${reading.cutShort}`,
			};
		if (readings === READINGS_FOR_ABSENT) return { kind: 'absent' };
		// Absent once: the API may still register it, and its list may show it late.
		notBefore = Date.now() + timings().lookupSettleMs;
		await sleep(timings().lookupSettleMs);
	}
}
