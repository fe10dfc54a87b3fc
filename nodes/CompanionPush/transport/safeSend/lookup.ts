import { timings, waitFor } from '../../common/timings';
import { getNotification } from '../endpoints';
import type { CompanionPushContext } from '../http';
import { isRetryableStatus } from '../retry';
import { creationTimeOf, MARGIN_WITHOUT_SERVER_CLOCK_MS, readBackToWindow } from './listReading';
import type { Candidate, Lookup, Reading } from './listReading';
import { combine, compareDeliveries, compareSend, matchOf, notTold } from './match';
import type { Comparison } from './match';
import { apiClockAheadAtMost, listLagSeen, seenTexts, watchSendsMadeSince } from './listings';
import { probeTheList } from './probe';
import { lookalikesAnswered, ownerOfSend, unresolvedLookalike } from './registry';

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
 * - the list's own sends of this process teach how this API stores texts (listings.ts), before
 *   anything is compared;
 * - one such send, and nothing else that could be ours: found, unless another send of this process
 *   exactly like it stayed unresolved (its outcome unknown, so no id is recorded for it): that one may
 *   be the send listed, so the outcome is unknown;
 * - nothing that could be ours in a reading back past the window's start (or to the end of the
 *   list; for a whole-list window, to its end only) that started after the list showed a send made
 *   after the answer was lost: absent, so the caller may send. Such a send reached the API after
 *   ours did, if ours did, so a list that shows it shows ours. It is either a send this process
 *   started after the loss, or any send (another client's too) whose creation time is later than
 *   the loss on the API's clock: the loss's moment plus how far ahead the API's clock is at most,
 *   the larger of two bounds (from the newest own send listed with a zoned creation time, see
 *   listings.ts, and from the reading's Date header), each creation time taken at the precision
 *   the API writes it with. The reading that decides also starts
 *   `lookupSettleMs` after the loss at least (an API may register a send a moment after it
 *   answered 5xx for it). No such send listed within `lookupEvidenceWaitMs` of the lookup's start
 *   (or of the going out of a send of this process made after the loss and not listed yet):
 *   unknown (a quiet organization, a list lagging longer than that). How late this API lists sends
 *   is measured and quoted, never taken as proof: a lag grows when the API is loaded;
 * - anything else (two candidates, a candidate whose recipients or time the API does not show, a
 *   list that repeats itself before reaching the window's start): unknown.
 * A creation time without a zone (see common/time.ts) places nothing: such a send is never ours by
 * time (a candidate it stays, so the outcome is unknown), and never shows the window passed (the list
 * is then read to its end to prove a send absent).
 */

export type LookupResult =
	| { kind: 'found'; id: string; status: string }
	| { kind: 'absent' }
	| { kind: 'unknown'; reason: string };

/** Detail reads at most for candidates the list does not show well enough. */
const MAX_DETAILS = 10;
/** Why a candidate that matches cannot be placed in the window, in words for an "unknown" message. */
const NO_CREATION_TIME = 'the API does not show its creation time';
const CREATION_TIME_WITHOUT_ZONE =
	"the API writes its creation time without a time zone, so nothing tells whether it was made before this send's first try";

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
		let { createdAt, createdAtWithoutZone: withoutZone } = candidate;
		let match = matchOf(comparison, lookup.request);
		if (match === 'different') continue;
		if ((match === 'undecided' || createdAt === undefined) && detailsRead < MAX_DETAILS) {
			detailsRead++;
			const detail = await getNotification(context, candidate.listed.id, lookup.itemIndex);
			const record = detail.notification;
			const recipients = compareDeliveries(detail.deliveries, record.stats?.targeted_users, wanted);
			comparison = combine(comparison, compareSend(record, lookup.request, seen, recipients));
			const detailTime = creationTimeOf(record.created_at);
			createdAt ??= detailTime.createdAt;
			withoutZone ||= detailTime.createdAtWithoutZone;
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

/** Readings of the list per `lookupSettleMs` while a lookup waits for its send or for evidence. */
const READINGS_WHILE_SETTLING = 5;

function seconds(ms: number): string {
	return `${(ms / 1000).toFixed(1)} s`;
}

/** Why a list that shows nothing like the send cannot prove it absent, in words. */
function notProvenCurrent(
	context: CompanionPushContext,
	waitedMs: number,
	newestUnlistedSentAt: number | undefined,
): string {
	const lag = listLagSeen(context);
	const measured = lag
		? `this API listed ${lag.sends} send(s) of this process up to ${seconds(lag.longestMs)} late`
		: 'this process has not yet seen how late this API lists its sends';
	const others =
		apiClockAheadAtMost(context) === undefined
			? "no other send can be placed after it: the API's clock is not known yet (no send of this process listed with a creation time that has a time zone)"
			: "nor any other send made after it by its creation time, on the API's clock as this process's sends and the list's Date header place it";
	const laterSends =
		newestUnlistedSentAt === undefined
			? `no send of this process made after it was listed within ${seconds(waitedMs)}, ${others}`
			: `the sends this process made after it were not listed yet, ${seconds(Date.now() - newestUnlistedSentAt)} after the last went out, ${others}`;
	return `nothing in the list of sends looks like it, but nothing shows the list is up to date: ${laterSends} (${measured})`;
}

/** A failure that may pass: no answer at all (a network code), 429 or 5xx. Any other answer (403,
 * a body of another shape) would come again the same way. */
function mayPass(error: unknown): boolean {
	const { httpCode, errorResponse } = error as { httpCode?: unknown; errorResponse?: unknown };
	const status = Number(httpCode ?? NaN);
	if (!Number.isNaN(status)) return isRetryableStatus(status);
	const code = (errorResponse as { code?: unknown } | undefined)?.code;
	// UNKNOWN_ERROR: an error that is no answer and names no network code (see http/answers.ts), perhaps a
	// fault of this package or of n8n: it would come again.
	return typeof code === 'string' && code !== '' && code !== 'UNKNOWN_ERROR';
}

/** The lookup described at the top. Errors of the list or detail reads are thrown, those that may
 * pass only once the wait for evidence is over. */
export async function lookUpSend(
	context: CompanionPushContext,
	lookup: Lookup,
): Promise<LookupResult> {
	const startedAt = Date.now();
	// The answer was lost by this moment (n8n's clock): the API registered the send, if at all,
	// before it, and a send this process starts from then on reaches the API after it. A claim
	// another run left may bound its attempts by a lease still running: the claim's protocol has
	// found that run gone, so its attempts ended by now.
	const lostBy = Math.min(lookup.lastAttemptEndedAt ?? startedAt, startedAt);
	const { lookupSettleMs, lookupEvidenceWaitMs } = timings();
	let readingStartedAt = startedAt;
	/** When a reading first showed a send made after the loss: any reading started since shows ours. */
	let evidenceSeenAt: number | undefined;
	for (;;) {
		const read = await readBackToWindow(context, lookup, readingStartedAt)
			.then(async (reading) => ({ reading, decision: await decide(context, lookup, reading) }))
			.catch((error: unknown) => ({ failure: error }));
		if ('failure' in read) {
			// A reading that failed on the way (after the transport's own retries) showed nothing and
			// proves nothing either way: read again while the wait for evidence lasts, then give up.
			if (!mayPass(read.failure) || Date.now() - startedAt >= lookupEvidenceWaitMs)
				throw read.failure;
			const waitMs = lookupSettleMs / READINGS_WHILE_SETTLING;
			readingStartedAt = Date.now() + waitMs;
			await waitFor(waitMs);
			continue;
		}
		const { reading, decision } = read;
		if (decision.kind !== 'none') return decision;
		if (reading.cutShort)
			return {
				kind: 'unknown',
				reason: `nothing in the list of sends looks like it, but ${reading.cutShort}`,
			};
		const now = Date.now();
		// A send of this process made after the loss, listed (by this or another reading).
		const { firstListedAt, newestUnlistedSentAt } = watchSendsMadeSince(context, lostBy);
		if (firstListedAt !== undefined)
			evidenceSeenAt = Math.min(evidenceSeenAt ?? now, firstListedAt);
		// Any send the API made after the loss on its clock, listed in this reading. The API's clock is
		// bounded twice, from the newest own send listed and from this reading's Date header: the
		// larger bound holds if either does (a clock stepped since that send; a Date header written
		// by another machine than the one that stamps the sends).
		const bySends = apiClockAheadAtMost(context);
		const byDate = reading.apiClockAheadAtMostByDate;
		const aheadAtMost =
			bySends === undefined || byDate === undefined ? undefined : Math.max(bySends, byDate);
		if (
			aheadAtMost !== undefined &&
			reading.newestCreatedAtLeast !== undefined &&
			reading.newestCreatedAtLeast > lostBy + aheadAtMost
		)
			evidenceSeenAt = Math.min(evidenceSeenAt ?? now, now);
		// Shown up to date before this reading started: this reading would have shown ours, if the
		// API had registered it by then. An API may register a send a moment after it answered 5xx
		// for it, so the reading that decides also starts a settle wait after the loss.
		const settled = readingStartedAt - lostBy >= lookupSettleMs;
		if (evidenceSeenAt !== undefined && evidenceSeenAt <= readingStartedAt && settled)
			return { kind: 'absent' };
		// Nothing shows it yet, nor is on its way: make the evidence, a send to nobody (probe.ts).
		const probed =
			evidenceSeenAt === undefined && settled && (await probeTheList(context, lookup, lostBy));
		// A send of this process made after the loss, accepted and not listed yet, is waited for as
		// long again after it went out.
		const evidenceOnItsWay =
			newestUnlistedSentAt !== undefined && now - newestUnlistedSentAt < lookupEvidenceWaitMs;
		if (
			evidenceSeenAt === undefined &&
			!evidenceOnItsWay &&
			now - startedAt >= lookupEvidenceWaitMs
		)
			return {
				kind: 'unknown',
				reason: notProvenCurrent(context, now - lostBy, newestUnlistedSentAt),
			};
		// Evidence seen: the next reading, started after it and the settle wait, decides.
		const waitMs =
			evidenceSeenAt !== undefined
				? Math.max(0, lostBy + lookupSettleMs - now)
				: probed
					? 0 // a probe just accepted: read at once
					: lookupSettleMs / READINGS_WHILE_SETTLING;
		readingStartedAt = now + waitMs;
		await waitFor(waitMs);
	}
}
