import { z } from 'zod';

/**
 * Shapes of the API's answers, checked before anything uses them, and of the one body the node
 * sends that several parts compare against the answers (SendRequest). Records keep fields the spec
 * does not list (`passthrough`), so a newer API version never loses data on the way through.
 */

const id = z.union([z.string(), z.number()]).transform(String);
const timestamp = z.string().nullable().optional();
const count = z.number().int().nonnegative().catch(0);

export const userSchema = z
	.object({
		id,
		name: z.string().nullable().optional(),
		lastname: z.string().nullable().optional(),
		username: z.string().nullable().optional(),
		email: z.string().nullable().optional(),
	})
	.passthrough();
export type User = z.infer<typeof userSchema>;

const optionalText = (value: unknown) =>
	value === undefined || value === null || typeof value === 'string';

/** A page of GET /user/list. Checked in place rather than rebuilt field by field: a full
 * organization is 100 pages of 1000 users, and copying each record doubled the time and memory of
 * reading them. Numeric ids become strings, as `userSchema` does. */
function isUserRecord(value: unknown): boolean {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
	const user = value as Record<string, unknown>;
	const idOk =
		typeof user.id === 'string' || (typeof user.id === 'number' && Number.isFinite(user.id));
	return (
		idOk &&
		optionalText(user.name) &&
		optionalText(user.lastname) &&
		optionalText(user.username) &&
		optionalText(user.email)
	);
}

export const userPageSchema = z
	.custom<User[]>(
		(value) => Array.isArray(value) && value.every(isUserRecord),
		'a list of users, each with an id and text for name, lastname, username and email',
	)
	.transform((users) => {
		for (const user of users) if (typeof user.id !== 'string') user.id = String(user.id);
		return users;
	});

export const activeUsersSchema = z.object({
	ok: z.boolean().optional(),
	data: z.object({ user_ids: z.array(id), count: z.number().int().optional() }).passthrough(),
});

export const sendAcceptedSchema = z.object({
	ok: z.boolean().optional(),
	data: z.object({ id, status: z.string() }).passthrough(),
});

export const statsSchema = z
	.object({
		targeted_users: count,
		devices: count,
		sent: count,
		failed: count,
		opened: count,
		no_device: count,
	})
	.passthrough();

export const notificationSchema = z
	.object({
		id,
		title: z.string().nullable().optional(),
		body: z.string().nullable().optional(),
		image_url: z.string().nullable().optional(),
		deeplink: z.string().nullable().optional(),
		status: z.string(),
		scheduled_at: timestamp,
		sent_at: timestamp,
		created_at: timestamp,
		stats: statsSchema.optional(),
	})
	.passthrough();
export type NotificationRecord = z.infer<typeof notificationSchema>;

export const deliverySchema = z
	.object({
		user_id: id,
		status: z.string(),
		sent_at: timestamp,
		opened_at: timestamp,
	})
	.passthrough();
export type Delivery = z.infer<typeof deliverySchema>;

export const notificationDetailSchema = z.object({
	ok: z.boolean().optional(),
	data: z.object({
		notification: notificationSchema,
		deliveries: z.array(deliverySchema).default([]),
	}),
});
export type NotificationDetail = z.infer<typeof notificationDetailSchema>['data'];

export const cancelSchema = z
	.object({ ok: z.boolean().optional(), message: z.string().optional() })
	.passthrough();

/** An element of the list of sends. The spec does not show this endpoint's body, so only an id
 * is required; `target_user_ids`, when present, lets a send be matched after a network error. */
export const listedNotificationSchema = z
	.object({
		id,
		title: z.string().nullable().optional(),
		body: z.string().nullable().optional(),
		status: z.string().optional(),
		created_at: timestamp,
		target_user_ids: z.array(id).optional(),
	})
	.passthrough();
export type ListedNotification = z.infer<typeof listedNotificationSchema>;

const LIST_KEYS = ['items', 'notifications', 'results', 'sends', 'records', 'rows'] as const;

/** Finds the array of sends in any of the plausible shapes: a bare array; `{data: [...]}`;
 * `{data: {items|notifications|...: [...], total}}`; or the same keys at the top level. */
function extractSendList(body: unknown): { items: unknown[]; total?: number } | undefined {
	if (Array.isArray(body)) return { items: body };
	if (typeof body !== 'object' || body === null) return undefined;
	const record = body as Record<string, unknown>;
	const total = (value: unknown) =>
		typeof value === 'number' && Number.isFinite(value) ? value : undefined;
	if (Array.isArray(record.data)) return { items: record.data, total: total(record.total) };
	for (const container of [record.data, record]) {
		if (typeof container !== 'object' || container === null) continue;
		const inner = container as Record<string, unknown>;
		for (const key of LIST_KEYS) {
			if (Array.isArray(inner[key])) {
				return { items: inner[key] as unknown[], total: total(inner.total) ?? total(record.total) };
			}
		}
	}
	return undefined;
}

/** The list of sends, in whichever of those shapes it came, with its elements checked. */
export const sendListSchema = z.unknown().transform((body, context) => {
	const list = extractSendList(body);
	const items = list && z.array(listedNotificationSchema).safeParse(list.items);
	if (!list || !items?.success) {
		context.addIssue({ code: z.ZodIssueCode.custom, message: 'not a list of sends' });
		return z.NEVER;
	}
	return { items: items.data, total: list.total };
});

/** A short, printable excerpt of what came back, for error messages about unexpected shapes. */
export function excerpt(value: unknown, max = 300): string {
	let text: string;
	if (typeof value === 'string') text = value;
	else {
		try {
			text = JSON.stringify(value);
		} catch {
			text = String(value);
		}
	}
	if (text === undefined) return String(value);
	return text.length > max ? `${text.slice(0, max)}…` : text;
}

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

/** One page of the list of sends, as read. */
export interface SendListPage {
	items: ListedNotification[];
	total?: number;
	/** The server's clock when it answered (its Date header), when it sent one. */
	serverTimeMs?: number;
}

/** The endpoint a request goes to, as the spec names it (`GET /push-notification/{id}`), for messages. */
export function endpointOf(method: string, path: string): string {
	const named = path.replace(
		/^\/push-notification\/(?!send$|list$)[^/]+/,
		'/push-notification/{id}',
	);
	return `${method} ${named}`;
}
