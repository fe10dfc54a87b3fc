import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { JsonObject } from 'n8n-workflow';

import { nodeApiError } from '../errors';
import type { CompanionPushContext } from '../http';
import type { SendRequest } from '../schemas';
import type { LookupResult } from './lookup';

/* What a send that failed left behind, carried on its error, and the words for a send whose outcome
 * is unknown or whose id could not be read (send.ts). */

/** What a failed send left behind, in `error.context.sendOutcome`: `notSent` (certainly nothing
 * registered: a refusal, a 429 or a renewal that never let it leave, or a lost answer the list then
 * proved absent), `unknown` (it may be registered) or `accepted` (the API accepted it, a 2xx, but its
 * id could not be read nor found: registered, never to be sent again). */
export type FailedSendOutcome = 'notSent' | 'unknown' | 'accepted';

/** Tags a send error with what the send left behind; returns the error. */
export function tagged<E>(error: E, outcome: FailedSendOutcome): E {
	if (error instanceof NodeApiError || error instanceof NodeOperationError)
		error.context.sendOutcome = outcome;
	return error;
}

/** The outcome a send error was tagged with (see FailedSendOutcome); undefined when none. */
export function taggedSendOutcome(error: unknown): FailedSendOutcome | undefined {
	const outcome = (error as { context?: { sendOutcome?: unknown } })?.context?.sendOutcome;
	return outcome === 'notSent' || outcome === 'accepted' || outcome === 'unknown'
		? outcome
		: undefined;
}

/** The outcome a send error carries (see FailedSendOutcome); `unknown` when it carries none. */
export function failedSendOutcome(error: unknown): FailedSendOutcome {
	return taggedSendOutcome(error) ?? 'unknown';
}

/** Where in the list of sends to look for it, in words. */
export function whereToLook(request: SendRequest, since: number | undefined): string {
	const when =
		since === undefined ? 'at any time' : `since ${new Date(since).toISOString()} (n8n's clock)`;
	return `the list of sends (Notification > Get Many) for a send titled "${request.title.slice(0, 80)}" to ${request.target_user_ids.length} recipient(s) created ${when}`;
}

/** The send may or may not be registered: what is known, and how to check. */
export function outcomeUnknown(
	context: CompanionPushContext,
	cause: string,
	reason: string,
	request: SendRequest,
	since: number | undefined,
	itemIndex?: number,
): NodeApiError {
	return nodeApiError(context.getNode(), { cause, reason } as JsonObject, {
		message: `Sending the notification: the outcome is unknown (${cause}), so it was not sent again`,
		description:
			`What the API showed cannot prove whether it was registered: ${reason}. ` +
			`Check ${whereToLook(request, since)}: if it is there, it went out; if not, run this item again.`,
		itemIndex,
	});
}

/** Why the list of sends did not give the id of a send the API accepted, in the lookup's words. */
export function idNotFoundBecause(result: Exclude<LookupResult, { kind: 'found' }>): string {
	return result.kind === 'unknown'
		? result.reason
		: 'nothing in the list of sends looks like it, though the list was shown up to date (the API may list this send later than others, or show it otherwise)';
}

/** An earlier try's send was accepted, and the list still does not give its id (`reason`, from the
 * lookup): it went out; where to find it. */
export function acceptedEarlier(
	context: CompanionPushContext,
	cause: string,
	reason: string,
	request: SendRequest,
	since: number | undefined,
	itemIndex?: number,
): NodeApiError {
	return nodeApiError(context.getNode(), { cause, reason } as JsonObject, {
		message: `Sending the notification: ${cause} sent it (accepted, not re-sent), but its id could not be read`,
		description: `The API accepted it (a 2xx answer whose body could not be read), so it went out and is not sent again; the list of sends does not give its id: ${reason}. Check ${whereToLook(request, since)} for its id.`,
		itemIndex,
	});
}
