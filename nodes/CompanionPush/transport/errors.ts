import { jsonParse, NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { INode, JsonObject } from 'n8n-workflow';

import { shownAddress } from '../../../credentials/companionPushApi/redaction';
import type { RenewalFailure } from '../../../credentials/companionPushApi/token';
import type { FinalAnswer, NoAnswer } from './answers';
import { excerpt } from './schemas';

/** An n8n error (for this item, when there is one): API and node errors keep their text; anything
 * else is wrapped. Used by the transport and both nodes (the trigger's polls have no item). */
export function asNodeError(
	context: { getNode(): INode },
	error: unknown,
	itemIndex?: number,
): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) {
		if (itemIndex !== undefined) error.context.itemIndex ??= itemIndex;
		return error;
	}
	return new NodeOperationError(context.getNode(), error as Error, { itemIndex });
}

/** One-line hints from the spec's error table, shown under the error in n8n. */
const HINTS: Record<number, string> = {
	400: 'A field value is invalid: check the formats of the fields.',
	401: 'The access token was refused even after it was renewed: check the credential (Client ID, Client Secret, Refresh Token).',
	403: 'The credential lacks permission, or the send belongs to another organization. The service credential must be tied to an administrator user.',
	404: 'The send does not exist: check the notification ID.',
	409: 'Only a scheduled send can be canceled: this one already went out or was canceled.',
	422: 'A required field is missing or malformed: correct the field named above.',
	429: 'The API is receiving too many requests: wait and retry.',
};
const SERVER_ERROR_HINT = 'A transient platform error: wait and retry.';

/**
 * Builds a NodeApiError and keeps the message given. n8n's constructor swaps any message that
 * mentions a network code (ECONNRESET, ETIMEDOUT, ECONNREFUSED ...) for a generic sentence of its
 * own, which would drop the action and what happened ("Reading the user list failed: no answer
 * from the API (ECONNRESET)"). The generic sentence stays in `messages`.
 */
export function nodeApiError(
	node: INode,
	response: JsonObject,
	options: { message: string; description?: string; httpCode?: string; itemIndex?: number },
): NodeApiError {
	const error = new NodeApiError(node, response, options);
	if (error.message !== options.message) error.message = options.message;
	return error;
}

export interface ErrorDetail {
	message?: string;
	field?: string;
}

function firstString(...values: unknown[]): string | undefined {
	for (const value of values)
		if (typeof value === 'string' && value.trim() !== '') return value.trim();
	return undefined;
}

function fieldOf(entry: unknown): string | undefined {
	if (typeof entry !== 'object' || entry === null) return undefined;
	const record = entry as Record<string, unknown>;
	if (Array.isArray(record.loc)) {
		// FastAPI style: ["body", "target_user_ids"]
		const path = record.loc.filter((part) => part !== 'body' && part !== 'query');
		if (path.length > 0) return path.join('.');
	}
	return firstString(record.field, record.param, record.path, record.property, record.name);
}

/** Reads the API's error body, whose shape the spec does not show, in every plausible form:
 * `{error: {message, field}}`, `{message, field}`, `{detail: "..." | [{loc, msg}]}`,
 * `{errors: [{field, message}]}`, or plain text. */
export function parseErrorBody(body: unknown): ErrorDetail {
	if (typeof body === 'string') {
		const text = body.trim();
		if (text.startsWith('{') || text.startsWith('[')) {
			// Text starting with { or [ never parses to null: null means "not JSON after all", read as plain text.
			const parsed = jsonParse<unknown>(text, { fallbackValue: null });
			if (parsed !== null) return parseErrorBody(parsed);
		}
		return text === '' ? {} : { message: excerpt(text, 200) };
	}
	if (typeof body !== 'object' || body === null) return {};
	const record = body as Record<string, unknown>;
	const nested =
		typeof record.error === 'object' && record.error !== null
			? (record.error as Record<string, unknown>)
			: {};
	const list = [record.detail, record.errors, nested.details, record.details].find(
		Array.isArray,
	) as unknown[] | undefined;
	const firstEntry = list?.[0];
	const entryMessage =
		typeof firstEntry === 'object' && firstEntry !== null
			? firstString(
					(firstEntry as Record<string, unknown>).msg,
					(firstEntry as Record<string, unknown>).message,
				)
			: firstString(firstEntry);
	return {
		message: firstString(
			nested.message,
			record.message,
			record.detail,
			record.error,
			record.msg,
			entryMessage,
			record.title,
		),
		field: firstString(nested.field, record.field) ?? fieldOf(firstEntry),
	};
}

export interface ApiFailure {
	status: number;
	body: unknown;
	/** The Location header of a redirect: its origin and path only, secrets hidden (see credentials/companionPushApi/redaction.ts). */
	location?: string;
	/** What was being done, e.g. "Sending the notification". */
	action: string;
	itemIndex?: number;
}

/** An API answer that is not a success, as an n8n error: status, the API's own detail (and the
 * field to fix), and the hint. Built from the status and body only, never from the request, so
 * no header or token can leak into it. */
export function apiError(node: INode, failure: ApiFailure): NodeApiError {
	if (failure.status >= 300 && failure.status < 400) return redirectError(node, failure);
	const detail = parseErrorBody(failure.body);
	const hint = HINTS[failure.status] ?? (failure.status >= 500 ? SERVER_ERROR_HINT : undefined);
	const fieldText = detail.field ? ` (field: ${detail.field})` : '';
	const apiText = detail.message ? `: ${detail.message}` : '';
	const response: JsonObject = {
		status: failure.status,
		message: detail.message ?? null,
		field: detail.field ?? null,
	};
	return nodeApiError(node, response, {
		message: `${failure.action} failed with HTTP ${failure.status}${apiText}${fieldText}`,
		description: hint,
		httpCode: String(failure.status),
		itemIndex: failure.itemIndex,
	});
}

