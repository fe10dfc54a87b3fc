import { randomUUID } from 'crypto';

import { unexpectedResponse } from '../errors';
import { readJson, serverTimeMs } from '../answers';
import type { FinalAnswer } from '../answers';
import type { CompanionPushContext } from '../http';
import { Tries } from '../retry';
import { sendAcceptedSchema } from '../schemas';
import type { SendRequest } from '../schemas';
import { noteApiClock } from './listings';
import { lookUpSend } from './lookup';
import type { LookupResult } from './lookup';
import {
	acceptedEarlier,
	failedSendOutcome,
	idNotFoundBecause,
	outcomeUnknown,
	tagged,
	whereToLook,
} from './outcomes';
import { recordOwner, sendInFlight, sendResolved, sendUnresolved } from './registry';

export interface SendOutcome {
	id: string;
	status: string;
	/** Set when the answer was lost and the send was found registered in the list instead. */
	recoveredAfter?: string;
	/** How many times the request went out (the extra ones never reached the service). */
	attempts: number;
}

/** A try of this send that may already be registered: an earlier node try or execution, or the run
 * that claimed its Idempotency Key, whose outcome is not known. */
export interface EarlierAttempt {
	/** When it may have started, on n8n's clock: the list of sends is read from then on. Undefined
	 * when nothing tells when (a key n8n's store could not read may be kept for any time): the list
	 * is read to its end, and a reading that cannot get there proves nothing absent. */
	since: number | undefined;
	/** When its last request may have been out at the latest, on n8n's clock: a send made after that
	 * is not it. Undefined when nothing bounds it: a send found after `since` proves nothing. */
	until?: number;
	/** What it was, for `recoveredAfter` and for the error when nothing can be told. */
	cause: string;
	/** Whether `since` is when a known attempt started. When it is only a reach back (nothing tells
	 * when, or whether, an attempt was made), a send found there shows only that this one may have
	 * been made: the outcome is then unknown. */
	sinceIsAttempt: boolean;
	/** The API accepted that attempt (a 2xx) but its id could not be read: it is never sent again; the
	 * list is only asked for its id. */
	accepted?: boolean;
}

export interface SendOptions {
	/** The send this one stands for (see registry.ts): a batch of one execution, or an Idempotency
	 * Key. A lookup never takes a send another owner of this process made. */
	owner?: string;
	/** Set when an earlier attempt may have registered this send: the list is read first. */
	earlierAttempt?: EarlierAttempt;
	/** Called before each request goes out (with its timeout); throws when it must not start (the
	 * lease of its Idempotency Key's claim could run out before it ends). */
	beforeRequest?: (timeoutMs?: number) => Promise<void>;
}

/**
 * Sends a notification so that nobody is notified twice and no send is lost unreported:
 * - 2xx: accepted; never sent again, whatever follows. When its body cannot be read, the list of
 *   sends is asked for its id as below; not found there, the error says it was accepted and carries
 *   `accepted`, so that the caller records it as sent (a later try only asks the list for its id).
 * - 401: the transport takes a token saved since, or renews it, and tries again (a 401 registers
 *   nothing; see tokenRenewal.ts). A token that cannot be renewed sent nothing.
 * - 429: nothing was registered; waits (Retry-After, or backoff) and tries again.
 * - 400, 403, 404, 409, 422: an error for the workflow, not repeated; nothing was registered.
 * - No connection at all (refused, host not found, TLS failed): nothing was registered; tried again.
 * - 5xx or no answer (reset, timeout): the outcome is unknown, so the list of sends decides
 *   (lookup.ts): exactly this send: that is the result; proven absent: tried again; otherwise
 *   the error says the outcome is unknown, and nothing is sent again.
 * At most the retry policy's tries in all. While its request is out, the send is registered as in
 * flight, so that a lookup of another send of this process that looks like it waits for its answer;
 * when its outcome stays unknown, as unresolved, so that such a lookup does not take it for its own.
 */
export async function sendNotification(
	context: CompanionPushContext,
	request: SendRequest,
	itemIndex?: number,
	options: SendOptions = {},
): Promise<SendOutcome> {
	const owner = options.owner ?? `call:${randomUUID()}`;
	const sending = sendOnce(context, request, itemIndex, owner, options);
	// Recorded before the caller learns the outcome (these reactions run first).
	void sending.then(
		() => sendResolved(context, owner),
		// Accepted without an id, or maybe registered: a send like it in the list may be this one.
		(error: unknown) =>
			failedSendOutcome(error) === 'notSent'
				? sendResolved(context, owner)
				: sendUnresolved(context, request, owner),
	);
	return await sending;
}

