import { z } from 'zod';

import { NodeApiError } from 'n8n-workflow';

import { asNodeError, notCancelable } from './errors';
import type { CompanionPushContext } from './http';
import { repeatableRequest, repeatableRequestWithHeaders } from './repeatableRequest';
import { serverTimeMs } from './retry';
import {
	activeUsersSchema,
	cancelSchema,
	extractSendList,
	listedNotificationSchema,
	notificationDetailSchema,
	userPageSchema,
} from './schemas';
import type { ListedNotification, NotificationDetail, SendListPage, User } from './schemas';

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
	return await repeatableRequest(
		context,
		{ method: 'GET', path: '/user/list', qs: { skip, limit }, action: 'Reading the user list', itemIndex },
		userPageSchema,
	);
}

/** Reads users page by page (`skip` grows by the page size) until a page comes back empty, as
 * the spec says, or until `max` users are read. */
export async function listUsers(context: CompanionPushContext, max = Infinity, itemIndex?: number): Promise<User[]> {
	const users: User[] = [];
	while (users.length < max) {
		const limit = Math.min(USER_PAGE_SIZE, max - users.length);
		const page = await listUsersPage(context, users.length, limit, itemIndex);
		if (page.length === 0) break;
		for (const user of page) users.push(user);
	}
	return users.slice(0, max);
}

export async function listActiveUserIds(context: CompanionPushContext, itemIndex?: number): Promise<string[]> {
	const response = await repeatableRequest(
		context,
		{ method: 'GET', path: '/user-device/users', action: 'Reading the users with an active app', itemIndex },
		activeUsersSchema,
	);
	return response.data.user_ids;
}

export async function getNotification(
	context: CompanionPushContext,
	notificationId: string,
	itemIndex?: number,
): Promise<NotificationDetail> {
	const response = await repeatableRequest(
		context,
		{
			method: 'GET',
			path: `/push-notification/${encodeURIComponent(notificationId)}`,
			action: `Reading notification ${notificationId}`,
			itemIndex,
		},
		notificationDetailSchema,
	);
	return response.data;
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
		const response = await repeatableRequest(
			context,
			{ method: 'POST', path, action: `Canceling notification ${notificationId}`, itemIndex },
			cancelSchema,
		);
		return { message: response.message ?? 'Push notification canceled', alreadyCanceled: false };
	} catch (error) {
		if (!(error instanceof NodeApiError) || error.httpCode !== '409') throw asNodeError(context, error, itemIndex);
		const current = await getNotification(context, notificationId, itemIndex);
		if (current.notification.status === 'canceled') {
			return { message: 'Push notification canceled', alreadyCanceled: true };
		}
		throw notCancelable(context.getNode(), notificationId, current.notification.status, itemIndex);
	}
}

const sendListSchema = z.unknown().transform((body, context) => {
	const list = extractSendList(body);
	const items = list && z.array(listedNotificationSchema).safeParse(list.items);
	if (!list || !items?.success) {
		context.addIssue({ code: z.ZodIssueCode.custom, message: 'not a list of sends' });
		return z.NEVER;
	}
	return { items: items.data, total: list.total };
});

export async function listNotificationsPage(
	context: CompanionPushContext,
	skip: number,
	limit: number,
	itemIndex?: number,
): Promise<SendListPage> {
	const { value, headers } = await repeatableRequestWithHeaders(
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
 * ignores `skip`). `stopWhen` ends early, e.g. once sends are older than a time window.
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
	const sends: ListedNotification[] = [];
	const seen = new Set<string>();
	let skip = 0;
	while (sends.length < max) {
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
		if (page.total !== undefined && skip >= page.total) break;
	}
	return sends;
}