/** A redirect: never followed (the request would go elsewhere with the credential's token, and a POST
 * would come back as a GET), so the Base URL is probably not the API's address. */
function redirectError(node: INode, failure: ApiFailure): NodeApiError {
	const where = failure.location ? ` to ${excerpt(failure.location, 200)}` : '';
	return nodeApiError(
		node,
		{ status: failure.status, location: failure.location ?? null },
		{
			message: `${failure.action} failed: the API answered with a redirect (HTTP ${failure.status})${where}`,
			description:
				'Redirects are not followed, so no token goes to another address and nothing was sent there. Check the Base URL of the credential: use the address the API is really at.',
			httpCode: String(failure.status),
			itemIndex: failure.itemIndex,
		},
	);
}

/** The access token could not be renewed, so the request was not sent. */
export function renewalError(
	node: INode,
	action: string,
	failure: RenewalFailure,
	itemIndex?: number,
): NodeApiError {
	return nodeApiError(node, { reason: failure.message } as JsonObject, {
		message: `${action} failed: ${failure.message}`,
		description: failure.retryable
			? 'The access token could not be renewed, so nothing was sent to the API: try again later.'
			: 'The access token could not be renewed, so nothing was sent to the API: fix the credential, then run again.',
		httpCode: failure.httpCode === undefined ? undefined : String(failure.httpCode),
		itemIndex,
	});
}

/** No answer at all (connection reset, refused, timeout), or an error nobody recognizes: then the
 * message says so, with the error's own words, rather than blaming the network. */
export function networkError(
	node: INode,
	action: string,
	answer: NoAnswer,
	itemIndex?: number,
	extra?: string,
): NodeApiError {
	const what =
		answer.unexpected !== undefined
			? `an unexpected error, not an answer from the API (${answer.unexpected})`
			: (answer.reason ?? `no answer from the API (${answer.code})`);
	return nodeApiError(node, { code: answer.code } as JsonObject, {
		message: `${action} failed: ${what}`,
		description:
			extra ?? 'Check the Base URL of the credential and that the API is reachable, then retry.',
		itemIndex,
	});
}

/** An answer larger than any the endpoint can give (answers.ts, answerBytesBound): its reading
 * stopped at the bound, and nothing of it is output. */
export function answerTooLarge(
	node: INode,
	action: string,
	endpoint: string,
	boundBytes: number,
	itemIndex?: number,
): NodeApiError {
	const bound = `${boundBytes / (1024 * 1024)} MiB`;
	return nodeApiError(node, { endpoint, boundBytes } as JsonObject, {
		message: `${action} failed: the API's answer to ${endpoint} is larger than ${bound}, the most this node reads of it`,
		description: `No answer the API describes for ${endpoint} comes near ${bound}, so it was not read further and nothing of it was output. Check that the Base URL of the credential is the API's address; if it is, report the answer to the API provider.`,
		itemIndex,
	});
}

/** A paged list that cannot be read whole (an API that ignores paging, or never ends its list):
 * what was read so far is not output, since a part would pass for the whole. */
export function listReadError(
	context: { getNode(): INode },
	action: string,
	what: string,
	itemIndex?: number,
	fix = 'The API does not page its list as the spec says: report it to the API provider.',
): NodeApiError {
	return nodeApiError(context.getNode(), { reason: what } as JsonObject, {
		message: `${action} failed: ${what}`,
		description: `${fix} Nothing of the list was output.`,
		itemIndex,
	});
}

/** A success status whose body does not have the shape the spec describes. */
export function unexpectedResponse(
	node: INode,
	action: string,
	body: unknown,
	itemIndex?: number,
): NodeApiError {
	return nodeApiError(node, { body: excerpt(body) } as JsonObject, {
		message: `${action}: the API answered with an unexpected body`,
		description: `What came back: ${excerpt(body)}`,
		itemIndex,
	});
}

/** A cancel refused (409) because the send already left: says its current state, also in
 * `context.currentStatus` for "Ignore If Not Scheduled". */
export function notCancelable(
	node: INode,
	notificationId: string,
	currentStatus: string,
	itemIndex?: number,
): NodeApiError {
	const error = nodeApiError(node, { status: 409, currentStatus } as JsonObject, {
		message: `Notification ${notificationId} can no longer be canceled: it is "${currentStatus}", and only a scheduled send can be canceled`,
		description: 'The send already left. A delivered notification cannot be taken back.',
		httpCode: '409',
		itemIndex,
	});
	error.context.currentStatus = currentStatus;
	return error;
}

/** The error for a call's last answer: no answer, an unreadable success body, or a status. */
export function answerError(
	node: INode,
	call: { action: string; itemIndex?: number },
	answer: FinalAnswer,
	noAnswerNote?: string,
): NodeApiError {
	const { action, itemIndex } = call;
	if (answer.kind === 'noAnswer')
		return networkError(node, action, answer, itemIndex, noAnswerNote);
	if (answer.status >= 200 && answer.status < 300)
		return unexpectedResponse(node, action, answer.redact(answer.body), itemIndex);
	// A Location is written by whoever answered: only its origin and path are shown, secrets hidden.
	const location =
		typeof answer.headers.location === 'string'
			? String(answer.redact(shownAddress(answer.headers.location)))
			: undefined;
	return apiError(node, { status: answer.status, body: answer.body, location, action, itemIndex });
}
