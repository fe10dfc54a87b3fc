import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { JsonObject } from 'n8n-workflow';

import { oneAtATime } from '../helpers/oneAtATime';
import { credentialKey, processState } from '../processState';
import { nodeApiError, unexpectedResponse } from './errors';
import { readJson } from './http';
import type { CompanionPushContext } from './http';
import { Tries } from './retry';
import { sendAcceptedSchema } from './schemas';
import type { ListedNotification } from './schemas';
import { findRegisteredSend, rememberSendId } from './sendLookup';

/** The body of POST /push-notification/send, as the API names its fields. `tenant_id` has no
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
 *   nothing; see tokenRenewal.ts).
 * - The token cannot be renewed: nothing left. A refused renewal is an error at once; an
 *   unreachable token endpoint is waited for and tried again like a 429.
 * - 429: nothing was registered; waits (Retry-After, or backoff) and tries again.
 * - 400, 403, 404, 409, 422: an error for the workflow, not repeated.
 * - 5xx or no answer (reset, timeout): the outcome is unknown, so the list of sends is read
 *   first (see sendLookup.ts). Found: that send is the result. Certainly absent: sent again.
 *   The list cannot be read: an error, nothing re-sent.
 * At most the retry policy's tries in all. Identical sends (same title, body, recipients) of this
 * process go one at a time: a lookup after a lost answer must never take a sibling in flight for
 * its own (its id is not known yet).
 */
export async function sendNotification(
	context: CompanionPushContext,
	request: SendRequest,
	itemIndex?: number,
	options: SendOptions = {},
): Promise<SendOutcome> {
	const sameSend = JSON.stringify([credentialKey(context), request.title, request.body, [...request.target_user_ids].sort()]);
	return await oneAtATime(processState.identicalSends, sameSend, async () => await sendLookingUpLostAnswers(context, request, itemIndex, options));
}

/** One send by the rule above, once its identical siblings of this process are done. */
async function sendLookingUpLostAnswers(
	context: CompanionPushContext,
	request: SendRequest,
	itemIndex: number | undefined,
	options: SendOptions,
): Promise<SendOutcome> {
	const action = 'Sending the notification';
	const firstTryStartedAt = options.lookUpSince ?? Date.now();
	const lookUp = async () => await findRegisteredSend(context, request, firstTryStartedAt, itemIndex);
	const found = (registered: ListedNotification, recoveredAfter: string, attempts: number): SendOutcome => {
		rememberSendId(context, registered.id);
		return { id: registered.id, status: registered.status ?? 'sending', recoveredAfter, attempts };
	};
	if (options.lookUpSince !== undefined) {
		// An earlier try of this send lost its answer: it may be registered, so look before sending.
		let registered: ListedNotification | undefined;
		try {
			registered = await lookUp();
		} catch {
			throw tagged(outcomeUnknown(context, 'an earlier try lost its answer, and the list of sends could not be read', itemIndex), 'unknown');
		}
		if (registered) return found(registered, options.lookUpReason ?? 'an earlier try whose answer was lost', 0);
	}
	const tries = new Tries(context, { method: 'POST', path: '/push-notification/send', body: { ...request }, action, itemIndex });
	// Whether a request may have reached the service without us learning its id: then an error
	// at the end leaves the outcome unknown, not "not sent".
	let mayBeRegistered = false;
	try {
		for (;;) {
			const answer = await tries.send();
			if (answer.kind === 'answer' && answer.status >= 200 && answer.status < 300) {
				const json = readJson(answer.body);
				const accepted = json.ok ? sendAcceptedSchema.safeParse(json.value) : undefined;
				if (accepted?.success) {
					rememberSendId(context, accepted.data.data.id);
					return { id: accepted.data.data.id, status: accepted.data.data.status, attempts: tries.requests };
				}
				// Accepted, but the id is unreadable (a body cut short, say): it must not be sent again.
				// The list of sends can still tell its id; if it cannot, the error says it was accepted.
				mayBeRegistered = true;
				const registered = await lookUp().catch(() => undefined);
				if (registered) return found(registered, 'an unreadable 202 answer', tries.requests);
				throw unexpectedResponse(context.getNode(), `${action} (accepted, not re-sent)`, answer.redact(answer.body), itemIndex);
			}
			const lostAnswer = answer.kind === 'noAnswer' ? answer.code : answer.status >= 500 ? `HTTP ${answer.status}` : undefined;
			if (lostAnswer !== undefined) {
				mayBeRegistered = true;
				let registered: ListedNotification | undefined;
				try {
					registered = await lookUp();
				} catch {
					throw outcomeUnknown(context, `${lostAnswer}, and the list of sends could not be read`, itemIndex);
				}
				if (registered) return found(registered, lostAnswer, tries.requests);
				// Certainly not registered (yet): the next try may send it.
				mayBeRegistered = false;
			} else if (answer.kind === 'answer' && answer.status !== 429) {
				throw tries.failure(answer); // refused: nothing was registered
			}
			if (!(await tries.waitToRetry(answer))) {
				throw tries.failure(answer, 'The send was not registered (checked in the list of sends): retry later.');
			}
		}
	} catch (error) {
		throw tagged(error, mayBeRegistered || options.lookUpSince !== undefined ? 'unknown' : 'notSent');
	}
}
