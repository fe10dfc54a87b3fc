import { credentialKey } from '../http';
import type { CompanionPushContext } from '../http';
import type { SendRequest } from '../schemas';
import { ofCredential, recordListing, setNewest } from './listings';

/*
 * What this process knows of its own sends, per credential:
 * - send owners: the id of every send it made or recovered lately, with its owner, the send it
 *   stands for (a batch of one execution, or an Idempotency Key, which copies of one event share);
 * - sends in flight: those whose answer has not come yet, with what they look like in the list;
 * - unresolved sends: those whose outcome stayed unknown, with what they look like.
 * (What the list showed of them: listings.ts.)
 * A lookup after a lost answer takes no send owned by another owner, waits for the sends in flight
 * that look like its own before it decides, and takes no send exactly like an unresolved send of
 * another owner (it may be that one).
 *
 * Process memory (per process; a restart empties it):
 * | piece | what it holds | why it is safe with several processes |
 * |---|---|---|
 * | sendOwners | ids of sends this process made or recovered lately, with the send each stands for (its owner); bounded, oldest forgotten first: a lookup after a lost answer never takes a send of another owner for its own | a send of another process is told apart by its content and creation time (lookup.ts); where it cannot be, the outcome is unknown |
 * | postsInFlight | the sends of this process whose answer has not come yet, with their content: a lookup waits for those that look like its own before it decides, so a sibling's send is never taken for its own before the sibling learns its id | only this process's sends have answers still to come here |
 * | unresolvedSends | the sends of this process whose outcome stayed unknown lately, with their content (bounded, oldest forgotten first): a send exactly like one of them that another send's lookup finds may be that one, so it proves nothing (the outcome is unknown) | a send of another process is told apart by its content and creation time only; where it cannot be, the outcome is unknown |
 */

/** A send of this process whose answer has not come yet. */
interface PostInFlight {
	/** Its content but the recipients (lookalikeOf). */
	lookalike: string;
	owner: string;
	answered: Promise<void>;
}

/** A send of this process whose outcome stayed unknown: it may be registered, and no id is held for it. */
interface UnresolvedSend {
	/** Its content but the recipients, and its recipients. */
	lookalike: string;
	recipients: string;
	/** When it was last tried (n8n's clock). */
	triedAt: number;
}

/** Per credential, by send id. */
let sendOwners = new Map<string, Map<string, string>>();
let postsInFlight = new Map<string, Set<PostInFlight>>();
/** Per credential, by owner. */
let unresolvedSends = new Map<string, Map<string, UnresolvedSend>>();

/** Tests: forgets every send of this process. */
export function resetSendRegistry(): void {
	sendOwners = new Map();
	postsInFlight = new Map();
	unresolvedSends = new Map();
}

/** Ids kept per credential; the oldest are forgotten first. A lookup looks at seconds to hours of
 * sends, far fewer than this. */
const OWNED_SENDS_LIMIT = 20_000;
/** Unresolved sends kept per credential; the oldest are forgotten first (a lookup only asks about
 * the last minutes). */
const UNRESOLVED_SENDS_LIMIT = 1_000;

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
		ofCredential(sendOwners, context, () => new Map<string, string>()),
		id,
		owner,
		OWNED_SENDS_LIMIT,
	);
	recordListing(context, id, request, sentAt);
}

/** The owner of a send this process made or recovered, if any. */
export function ownerOfSend(context: CompanionPushContext, id: string): string | undefined {
	return sendOwners.get(credentialKey(context))?.get(id);
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
	const posts = ofCredential(postsInFlight, context, () => new Set<PostInFlight>());
	let answered!: () => void;
	const post: PostInFlight = {
		lookalike: lookalikeOf(request),
		owner,
		answered: new Promise((resolve) => (answered = resolve)),
	};
	posts.add(post);
	return () => {
		posts.delete(post);
		if (posts.size === 0 && postsInFlight.get(key) === posts) postsInFlight.delete(key);
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
	const pending = [...(postsInFlight.get(credentialKey(context)) ?? [])].filter(
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
		unresolvedSends,
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
	unresolvedSends.get(credentialKey(context))?.delete(owner);
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
		...(unresolvedSends.get(credentialKey(context)) ?? new Map<string, UnresolvedSend>()),
	].some(
		([other, send]) =>
			other !== owner &&
			send.lookalike === lookalike &&
			send.recipients === recipients &&
			send.triedAt >= since,
	);
}
