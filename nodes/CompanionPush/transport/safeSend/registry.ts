import { credentialKey, processState } from '../../processState';
import type { PostInFlight, UnresolvedSend } from '../../processState';
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
 *   this API stores the texts of our sends, learned from our own traffic.
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

/** A send of this process: its owner, and what it sent (whose listing tells how the API stores texts). */
export function recordOwner(
	context: CompanionPushContext,
	id: string,
	owner: string,
	request: SendRequest,
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
	listed: { id: string; title?: unknown; body?: unknown },
): void {
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
