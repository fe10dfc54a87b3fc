import { isTimeWithoutZone, parseTime, timePrecisionMs } from '../../common/time';
import { timings } from '../../common/timings';
import { getNotification, listNotificationsPage } from '../endpoints';
import type { CompanionPushContext } from '../http';
import type { ListedNotification, SendListPage, SendRequest } from '../schemas';
import {
	apiClockSeenSince,
	DATE_HEADER_PRECISION_MS,
	learnFromListed,
	noteApiClock,
} from './listings';
import type { ClockSpan } from './listings';

/*
 * One reading of the list of sends for a lookup (lookup.ts): newest first, back to the start of the
 * lookup's window on the API's clock, collecting the sends that could be ours by their creation
 * time. Lookups of one node run share the pages they read (listPagesRead).
 */

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
/** How much earlier than the first attempt a send of ours may carry as its creation time: the
 * Date header counts whole seconds, and the API may stamp a send before it reads all of it. */
const MARGIN_WITH_SERVER_CLOCK_MS = 5_000;
/** Without a Date header the API's clock is unknown: a wider window, where more sends may look
 * like ours (and so the outcome is more often unknown, never guessed). */
export const MARGIN_WITHOUT_SERVER_CLOCK_MS = 10 * 60_000;

/** A creation time as the API wrote it, read once, so that whatever decides from it agrees. */
interface CreationTime {
	/** Where it places the send on the API's clock; undefined when nowhere. */
	createdAt: number | undefined;
	/** Written without a time zone: shown, but placing nothing. */
	createdAtWithoutZone: boolean;
}

export function creationTimeOf(value: unknown): CreationTime {
	return { createdAt: parseTime(value), createdAtWithoutZone: isTimeWithoutZone(value) };
}

/** A listed send that could be ours, with its creation time as the list wrote it. */
export interface Candidate extends CreationTime {
	listed: ListedNotification;
}

/** One reading of the list back to the window's start: what could be ours, and whether the reading
 * got there. */
export interface Reading {
	candidates: Candidate[];
	/** Why the reading stopped before the window's start or the list's end, if it did. */
	cutShort?: string;
	windowStart: number;
	windowEnd: number;
	/** The latest creation time (with a zone) of the sends read, less its precision: a send the API
	 * made this late on its clock, at least, was listed. */
	newestCreatedAtLeast?: number;
	/** How far ahead of n8n's clock the API's clock was at most when the reading began, from its
	 * first page's Date header (whole seconds, so plus 1 s, less the moment the request went out). */
	apiClockAheadAtMostByDate?: number;
}

/** Process memory: the pages of the list of sends lookups of a node run read lately (by the run's
 * context, forgotten with it), with when each read started: lookups that need a page read after a
 * given moment share it (fifty lookups after one outage read each page once a round). Per run. */
let listPagesRead = new WeakMap<
	object,
	Map<number, { startedAt: number; page: Promise<SendListPage> }>
>();

/** Tests: forgets the pages read. */
export function resetListPagesRead(): void {
	listPagesRead = new WeakMap();
}

/** A page of the list read after `notBefore` (n8n's clock): one that another lookup of this run
 * started reading after that moment, or a new read. */
async function pageReadAfter(
	context: CompanionPushContext,
	skip: number,
	notBefore: number,
	itemIndex?: number,
): Promise<{ page: SendListPage; startedAt: number }> {
	let pages = listPagesRead.get(context);
	if (!pages) listPagesRead.set(context, (pages = new Map()));
	const shared = pages.get(skip);
	if (shared && shared.startedAt >= notBefore)
		return { page: await shared.page, startedAt: shared.startedAt };
	const startedAt = Date.now();
	const read = {
		startedAt,
		page: listNotificationsPage(context, skip, PAGE_SIZE, itemIndex).then((page) => {
			noteApiClock(context, page.serverTimeMs, startedAt);
			return page;
		}),
	};
	pages.set(skip, read);
	read.page.catch(() => pages.get(skip) === read && pages.delete(skip));
	return { page: await read.page, startedAt: read.startedAt };
}

/**
 * The window on the API's clock (`serverTimeMs`, the Date header of a page; n8n's clock when the API
 * gives none, with a wider margin). It starts at the first attempt; it ends when the last attempt may
 * have been out at the latest, plus the time the proof of absence gives the API to register a send
 * late (a send registered later than that would pass that proof unseen anyway). The offset of the
 * header holds for attempts made moments ago; for older ones, the API's clock may have been stepped
 * since (`seen`: the offsets its answers showed since the first attempt): each offset seen that
 * differs from it beyond the margin widens the window its way, so that a send stamped by the clock
 * as it was then still falls inside.
 */
