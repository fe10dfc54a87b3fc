import { parseTime, timePrecisionMs } from '../../helpers/time';
import { credentialKey, processState } from '../../processState';
import type { PostInFlight, SendListing, UnresolvedSend } from '../../processState';
import type { CompanionPushContext } from '../http';
import type { SendRequest } from '../schemas';
import { isCutOf, lengthOf, NO_EVIDENCE } from './match';
import type { SeenTexts, TextEvidence } from './match';

/*
 * What this process knows of its own sends, per credential (see processState.ts):
 * - send owners: the id of every send it made or recovered lately, with its owner, the send it
 *   stands for (a batch of one execution, or an Idempotency Key, which copies of one event share);
 * - sends in flight: those whose answer has not come yet, with what they look like in the list;
 * - unresolved sends: those whose outcome stayed unknown, with what they look like;
 * - sent texts: the title and body of its sends, and what the list showed of them (TextEvidence): how
 *   this API stores the texts of our sends, learned from our own traffic;
 * - listings: when each of its sends went out and when a reading of the list first showed it: a send
 *   made after an answer was lost and since listed shows the list is current past that answer (a
 *   proof of absence a lookup takes), and how late this API lists our sends; and, from its creation
 *   time, how far ahead of n8n's clock the API's clock is at most, which places any send's creation
 *   time after a lost answer or not (the other proof).
 * A lookup after a lost answer takes no send owned by another owner, waits for the sends in flight
 * that look like its own before it decides, and takes no send exactly like an unresolved send of
 * another owner (it may be that one).
 */

/** Ids kept per credential; the oldest are forgotten first. A lookup looks at seconds to hours of
 * sends, far fewer than this. */
const OWNED_SENDS_LIMIT = 20_000;
/** Texts of own sends kept per credential: the evidence comes from those in the first pages of the
 * list, the newest. */
const SENT_TEXTS_LIMIT = 1_000;
/** Unresolved sends kept per credential; the oldest are forgotten first (a lookup only asks about
 * the last minutes). */
const UNRESOLVED_SENDS_LIMIT = 1_000;

/** The entry of `perCredential` for this credential, made when missing. */
function ofCredential<T>(
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
function setNewest<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
	map.delete(key);
	map.set(key, value);
	if (map.size > limit) map.delete(map.keys().next().value!);
}

/** A send of this process: its owner, what it sent (whose listing tells how the API stores texts),
 * and a moment before its request went out (`sentAt`; undefined when not known), so that its listing
 * tells how current the list is. */
export function recordOwner(
	context: CompanionPushContext,
	id: string,
	owner: string,
	request: SendRequest,
	sentAt?: number,
): void {
	setNewest(
		ofCredential(processState.sendOwners, context, () => new Map<string, string>()),
		id,
		owner,
		OWNED_SENDS_LIMIT,
	);
	const texts = ofCredential(
		processState.sentTexts,
		context,
		() => new Map<string, { title: string; body: string }>(),
	);
	setNewest(texts, id, { title: request.title, body: request.body }, SENT_TEXTS_LIMIT);
	const listings = ofCredential(
		processState.listings,
		context,
		() => new Map<string, SendListing>(),
	);
	if (!listings.has(id)) setNewest(listings, id, { sentAt }, SENT_TEXTS_LIMIT);
}

function learnText(evidence: TextEvidence, shown: unknown, sent: string): void {
	if (typeof shown !== 'string') return;
	const wanted = sent.trim();
	const got = shown.trim();
	if (got === wanted) evidence.longestWhole = Math.max(evidence.longestWhole, lengthOf(wanted));
	else if (isCutOf(got, wanted) && !evidence.cutLengths.includes(lengthOf(shown)))
		evidence.cutLengths.push(lengthOf(shown));
}

/** A send the list shows: when it is one of this process's, what it shows of its texts is evidence of
 * how this API stores them. */
