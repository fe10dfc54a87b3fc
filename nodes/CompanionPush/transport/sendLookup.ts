import { credentialKey, processState } from '../processState';
import { getNotification, listNotifications } from './endpoints';
import type { CompanionPushContext } from './http';
import type { ListedNotification } from './schemas';
import type { SendRequest } from './send';

// Sends this process made or recovered lately, per credential (processState.knownSendIds): a lookup
// after a lost answer must never claim one of them (an identical send of an earlier item) as its
// own. Bounded, oldest forgotten first.
const KNOWN_SEND_IDS_LIMIT = 10_000;

export function rememberSendId(context: CompanionPushContext, id: string): void {
	const key = credentialKey(context);
	const known = processState.knownSendIds.get(key) ?? new Set<string>();
	processState.knownSendIds.set(key, known);
	known.add(id);
	if (known.size > KNOWN_SEND_IDS_LIMIT) known.delete(known.values().next().value!);
}

function isKnownSendId(context: CompanionPushContext, id: string): boolean {
	return processState.knownSendIds.get(credentialKey(context))?.has(id) === true;
}

/** Margin for the time a request spends in flight, on the server's own clock. */
const LOOKUP_MARGIN_MS = 5_000;

function sameRecipients(listed: string[], wanted: Set<string>): boolean {
	const unique = new Set(listed);
	return unique.size === wanted.size && [...unique].every((userId) => wanted.has(userId));
}

/**
 * After a send whose outcome is unknown (no answer, or 5xx), looks in the list of sends for one
 * registered since the first try: same title, same body, same recipients (from the list when it
 * shows them, otherwise the targeted-users counter of the send's detail), not created by an
 * earlier item. Returns it, or undefined when it is certainly not there.
 */
export async function findRegisteredSend(
	context: CompanionPushContext,
	request: SendRequest,
	firstTryStartedAt: number,
	itemIndex?: number,
): Promise<ListedNotification | undefined> {
	const wanted = new Set(request.target_user_ids);
	const candidates: ListedNotification[] = [];
	await listNotifications(context, {
		itemIndex,
		stopWhen: (send, page) => {
			const elapsed = Date.now() - firstTryStartedAt;
			const windowStart =
				page.serverTimeMs !== undefined
					? page.serverTimeMs - elapsed - LOOKUP_MARGIN_MS
					: Date.now() - elapsed - 60_000; // no server clock: allow for clock skew
			const createdAt = Date.parse(String(send.created_at ?? ''));
			if (!Number.isNaN(createdAt) && createdAt < windowStart) return true; // newest first: done
			if (!isKnownSendId(context, send.id) && send.title === request.title && send.body === request.body) {
				candidates.push(send);
			}
			return false;
		},
	});
	// Oldest candidate first: the first try is the earliest send that could be ours.
	for (const candidate of candidates.reverse()) {
		if (candidate.target_user_ids) {
			if (sameRecipients(candidate.target_user_ids, wanted)) return candidate;
			continue;
		}
		const detail = await getNotification(context, candidate.id, itemIndex);
		if (detail.notification.stats?.targeted_users === wanted.size) return candidate;
	}
	return undefined;
}