async function sendOnce(
	context: CompanionPushContext,
	request: SendRequest,
	itemIndex: number | undefined,
	owner: string,
	{ earlierAttempt, beforeRequest }: SendOptions,
): Promise<SendOutcome> {
	const action = 'Sending the notification';
	// Where lookups start: the earlier attempt (undefined: the whole list), or this call's first request.
	let firstAttemptAt = earlierAttempt ? earlierAttempt.since : Date.now();
	// Where they end: the earlier attempt's end, or, once this call sent, now (its requests have ended).
	const lookUp = async (
		lastAttemptEndedAt: number | undefined = Date.now(),
	): Promise<LookupResult> =>
		await lookUpSend(context, {
			request,
			owner,
			firstAttemptAt,
			lastAttemptEndedAt,
			itemIndex,
		}).catch((error: Error) => ({
			kind: 'unknown' as const,
			reason: `the list of sends could not be read (${error.message})`,
		}));
	const found = (
		id: string,
		status: string,
		recoveredAfter: string,
		attempts: number,
	): SendOutcome => {
		recordOwner(context, id, owner, request);
		return { id, status, recoveredAfter, attempts };
	};
	if (earlierAttempt) {
		const { cause } = earlierAttempt;
		const result = await lookUp(earlierAttempt.until);
		if (earlierAttempt.accepted) {
			// Accepted before: never sent again, whatever the list shows; it can only give the id.
			if (result.kind === 'found') return found(result.id, result.status, cause, 0);
			throw tagged(
				acceptedEarlier(
					context,
					cause,
					idNotFoundBecause(result),
					request,
					firstAttemptAt,
					itemIndex,
				),
				'accepted',
			);
		}
		if (
			result.kind === 'found' &&
			earlierAttempt.sinceIsAttempt &&
			earlierAttempt.until !== undefined
		)
			return found(result.id, result.status, cause, 0);
		if (result.kind === 'found') {
			const reason = earlierAttempt.sinceIsAttempt
				? `the list holds a send exactly like it (${result.id}), and nothing tells until when the earlier attempt may have been registered, so it may be another made the same way later`
				: `the list holds a send exactly like it (${result.id}), which may be this one or another made the same way`;
			throw tagged(
				outcomeUnknown(context, cause, reason, request, firstAttemptAt, itemIndex),
				'unknown',
			);
		}
		if (result.kind === 'unknown')
			throw tagged(
				outcomeUnknown(context, cause, result.reason, request, firstAttemptAt, itemIndex),
				'unknown',
			);
		// Proven absent from the whole list: a send of this call can only be made from now on.
		firstAttemptAt ??= Date.now();
	}
	const tries = new Tries(context, {
		method: 'POST',
		path: '/push-notification/send',
		body: { ...request },
		action,
		itemIndex,
		beforeRequest,
	});
	// Whether a request may have reached the service without us learning its id: then an error
	// at the end leaves the outcome unknown, not "not sent".
	let mayBeRegistered = false;
	try {
		for (;;) {
			const answered = sendInFlight(context, request, owner);
			// The request goes out now or later: its listing shows the list current past any send
			// whose answer was lost before (lookup.ts).
			const sentAt = Date.now();
			let answer: FinalAnswer;
			try {
				answer = await tries.send();
				// What the API's clock was while this send was out: a later lookup places it by that.
				if (answer.kind === 'answer') noteApiClock(context, serverTimeMs(answer.headers), sentAt);
				const accepted = acceptedSend(answer);
				if (accepted) {
					recordOwner(context, accepted.id, owner, request, sentAt);
					return { ...accepted, attempts: tries.requests };
				}
			} finally {
				answered();
			}
			if (answer.kind === 'answer' && answer.status >= 200 && answer.status < 300) {
				// Accepted, but the id is unreadable (a body cut short, say): it must not be sent again.
				// The list of sends can still tell its id; if it cannot, the error says it was accepted,
				// and carries so (`accepted`): no later try or run sends it again either.
				mayBeRegistered = true;
				const result = await lookUp();
				if (result.kind === 'found')
					return found(result.id, result.status, 'an unreadable 202 answer', tries.requests);
				const error = unexpectedResponse(
					context.getNode(),
					`${action} (accepted, not re-sent)`,
					answer.redact(answer.body),
					itemIndex,
				);
				error.description = `${error.description ?? ''} The API accepted it, so it went out and is not sent again; its id could not be read, and the list of sends does not give it: ${idNotFoundBecause(result)}. Check ${whereToLook(request, firstAttemptAt)} for its id.`;
				throw tagged(error, 'accepted');
			}
			const lostAnswer =
				answer.kind === 'noAnswer'
					? answer.neverSent
						? undefined
						: answer.code
					: answer.status >= 500
						? `HTTP ${answer.status}`
						: undefined;
			if (lostAnswer !== undefined) {
				mayBeRegistered = true;
				const result = await lookUp();
				if (result.kind === 'found')
					return found(result.id, result.status, lostAnswer, tries.requests);
				if (result.kind === 'unknown')
					throw outcomeUnknown(
						context,
						lostAnswer,
						result.reason,
						request,
						firstAttemptAt,
						itemIndex,
					);
				// Proven absent: the next try may send it.
				mayBeRegistered = false;
			} else if (answer.kind === 'answer' && answer.status !== 429) {
				throw tries.failure(answer); // refused: nothing was registered
			}
			if (!(await tries.waitToRetry(answer))) {
				throw tries.failure(
					answer,
					'The send was not registered (the list of sends proved it absent, or it never reached the API): retry later.',
				);
			}
		}
	} catch (error) {
		// An earlier attempt was proven absent before the first request here (else it was found, or
		// the call ended "unknown", above): only a request of this call can have been registered.
		const outcome =
			failedSendOutcome(error) === 'accepted'
				? 'accepted'
				: mayBeRegistered
					? 'unknown'
					: 'notSent';
		throw tagged(error, outcome);
	}
}

/** The id and status of an accepted send, when its answer can be read. */
function acceptedSend(answer: FinalAnswer): { id: string; status: string } | undefined {
	if (answer.kind !== 'answer' || answer.status < 200 || answer.status >= 300) return undefined;
	const json = readJson(answer.body);
	const accepted = json.ok ? sendAcceptedSchema.safeParse(json.value) : undefined;
	return accepted?.success
		? { id: accepted.data.data.id, status: accepted.data.data.status }
		: undefined;
}