export function learnFromListed(
	context: CompanionPushContext,
	listed: { id: string; title?: unknown; body?: unknown; created_at?: unknown },
): void {
	const listing = processState.listings.get(credentialKey(context))?.get(listed.id);
	if (listing && listing.listedAt === undefined) listing.listedAt = Date.now();
	if (listing?.sentAt !== undefined && listing.apiClockAheadAtMostMs === undefined) {
		const createdAt = parseTime(listed.created_at);
		const precision = timePrecisionMs(listed.created_at);
		if (createdAt !== undefined && precision !== undefined)
			listing.apiClockAheadAtMostMs = createdAt + precision - listing.sentAt;
	}
	const sent = processState.sentTexts.get(credentialKey(context))?.get(listed.id);
	if (!sent) return;
	const seen = ofCredential(
		processState.textEvidence,
		context,
		(): SeenTexts => ({
			title: { cutLengths: [], longestWhole: 0 },
			body: { cutLengths: [], longestWhole: 0 },
		}),
	);
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
	for (const listing of processState.listings.get(credentialKey(context))?.values() ?? []) {
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
	for (const { sentAt, apiClockAheadAtMostMs } of processState.listings
		.get(credentialKey(context))
		?.values() ?? []) {
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
	for (const { sentAt, listedAt, watched } of processState.listings
		.get(credentialKey(context))
		?.values() ?? []) {
		if (!watched || sentAt === undefined || listedAt === undefined) continue;
		longestMs = Math.max(longestMs, listedAt - sentAt);
		sends++;
	}
	return sends > 0 ? { longestMs, sends } : undefined;
}

/** What this process saw the API do with the texts of its sends (nothing yet: empty evidence). */
export function seenTexts(context: CompanionPushContext): SeenTexts {
	return processState.textEvidence.get(credentialKey(context)) ?? NO_EVIDENCE;
}

/** The owner of a send this process made or recovered, if any. */
export function ownerOfSend(context: CompanionPushContext, id: string): string | undefined {
	return processState.sendOwners.get(credentialKey(context))?.get(id);
}

/** What a send looks like when its recipients cannot be seen: every other field it carries. Two
 * sends that share it may be told apart only by their recipients. */
export function lookalikeOf(request: SendRequest): string {
	const { title, body, image_url, deeplink, scheduled_at, announcement_id } = request;
	return JSON.stringify([
		title.trim(),
		body.trim(),
		image_url ?? '',
		deeplink ?? '',
		scheduled_at ?? '',
		announcement_id ?? '',
	]);
}

/** Registers a send about to go out; call the returned function once its answer came (or not). */
export function sendInFlight(
	context: CompanionPushContext,
	request: SendRequest,
	owner: string,
): () => void {
	const key = credentialKey(context);
	const posts = ofCredential(processState.postsInFlight, context, () => new Set<PostInFlight>());
	let answered!: () => void;
	const post: PostInFlight = {
		lookalike: lookalikeOf(request),
		owner,
		answered: new Promise((resolve) => (answered = resolve)),
	};
	posts.add(post);
	return () => {
		posts.delete(post);
		if (posts.size === 0 && processState.postsInFlight.get(key) === posts)
			processState.postsInFlight.delete(key);
		answered();
	};
}

/** Waits until every send of this process in flight now that looks like `request` and stands for
 * another owner has its answer (and so, when accepted, its id is recorded). */
export async function lookalikesAnswered(
	context: CompanionPushContext,
	request: SendRequest,
	owner: string,
): Promise<void> {
	const lookalike = lookalikeOf(request);
	const pending = [...(processState.postsInFlight.get(credentialKey(context)) ?? [])].filter(
		(post) => post.owner !== owner && post.lookalike === lookalike,
	);
	await Promise.all(pending.map(async (post) => await post.answered));
}

function recipientsOf(request: SendRequest): string {
	return JSON.stringify([...new Set(request.target_user_ids)].sort());
}

/** The send of `owner` ended with its outcome unknown: it may be registered without an id held here. */
export function sendUnresolved(
	context: CompanionPushContext,
	request: SendRequest,
	owner: string,
): void {
	const unresolved = ofCredential(
		processState.unresolvedSends,
		context,
		() => new Map<string, UnresolvedSend>(),
	);
	setNewest(
		unresolved,
		owner,
		{ lookalike: lookalikeOf(request), recipients: recipientsOf(request), triedAt: Date.now() },
		UNRESOLVED_SENDS_LIMIT,
	);
}

/** The send of `owner` was accepted, found, or proven not sent. */
export function sendResolved(context: CompanionPushContext, owner: string): void {
	processState.unresolvedSends.get(credentialKey(context))?.delete(owner);
}

/** Whether a send of another owner exactly like `request` (recipients included) stayed unresolved,
 * tried since `since`: a send the list shows exactly like `request` may be that one. */
export function unresolvedLookalike(
	context: CompanionPushContext,
	request: SendRequest,
	owner: string,
	since: number,
): boolean {
	const lookalike = lookalikeOf(request);
	const recipients = recipientsOf(request);
	return [
		...(processState.unresolvedSends.get(credentialKey(context)) ??
			new Map<string, UnresolvedSend>()),
	].some(
		([other, send]) =>
			other !== owner &&
			send.lookalike === lookalike &&
			send.recipients === recipients &&
			send.triedAt >= since,
	);
}
