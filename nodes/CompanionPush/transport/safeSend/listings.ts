import { parseTime, timePrecisionMs } from '../../common/time';
import { credentialKey } from '../http';
import type { CompanionPushContext } from '../http';
import type { SendRequest } from '../schemas';
import { learnText, NO_EVIDENCE, noEvidence } from './match';
import type { SeenTexts } from './match';

/*
 * What the list of sends showed of this process's own sends, per credential:
 * - sent texts: the title and body of its sends, and what the list showed of them (TextEvidence): how
 *   this API stores the texts of our sends, learned from our own traffic;
 * - listings: when each of its sends went out and when a reading of the list first showed it: a send
 *   made after an answer was lost and since listed shows the list is current past that answer (a
 *   proof of absence a lookup takes), and how late this API lists our sends; and, from its creation
 *   time, how far ahead of n8n's clock the API's clock is at most, which places any send's creation
 *   time after a lost answer or not (the other proof).
 *
 * Process memory (per process; a restart empties it), bounded, oldest forgotten first:
 * | piece | what it holds | why it is safe with several processes |
 * |---|---|---|
 * | sentTexts | the title and body of the sends this process made or recovered lately, by id: what the list shows of them tells how this API stores texts | only this process's own sends are compared with what it sent |
 * | textEvidence | what the list showed of those texts: the lengths this API cut them to; a shorter text in the list counts as ours cut only at a length it was seen to cut ours to (match.ts) | each process learns from its own sends; one that has seen none yet reports a shorter text as "unknown" |
 * | apiClockSeen | the API's clock as the Date headers of its answers showed it against n8n's, as spans of time over which it kept one offset (a new span where it was stepped): a lookup places an earlier attempt's window by every offset seen since that attempt, not by today's only | each process places the API's clock from its own answers; a process that saw none since an attempt (another process's claim) places it by the reading's Date header |
 * | listings | when each send this process made lately went out, when a reading of the list first showed it, and how far ahead of n8n's clock its creation time puts the API's clock at most: what a lookup after a lost answer takes as proof that the list is current past that answer (lookup.ts): a send of this process made after it and since listed, or any send listed whose creation time is later than the answer's loss on the API's clock; and how late this API lists sends (quoted, never decisive) | each process bounds the API's clock and the list's currency from its own sends only; another process's sends count as sends listed, placed by their creation time; without a bound of its own a lookup waits for its own evidence, then ends "unknown" |
 */

/** When a send of this process went out and when the list first showed it (n8n's clock). */
interface SendListing {
	/** A moment before its request went out (it went out then or later); undefined when that is not
	 * known (a send found after a lost answer), so it proves nothing about the list. */
	sentAt: number | undefined;
	/** When a reading of the list first showed it; undefined until then. */
	listedAt?: number;
	/** Whether lookups read the list for it while it was not listed yet: then `listedAt` measures how
	 * late the API listed it. */
	watched?: boolean;
	/** Once listed with a creation time that has a zone: how far ahead of n8n's clock the API's clock
	 * was at most (its creation time, plus the precision the API writes it with, minus `sentAt`: the
	 * API registered it after its request went out). */
	apiClockAheadAtMostMs?: number;
}

/** Per credential, by send id. */
let sentTexts = new Map<string, Map<string, { title: string; body: string }>>();
/** Per credential, by send id. */
let listings = new Map<string, Map<string, SendListing>>();
let textEvidence = new Map<string, SeenTexts>();
/** Per credential, oldest first. */
let apiClockSeen = new Map<string, ClockSpan[]>();

/** Tests: forgets every listing and text. */
export function resetListings(): void {
	sentTexts = new Map();
	listings = new Map();
	textEvidence = new Map();
	apiClockSeen = new Map();
	clockForgottenUntil = new Map();
}

/** Texts of own sends kept per credential: the evidence comes from those in the first pages of the
 * list, the newest. */
const SENT_TEXTS_LIMIT = 1_000;

/** The entry of `perCredential` for this credential, made when missing. */
export function ofCredential<T>(
	perCredential: Map<string, T>,
	context: CompanionPushContext,
	make: () => T,
): T {
	const key = credentialKey(context);
	let value = perCredential.get(key);
	if (value === undefined) perCredential.set(key, (value = make()));
	return value;
}