function windowOf(
	lookup: Lookup,
	serverTimeMs: number | undefined,
	seen: ClockSpan[],
): { windowStart: number; windowEnd: number } {
	const { firstAttemptAt, lastAttemptEndedAt } = lookup;
	const [offset, margin] =
		serverTimeMs !== undefined
			? [serverTimeMs - Date.now(), MARGIN_WITH_SERVER_CLOCK_MS]
			: [0, MARGIN_WITHOUT_SERVER_CLOCK_MS];
	let [lowest, highest] = [offset, offset];
	for (const span of seen) {
		if (span.aheadAtMostMs < offset - margin) lowest = Math.min(lowest, span.aheadAtLeastMs);
		if (span.aheadAtLeastMs > offset + margin) highest = Math.max(highest, span.aheadAtMostMs);
	}
	return {
		windowStart: firstAttemptAt === undefined ? -Infinity : firstAttemptAt + lowest - margin,
		windowEnd:
			lastAttemptEndedAt === undefined
				? Infinity
				: lastAttemptEndedAt + highest + margin + timings().lookupSettleMs,
	};
}

export async function readBackToWindow(
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
	let newestCreatedAtLeast: number | undefined;
	let apiClockAheadAtMostByDate: number | undefined;
	const read = () => ({ candidates, ...window!, newestCreatedAtLeast, apiClockAheadAtMostByDate });
	for (let pages = 1; ; pages++) {
		const { page, startedAt } = await pageReadAfter(context, skip, notBefore, lookup.itemIndex);
		if (window === undefined && page.serverTimeMs !== undefined)
			apiClockAheadAtMostByDate = page.serverTimeMs + DATE_HEADER_PRECISION_MS - startedAt;
		window ??= windowOf(
			lookup,
			page.serverTimeMs,
			apiClockSeenSince(context, lookup.firstAttemptAt),
		);
		const { windowStart, windowEnd } = window;
		if (page.items.length === 0) return read();
		for (const send of page.items) learnFromListed(context, send);
		const fresh = page.items.filter((send) => !seen.has(send.id));
		// Nothing new: sends listed since the last page pushed those already read down to this one
		// (newest first), or the API ignores skip. Read on; a second page in a row with nothing new
		// is the same page again.
		pagesWithNothingNew = fresh.length === 0 ? pagesWithNothingNew + 1 : 0;
		if (pagesWithNothingNew >= 2)
			return {
				...read(),
				cutShort: 'the list of sends showed the same page again (it ignores paging)',
			};
		let passedWindow = false;
		const freshWithTimes = fresh.map((send) => ({
			listed: send,
			...creationTimeOf(send.created_at),
		}));
		for (const entry of freshWithTimes) {
			const { listed: send, createdAt } = entry;
			seen.add(send.id);
			if (createdAt !== undefined) {
				const atLeast = createdAt - (timePrecisionMs(send.created_at) ?? 0);
				newestCreatedAtLeast = Math.max(newestCreatedAtLeast ?? atLeast, atLeast);
			}
			if (createdAt !== undefined && createdAt < windowStart) passedWindow = true;
			// Made after the window's end: another send, whatever it looks like.
			else if (createdAt === undefined || createdAt <= windowEnd) {
				candidates.push(entry);
				timesWithoutZone ||= entry.createdAtWithoutZone;
			}
		}
		// A page without creation times: its oldest send's detail tells whether the window is passed
		// (not when the list writes them without a zone: the detail writes them the same way).
		if (
			windowStart > -Infinity &&
			!passedWindow &&
			freshWithTimes.length > 0 &&
			freshWithTimes.every((send) => send.createdAt === undefined && !send.createdAtWithoutZone)
		) {
			const oldest = await getNotification(
				context,
				freshWithTimes[freshWithTimes.length - 1].listed.id,
				lookup.itemIndex,
			);
			const createdAt = parseTime(oldest.notification.created_at);
			passedWindow = createdAt !== undefined && createdAt < windowStart;
		}
		if (passedWindow) return read();
		skip += page.items.length;
		// The end of the list: every send it counts was seen (pages read prove nothing if skip is ignored).
		if (page.total !== undefined && seen.size >= page.total) return read();
		if (pages >= MAX_PAGES) {
			const notReached =
				windowStart === -Infinity
					? 'its end'
					: timesWithoutZone
						? 'its end (it writes creation times without a time zone, so they cannot show where the first try was)'
						: 'the time of the first try';
			return {
				...read(),
				cutShort: `the list of sends could not be read to ${notReached} (${seen.size} sends in ${pages} pages were read)`,
			};
		}
	}
}
