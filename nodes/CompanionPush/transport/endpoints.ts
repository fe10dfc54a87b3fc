import { NodeApiError } from 'n8n-workflow';
import type { ZodType, ZodTypeDef } from 'zod';

import { readJson, serverTimeMs } from './answers';
import { asNodeError, listReadError, notCancelable, unexpectedResponse } from './errors';
import type { ApiCall, CompanionPushContext } from './http';
import { isRetryableStatus, Tries } from './retry';
import {
	activeUsersSchema,
	cancelSchema,
	sendListSchema,
	notificationDetailSchema,
	userPageSchema,
} from './schemas';
import type { ListedNotification, NotificationDetail, SendListPage, User } from './schemas';

/**
 * A call that is safe to repeat: every read, and cancel (canceling twice cancels once). Retried on
 * 5xx, 429, no answer and unreadable (malformed) JSON per the retry policy (retry.ts). Returns the
 * 2xx body checked against `schema`, with the answer's headers; any other answer becomes a
 * NodeApiError that names the action. Sends are never made through here (see send.ts).
 */
export async function repeatableRequest<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
): Promise<{ value: T; headers: Record<string, unknown> }> {
	const tries = new Tries(context, call);
	for (;;) {
		const answer = await tries.send();
		if (answer.kind === 'answer' && answer.status >= 200 && answer.status < 300) {
			const json = readJson(answer.body);
			// Malformed JSON (a body cut short) is worth another read; a readable body is checked once.
			if (json.ok) {
				const parsed = schema.safeParse(json.value);
				if (!parsed.success)
					throw unexpectedResponse(
						context.getNode(),
						call.action,
						answer.redact(json.value),
						call.itemIndex,
					);
				return { value: parsed.data, headers: answer.headers };
			}
		} else if (answer.kind === 'answer' && !isRetryableStatus(answer.status)) {
			throw tries.failure(answer);
		}
		if (!(await tries.waitToRetry(answer))) throw tries.failure(answer);
	}
}

/** The spec's page size limit for GET /user/list. */
export const USER_PAGE_SIZE = 1000;
/** Page size asked of GET /push-notification/list (its paging is not shown in the spec). */
export const SEND_LIST_PAGE_SIZE = 100;

export async function listUsersPage(
	context: CompanionPushContext,
	skip: number,
	limit: number,
	itemIndex?: number,
): Promise<User[]> {
	const { value } = await repeatableRequest(
		context,
		{
			method: 'GET',
			path: '/user/list',
			qs: { skip, limit },
			action: 'Reading the user list',
			itemIndex,
		},
		userPageSchema,
	);
	return value;
}

/** The most users a Return All reads (the whole organization, for Get Many and the All Users
 * audience): far more than an organization the service is made for (it sends in batches of 1000),
 * and a bound on the memory a read can take. An organization beyond it is an error, not a cut. */
export const MAX_USERS_READ = 1_000_000;
/** The most sends a Return All of the list of sends reads, for the same reason. */
export const MAX_SENDS_READ = 100_000;

/** Pages enough to read `asked` records from an API whose pages hold up to `largestPage` (the
 * largest page seen so far), plus the empty page that ends the list. A reading past it keeps
 * getting pages an honest API would not send: it is stopped rather than left to grow. */
function pagesFor(asked: number, largestPage: number): number {
	return Math.ceil(asked / Math.max(1, largestPage)) + 1;
}

/**
 * Reads users page by page (`skip` grows by what each page brought) until a page comes back empty,
 * as the spec says, or until `max` users are read. Every user is output once. The reading is
 * bounded whatever the API answers: a page that brings no user not read already ends it (complete
 * when the page before was shorter than asked: the API sent everything and ignores `skip`; an error
 * otherwise, since the rest cannot be reached), and so do more pages than `max` (or, for Return
 * All, MAX_USERS_READ) can take.
 */
export async function listUsers(
	context: CompanionPushContext,
	max = Infinity,
	itemIndex?: number,
): Promise<User[]> {
	const asked = Math.min(max, MAX_USERS_READ);
	const users: User[] = [];
	const seen = new Set<string>();
	let skip = 0;
	let largestPage = 0;
	let previousWasShort = false;
	for (let pages = 1; users.length < max; pages++) {
		if (pages > pagesFor(asked, largestPage)) {
			throw listReadError(
				context,
				'Reading the user list',
				`the API kept sending pages: ${pages - 1} pages (${users.length} users) are more than ${asked} users take`,
				itemIndex,
			);
		}
		const limit = Math.min(USER_PAGE_SIZE, max - users.length);
		const page = await listUsersPage(context, skip, limit, itemIndex);
		if (page.length === 0) break;
		const fresh = page.filter((user) => !seen.has(user.id) && seen.add(user.id));
		if (fresh.length === 0) {
			if (previousWasShort) break;
			throw listReadError(
				context,
				'Reading the user list',
				`the API answered page ${pages} (skip ${skip}) with users already read: it seems to ignore "skip", so the users after the first ${users.length} cannot be read`,
				itemIndex,
			);
		}
		for (const user of fresh) users.push(user);
		if (users.length > MAX_USERS_READ) {
			throw listReadError(
				context,
				'Reading the user list',
				`the organization has more than ${MAX_USERS_READ} users, more than Return All reads`,
				itemIndex,
				'Use a Limit, or send to the users by ID.',
			);
		}
		previousWasShort = page.length < limit;
		largestPage = Math.max(largestPage, page.length);
		skip += page.length;
	}
	return users.slice(0, max);
}

