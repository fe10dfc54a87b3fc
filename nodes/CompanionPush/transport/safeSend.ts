import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { JsonObject } from 'n8n-workflow';

import { oneAtATime } from '../helpers/oneAtATime';
import { listNotifications, getNotification } from './endpoints';
import { nodeApiError, unexpectedResponse } from './errors';
import { credentialKey, readJson } from './request';
import type { CompanionPushContext } from './request';
import { withRetries } from './retry';
import { sendAcceptedSchema } from './schemas';
import type { ListedNotification } from './schemas';

/** The body of POST /push-notification/send, as the spec names its fields. `tenant_id` has no
 * place here: the organization comes from the credential. */
export interface SendRequest {
	title: string;
	body: string;
	target_user_ids: string[];
	image_url?: string;
	deeplink?: string;
	scheduled_at?: string;
	announcement_id?: string;
}

export interface SendOutcome {
	id: string;
	status: string;
	/** Set when the answer was lost and the send was found registered in the list instead. */
	recoveredAfter?: string;
	/** How many times the request went out (the extra ones never reached the service). */
	attempts: number;
}

// Sends this process created lately, per credential: a lookup after a lost answer must never claim
// one of them (an identical send of an earlier item) as its own. Bounded, oldest forgotten first.
// Process memory (see "What lives in process memory" in request.ts).
const knownSendIds = new Map<string, Set<string>>();
const KNOWN_SEND_IDS_LIMIT = 10_000;
function rememberSendId(context: CompanionPushContext, id: string) {
	const key = credentialKey(context);
	const known = knownSendIds.get(key) ?? new Set<string>();
	knownSendIds.set(key, known);
	known.add(id);
	if (known.size > KNOWN_SEND_IDS_LIMIT) known.delete(known.values().next().value!);
}
function isKnownSendId(context: CompanionPushContext, id: string): boolean {
	return knownSendIds.get(credentialKey(context))?.has(id) === true;
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
async function findRegisteredSend(
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

function outcomeUnknown(context: CompanionPushContext, reason: string, itemIndex?: number): NodeApiError {
	return nodeApiError(context.getNode(), { reason } as JsonObject, {
		message: `Sending the notification: the outcome is unknown (${reason}), so it was not sent again`,
		description:
			'The API may or may not have registered the send, and repeating it could notify people twice. Check the list of sends (Notification > Get Many) before running this item again.',
		itemIndex,
	});
}

/**
 * Sends a notification so that nobody is notified twice and no send is lost unreported:
 * - 2xx: accepted; never sent again, whatever follows. When its body cannot be read, the id is
 *   looked up in the list of sends as below; not found there, the error says it was accepted.
 * - 401: the transport takes a token saved since, or renews it, and tries again (a 401 registers
 *   nothing; see exchange in request.ts).
 * - The token cannot be renewed: nothing left. A refused renewal is an error at once; an
 *   unreachable token endpoint is waited for and tried again like a 429.
 * - 429: nothing was registered; waits (Retry-After, or backoff) and tries again.
 * - 400, 403, 404, 409, 422: an error for the workflow, not repeated.
 * - 5xx or no answer (reset, timeout): the outcome is unknown, so the list of sends is read
 *   first (see findRegisteredSend). Found: that send is the result. Certainly absent: sent again.
 *   The list cannot be read: an error, nothing re-sent.
 * At most RETRY_POLICY.maxAttempts requests in all.
 */
export async function sendNotification(
	context: CompanionPushContext,
	request: SendRequest,
	itemIndex?: number,
	options: SendOptions = {},
): Promise<SendOutcome> {
	// Identical sends (same title, body, recipients) of this process go one at a time: a lookup after
	// a lost answer must never take a sibling in flight for its own (its id is not known yet).
	const sameSend = JSON.stringify([credentialKey(context), request.title, request.body, [...request.target_user_ids].sort()]);
	return await oneAtATime(identicalSends, sameSend, async () => await sendOnce(context, request, itemIndex, options));
}

const identicalSends = new Map<string, Promise<unknown>>();

async function sendOnce(context: CompanionPushContext, request: SendRequest, itemIndex: number | undefined, options: SendOptions): Promise<SendOutcome> {
	const action = 'Sending the notification';
	const firstTryStartedAt = options.lookUpSince ?? Date.now();
	const call = { method: 'POST' as const, path: '/push-notification/send', body: { ...request }, action, itemIndex };
	const found = (registered: ListedNotification, recoveredAfter: string, attempts: number) => {
		rememberSendId(context, registered.id);
		return { id: registered.id, status: registered.status ?? 'sending', recoveredAfter, attempts };
	};
	if (options.lookUpSince !== undefined) {
		// An earlier try of this send lost its answer: it may be registered, so look before sending.
		let registered: ListedNotification | undefined;
		try {
			registered = await findRegisteredSend(context, request, firstTryStartedAt, itemIndex);
		} catch {
			throw tagged(outcomeUnknown(context, 'an earlier try lost its answer, and the list of sends could not be read', itemIndex), 'unknown');
		}
		if (registered) return found(registered, options.lookUpReason ?? 'an earlier try whose answer was lost', 0);
	}
	// Whether a request may have reached the service without us learning its id: then an error
	// at the end leaves the outcome unknown, not "not sent".
	let mayBeRegistered = false;
	try {
		return await withRetries<SendOutcome>(
			context,
			call,
			async (answer, attempt) => {
				if (answer.kind === 'answer' && answer.status >= 200 && answer.status < 300) {
					const json = readJson(answer.body);
					const accepted = json.ok ? sendAcceptedSchema.safeParse(json.value) : undefined;
					if (accepted?.success) {
						rememberSendId(context, accepted.data.data.id);
						return { result: { id: accepted.data.data.id, status: accepted.data.data.status, attempts: attempt } };
					}
					// Accepted, but the id is unreadable (a body cut short, say): it must not be sent again.
					// The list of sends can still tell its id; if it cannot, the error says it was accepted.
					mayBeRegistered = true;
					const registered = await findRegisteredSend(context, request, firstTryStartedAt, itemIndex).catch(() => undefined);
					if (registered) return { result: found(registered, 'an unreadable 202 answer', attempt) };
					throw unexpectedResponse(context.getNode(), `${action} (accepted, not re-sent)`, answer.redact(answer.body), itemIndex);
				}
				const lostAnswer = answer.kind === 'noAnswer' ? answer.code : answer.status >= 500 ? `HTTP ${answer.status}` : undefined;
				if (lostAnswer === undefined) return answer.kind === 'answer' && answer.status === 429 ? 'retry' : 'fail';
				mayBeRegistered = true;
				let registered: ListedNotification | undefined;
				try {
					registered = await findRegisteredSend(context, request, firstTryStartedAt, itemIndex);
				} catch {
					throw outcomeUnknown(context, `${lostAnswer}, and the list of sends could not be read`, itemIndex);
				}
				if (registered) return { result: found(registered, lostAnswer, attempt) };
				// Certainly not registered (yet): the next try may send it.
				mayBeRegistered = false;
				return 'retry';
			},
			'The send was not registered (checked in the list of sends): retry later.',
		);
	} catch (error) {
		throw tagged(error, mayBeRegistered || options.lookUpSince !== undefined ? 'unknown' : 'notSent');
	}
}

export interface SendOptions {
	/** An earlier try of this very send (an earlier node try or execution) lost its answer at this
	 * time: the list of sends is read from then on before anything is sent. */
	lookUpSince?: number;
	/** Why the list is searched first, for `recoveredAfter`. */
	lookUpReason?: string;
}

/** What a failed send left behind, in `error.context.sendOutcome`: `notSent` (certainly nothing
 * registered: a refusal, a 429 or a renewal that never let it leave, or a lost answer the list then
 * proved absent) or `unknown` (it may be registered). */
export type FailedSendOutcome = 'notSent' | 'unknown';

function tagged(error: unknown, outcome: FailedSendOutcome): unknown {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) error.context.sendOutcome = outcome;
	return error;
}

/** The outcome a send error carries (see FailedSendOutcome); `unknown` when it carries none. */
export function failedSendOutcome(error: unknown): FailedSendOutcome {
	const outcome = (error as { context?: { sendOutcome?: unknown } })?.context?.sendOutcome;
	return outcome === 'notSent' ? 'notSent' : 'unknown';
}