/** Sets `key` as the newest entry of `map`; beyond `limit` entries, the oldest goes. */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
	map.delete(key);
	map.set(key, value);
	if (map.size > limit) map.delete(map.keys().next().value!);
}

/** A send of this process, with what it sent (whose listing tells how the API stores texts) and a
 * moment before its request went out (`sentAt`; undefined when not known), so that its listing tells
 * how current the list is. */
export function recordListing(
	context: CompanionPushContext,
	id: string,
	request: SendRequest,
	sentAt: number | undefined,
): void {
	const texts = ofCredential(
		sentTexts,
		context,
		() => new Map<string, { title: string; body: string }>(),
	);
	setNewest(texts, id, { title: request.title, body: request.body }, SENT_TEXTS_LIMIT);
	const ofThisCredential = ofCredential(listings, context, () => new Map<string, SendListing>());
	if (!ofThisCredential.has(id)) setNewest(ofThisCredential, id, { sentAt }, SENT_TEXTS_LIMIT);
}

/** A send the list shows: when it is one of this process's, what it shows of its texts is evidence of
 * how this API stores them. */
export function learnFromListed(
	context: CompanionPushContext,
	listed: { id: string; title?: unknown; body?: unknown; created_at?: unknown },
): void {
	const listing = listings.get(credentialKey(context))?.get(listed.id);
	if (listing && listing.listedAt === undefined) listing.listedAt = Date.now();
	if (listing?.sentAt !== undefined && listing.apiClockAheadAtMostMs === undefined) {
		const createdAt = parseTime(listed.created_at);
		const precision = timePrecisionMs(listed.created_at);
		if (createdAt !== undefined && precision !== undefined)
			listing.apiClockAheadAtMostMs = createdAt + precision - listing.sentAt;
	}
	const sent = sentTexts.get(credentialKey(context))?.get(listed.id);
	if (!sent) return;
	const seen = ofCredential(textEvidence, context, noEvidence);
	learnText(seen.title, listed.title, sent.title);
	learnText(seen.body, listed.body, sent.body);
}

/**
 * What the sends of this process made at `since` or later (n8n's clock) show of the list: when a
 * reading first showed one of them, and when the newest of those not listed yet went out. A send
 * whose answer was lost before `since` was registered, if at all, before those reached the API: a
 * list that shows one of them shows it too, in any reading started after (lookup.ts). Those not
 * listed yet are watched from now on: readings look for them, so how late they are listed is
 * measured (listLagSeen).
 */
export function watchSendsMadeSince(
	context: CompanionPushContext,
	since: number,
): { firstListedAt?: number; newestUnlistedSentAt?: number } {
	let firstListedAt: number | undefined;
	let newestUnlistedSentAt: number | undefined;
	for (const listing of listings.get(credentialKey(context))?.values() ?? []) {
		const { sentAt, listedAt } = listing;
		if (sentAt === undefined || sentAt < since) continue;
		if (listedAt !== undefined) firstListedAt = Math.min(firstListedAt ?? listedAt, listedAt);
		else {
			listing.watched = true;
			newestUnlistedSentAt = Math.max(newestUnlistedSentAt ?? sentAt, sentAt);
		}
	}
	return { firstListedAt, newestUnlistedSentAt };
}

/**
 * How far ahead of n8n's clock the API's clock is at most (negative: behind), from the newest send
 * of this process listed with a creation time that has a zone: the API registered it after its
 * request went out. The newest, so that clocks drifting apart since older sends do not count;
 * undefined when no such send was listed yet (then no creation time is placed on n8n's clock).
 */
export function apiClockAheadAtMost(context: CompanionPushContext): number | undefined {
	let newestSentAt = -Infinity;
	let aheadAtMostMs: number | undefined;
	for (const { sentAt, apiClockAheadAtMostMs } of listings.get(credentialKey(context))?.values() ??
		[]) {
		if (sentAt === undefined || apiClockAheadAtMostMs === undefined || sentAt < newestSentAt)
			continue;
		newestSentAt = sentAt;
		aheadAtMostMs = apiClockAheadAtMostMs;
	}
	return aheadAtMostMs;
}

/** How late this API listed the sends of this process that lookups watched (at most, and how many);
 * undefined when none was measured yet. Each figure may be up to a reading interval too high. */