export async function listActiveUserIds(
	context: CompanionPushContext,
	itemIndex?: number,
): Promise<string[]> {
	const { value } = await repeatableRequest(
		context,
		{
			method: 'GET',
			path: '/user-device/users',
			action: 'Reading the users with an active app',
			itemIndex,
		},
		activeUsersSchema,
	);
	return value.data.user_ids;
}

export async function getNotification(
	context: CompanionPushContext,
	notificationId: string,
	itemIndex?: number,
): Promise<NotificationDetail> {
	return (await getNotificationWithClock(context, notificationId, itemIndex)).detail;
}

/** getNotification, with the API's clock when it answered (its Date header), when it sent one:
 * how late the deliveries it shows are. */
export async function getNotificationWithClock(
	context: CompanionPushContext,
	notificationId: string,
	itemIndex?: number,
): Promise<{ detail: NotificationDetail; serverTimeMs?: number }> {
	const { value, headers } = await repeatableRequest(
		context,
		{
			method: 'GET',
			path: `/push-notification/${encodeURIComponent(notificationId)}`,
			action: `Reading notification ${notificationId}`,
			itemIndex,
		},
		notificationDetailSchema,
	);
	return { detail: value.data, serverTimeMs: serverTimeMs(headers) };
}

export interface CancelResult {
	message: string;
	/** True when the send was found already canceled (for example by an earlier try whose answer was lost). */
	alreadyCanceled: boolean;
}

/** Cancels a scheduled send. Repeating a cancel is harmless, so it is retried like a read; a
 * 409 is checked against the send's state: already canceled counts as done. */
export async function cancelNotification(
	context: CompanionPushContext,
	notificationId: string,
	itemIndex?: number,
): Promise<CancelResult> {
	const path = `/push-notification/${encodeURIComponent(notificationId)}/cancel`;
	try {
		const { value } = await repeatableRequest(
			context,
			{ method: 'POST', path, action: `Canceling notification ${notificationId}`, itemIndex },
			cancelSchema,
		);
		return { message: value.message ?? 'Push notification canceled', alreadyCanceled: false };
	} catch (error) {
		if (!(error instanceof NodeApiError) || error.httpCode !== '409')
			throw asNodeError(context, error, itemIndex);
		const current = await getNotification(context, notificationId, itemIndex);
		if (current.notification.status === 'canceled') {
			return { message: 'Push notification canceled', alreadyCanceled: true };
		}
		throw notCancelable(context.getNode(), notificationId, current.notification.status, itemIndex);
	}
}

export async function listNotificationsPage(
	context: CompanionPushContext,
	skip: number,
	limit: number,
	itemIndex?: number,
): Promise<SendListPage> {
	const { value, headers } = await repeatableRequest(
		context,
		{
			method: 'GET',
			path: '/push-notification/list',
			qs: { skip, limit },
			action: 'Reading the list of sends',
			itemIndex,
		},
		sendListSchema,
	);
	return { ...value, serverTimeMs: serverTimeMs(headers) };
}

/**
 * Reads the organization's sends, newest first. The spec shows no paging for this endpoint, so
 * `skip`/`limit` are asked (as for the user list) and the answer is trusted only as far as it
 * proves itself: `skip` grows by what actually came back, and reading stops on an empty page, on
 * the `total` when one is given, or on a page holding only sends already seen (a server that
 * ignores `skip`). `stopWhen` ends early, e.g. once sends are older than a time window. More pages
 * than `max` (or, for Return All, MAX_SENDS_READ) can take are an error: the API keeps inventing sends.
 */
export async function listNotifications(
	context: CompanionPushContext,
	options: {
		max?: number;
		itemIndex?: number;
		stopWhen?: (send: ListedNotification, page: SendListPage) => boolean;
		/** Called with every page read, empty ones included (the trigger reads the server's clock). */
		onPage?: (page: SendListPage) => void;
	} = {},
): Promise<ListedNotification[]> {
	const max = options.max ?? Infinity;
	const asked = Math.min(max, MAX_SENDS_READ);
	const sends: ListedNotification[] = [];
	const seen = new Set<string>();
	let skip = 0;
	let largestPage = 0;
	for (let pages = 1; sends.length < max; pages++) {
		if (pages > pagesFor(asked, largestPage)) {
			const what = `the API kept sending pages: ${pages - 1} pages (${sends.length} sends) are more than ${asked} sends take`;
			throw listReadError(
				context,
				'Reading the list of sends',
				what,
				options.itemIndex,
				max === Infinity ? 'Use a Limit.' : undefined,
			);
		}
		const page = await listNotificationsPage(context, skip, SEND_LIST_PAGE_SIZE, options.itemIndex);
		options.onPage?.(page);
		const fresh = page.items.filter((send) => !seen.has(send.id));
		if (fresh.length === 0) break;
		for (const send of fresh) {
			if (options.stopWhen?.(send, page)) return sends;
			seen.add(send.id);
			sends.push(send);
			if (sends.length >= max) break;
		}
		skip += page.items.length;
		largestPage = Math.max(largestPage, page.items.length);
		if (page.total !== undefined && skip >= page.total) break;
	}
	return sends;
}