export function listLagSeen(
	context: CompanionPushContext,
): { longestMs: number; sends: number } | undefined {
	let longestMs = 0;
	let sends = 0;
	for (const { sentAt, listedAt, watched } of listings.get(credentialKey(context))?.values() ??
		[]) {
		if (!watched || sentAt === undefined || listedAt === undefined) continue;
		longestMs = Math.max(longestMs, listedAt - sentAt);
		sends++;
	}
	return sends > 0 ? { longestMs, sends } : undefined;
}

/** What this process saw the API do with the texts of its sends (nothing yet: empty evidence). */
export function seenTexts(context: CompanionPushContext): SeenTexts {
	return textEvidence.get(credentialKey(context)) ?? NO_EVIDENCE;
}

/** A span of n8n's clock over which the API's answers showed one offset of its clock: how far ahead
 * of n8n's it was at least and at most (negative: behind). */
export interface ClockSpan {
	from: number;
	to: number;
	aheadAtLeastMs: number;
	aheadAtMostMs: number;
}

/** A Date header counts whole seconds: the API's clock was up to this much later. */
export const DATE_HEADER_PRECISION_MS = 1_000;
/** Spans kept per credential (a new one only where the API's clock was stepped). Beyond it the
 * oldest are forgotten, and an attempt they covered may have seen any offset (UNKNOWN_OFFSETS). */
export const CLOCK_SPANS_LIMIT = 1_000;
/** Until when (n8n's clock) forgotten spans reached, per credential. */
let clockForgottenUntil = new Map<string, number>();
/** What an attempt made while forgotten spans held may have seen of the API's clock: anything. */
const UNKNOWN_OFFSETS: ClockSpan[] = [
	{ from: -Infinity, to: Infinity, aheadAtLeastMs: -Infinity, aheadAtMostMs: -Infinity },
	{ from: -Infinity, to: Infinity, aheadAtLeastMs: Infinity, aheadAtMostMs: Infinity },
];

/** An answer's Date header (`serverTimeMs`, undefined when it had none), for a request that went out
 * at `requestStartedAt` or later and was answered by now (n8n's clock). */
export function noteApiClock(
	context: CompanionPushContext,
	serverTimeMs: number | undefined,
	requestStartedAt: number,
): void {
	if (serverTimeMs === undefined) return;
	const answeredAt = Date.now();
	const seen: ClockSpan = {
		from: answeredAt,
		to: answeredAt,
		aheadAtLeastMs: serverTimeMs - answeredAt,
		aheadAtMostMs: serverTimeMs + DATE_HEADER_PRECISION_MS - requestStartedAt,
	};
	const spans = ofCredential(apiClockSeen, context, (): ClockSpan[] => []);
	const last = spans[spans.length - 1];
	// The same offset as the last span, as far as the headers tell: that span lasted until now.
	if (
		last &&
		seen.aheadAtLeastMs <= last.aheadAtMostMs &&
		seen.aheadAtMostMs >= last.aheadAtLeastMs
	) {
		last.to = Math.max(last.to, answeredAt);
		last.aheadAtLeastMs = Math.min(last.aheadAtLeastMs, seen.aheadAtLeastMs);
		last.aheadAtMostMs = Math.max(last.aheadAtMostMs, seen.aheadAtMostMs);
		return;
	}
	spans.push(seen);
	if (spans.length > CLOCK_SPANS_LIMIT)
		clockForgottenUntil.set(credentialKey(context), spans.shift()!.to);
}

/** The offsets of the API's clock its answers showed from `since` on (n8n's clock): what its clock
 * may have been while an attempt made then was out. Every span kept when `since` is undefined. */
export function apiClockSeenSince(
	context: CompanionPushContext,
	since: number | undefined,
): ClockSpan[] {
	const spans = apiClockSeen.get(credentialKey(context)) ?? [];
	const forgottenUntil = clockForgottenUntil.get(credentialKey(context));
	// Forgotten spans since the attempt: its window cannot be placed, so it spans the whole list.
	if (forgottenUntil !== undefined && (since === undefined || forgottenUntil >= since))
		return [...spans, ...UNKNOWN_OFFSETS];
	return since === undefined ? [...spans] : spans.filter((span) => span.to >= since);
}
