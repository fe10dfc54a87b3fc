import { randomUUID } from 'node:crypto';
import { ApiError } from '../apiError.cts';
import type { SeededOrg } from '../directory.cts';
import { unitFloat } from '../random.cts';
import type { NotificationRecord, SandboxSettings } from '../types.cts';
import { shownTime } from './shownTimes.cts';
import { storedInput } from './storage.cts';
import { targetedUsersOf } from './storedForms.cts';
import {
	deliveredAt,
	deliveryAt,
	iso,
	planDeliveries,
	settledAt,
	viewAt,
	type SendView,
	type Timeline,
} from './timeline.cts';
import type { SendInput } from './validation.cts';

/** A registered send. Its whole future is in `timeline`; views are computed at a clock time. */
export interface StoredNotification {
	seq: number;
	id: string;
	orgId: string;
	/** What the API stored (see storage.ts); `target_user_ids` as sent. */
	input: SendInput;
	/** Registration time on the API's clock (created_at); later than the request with registerAfterMs. */
	createdAt: number;
	/** Registration time on the sandbox's own clock, which a step of the API's clock (clockOffsetMs)
	 * does not move: a send once registered stays registered, and listed once its lag is over. */
	registeredAt: number;
	/** Listed this long after createdAt, replacing listLagMs (a fault's listDelayMs); null = listLagMs. */
	listDelayMs: number | null;
	/** scheduled_at was in the future when it was registered. */
	scheduled: boolean;
	/** Distinct recipients of the caller's org (ids of other orgs are silently dropped, spec 10). */
	ownTargetIds: string[];
	timeline: Timeline;
	/** After this time only a tap or a cancel can change the view (so views can be cached). */
	quietAt: number;
	/** Bumped by tap and cancel, so a cached view is never stale. */
	version: number;
	cache?: { now: number; version: number; retriesVisible: boolean; view: SendView };
}

export class NotificationStore {
	private readonly byId = new Map<string, StoredNotification>();
	private seq = 0;

	/**
	 * Registers a send (spec: "Every accepted request creates a new send") at `now` on the API's clock,
	 * which is later than the request when a fault delays the registration.
	 */
	create(
		org: SeededOrg,
		sent: SendInput,
		now: number,
		settings: SandboxSettings,
		listDelayMs: number | null = null,
	): StoredNotification {
		const id = randomUUID();
		const input = storedInput(sent, settings);
		const scheduledMs = input.scheduled_at === null ? null : Date.parse(input.scheduled_at);
		const scheduled = scheduledMs !== null && scheduledMs > now;
		const ownTargetIds = [...new Set(input.target_user_ids)].filter((userId) =>
			org.hasUser(userId),
		);
		const timeline: Timeline = {
			// Spec Limits: dispatch "up to a couple of minutes after the indicated time".
			dispatchAt: scheduled ? scheduledMs + settings.scheduleLatenessMs : now,
			deliveryMs: settings.deliveryMs,
			canceledAt: null,
			deliveries: planDeliveries(
				ownTargetIds.map((userId) => ({ userId, devices: org.devicesOf(userId) })),
			),
			targetedUsers: targetedUsersOf(input.target_user_ids, ownTargetIds, settings),
		};
		timeline.deliveries.forEach((delivery, index) => {
			const reached = deliveredAt(timeline, delivery);
			if (reached !== null && unitFloat(id, index, 'tap') < settings.autoTapShare) {
				delivery.autoOpenAt = reached + settings.autoTapAfterMs;
			}
		});
		const stored: StoredNotification = {
			seq: ++this.seq,
			id,
			orgId: org.id,
			input,
			createdAt: now,
			registeredAt: now - settings.clockOffsetMs,
			listDelayMs,
			scheduled,
			ownTargetIds,
			timeline,
			quietAt: quietAt(timeline),
			version: 0,
		};
		this.byId.set(id, stored);
		return stored;
	}

	get(id: string): StoredNotification | undefined {
		return this.byId.get(id);
	}

	/** Spec GET /push-notification/{id}: 404 when it does not exist (or is not registered yet at `now`,
	 * the API's clock, `clockOffsetMs` ahead of the sandbox's), 403 when another org's. */
	getForOrg(id: string, orgId: string, now: number, clockOffsetMs: number): StoredNotification {
		const stored = this.byId.get(id);
		if (!stored || stored.registeredAt > now - clockOffsetMs)
			throw new ApiError(404, 'not_found', `Push notification ${id} not found`);
		if (stored.orgId !== orgId)
			throw new ApiError(
				403,
				'forbidden',
				'This push notification belongs to another organization',
			);
		return stored;
	}

	/** Sends of one org (or all), newest first, those to be registered later included (spec GET /push-notification/list). */
	list(orgId?: string): StoredNotification[] {
		const all = [...this.byId.values()].filter(
			(stored) => orgId === undefined || stored.orgId === orgId,
		);
		return all.sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq);
	}

	view(stored: StoredNotification, now: number, retriesVisible: boolean): SendView {
		const cache = stored.cache;
		const quiet = stored.quietAt;
		if (
			cache &&
			cache.version === stored.version &&
			cache.retriesVisible === retriesVisible &&
			(cache.now === now || (cache.now >= quiet && now >= quiet))
		) {
			return cache.view;
		}
		const view = viewAt(stored.timeline, stored.scheduled, now, retriesVisible);
		stored.cache = { now, version: stored.version, retriesVisible, view };
		return view;
	}

	/** Spec cancel: only while `scheduled`, else 409 and the send is unchanged. */
	cancel(stored: StoredNotification, now: number): void {
		const { status } = this.view(stored, now, true);
		if (status !== 'scheduled') {
			throw new ApiError(
				409,
				'not_scheduled',
				`The push notification is ${status}; only a scheduled one can be canceled`,
			);
		}
		stored.timeline.canceledAt = now;
		stored.version++;
	}

	/**
	 * Spec Delivery states: `sent` -> `opened` when the person taps. `deviceIndex` picks the n-th
	 * delivery entry of that user; without it the first entry still `sent` is tapped.
	 */
	tap(notificationId: string, userId: string, now: number, deviceIndex?: number): void {
		const stored = this.byId.get(notificationId);
		if (!stored) throw new TapError(404, `no push notification ${notificationId}`);
		const entries = stored.timeline.deliveries.filter((delivery) => delivery.userId === userId);
		if (entries.length === 0)
			throw new TapError(404, `user ${userId} got no delivery of ${notificationId}`);
		const statusOf = (index: number) =>
			deliveryAt(stored.timeline, entries[index], now)?.status ?? 'not delivered yet';
		let index = deviceIndex;
		if (index === undefined) {
			index = entries.findIndex((_, candidate) => statusOf(candidate) === 'sent');
			if (index < 0)
				throw new TapError(
					409,
					`no delivery of user ${userId} is in state sent (${entries.map((_, i) => statusOf(i)).join(', ')})`,
				);
		}
		if (!Number.isInteger(index) || index < 0 || index >= entries.length) {
			throw new TapError(
				404,
				`user ${userId} has ${entries.length} delivery entries; deviceIndex ${index} does not exist`,
			);
		}
		const status = statusOf(index);
		if (status !== 'sent')
			throw new TapError(409, `delivery ${index} of user ${userId} is ${status}, not sent`);
		entries[index].tappedAt = now;
		stored.version++;
	}

	clear(): void {
		this.byId.clear();
	}
}

export class TapError extends Error {
	constructor(
		readonly status: 404 | 409,
		message: string,
	) {
		super(`tap refused: ${message}`);
	}
}

function quietAt(timeline: Timeline): number {
	let quiet = settledAt(timeline);
	for (const delivery of timeline.deliveries) {
		if (delivery.autoOpenAt !== null && delivery.autoOpenAt > quiet) quiet = delivery.autoOpenAt;
	}
	return quiet;
}

/** The fields of the spec's notification record, shared by the public record and the internal view. */
function recordFields(stored: StoredNotification, view: SendView) {
	return {
		id: stored.id,
		title: stored.input.title,
		body: stored.input.body,
		image_url: stored.input.image_url,
		deeplink: stored.input.deeplink,
		status: view.status,
		scheduled_at: stored.scheduled ? stored.input.scheduled_at : null,
		sent_at: view.sentAt === null ? null : iso(view.sentAt),
		stats: { ...view.stats },
		created_at: iso(stored.createdAt),
	};
}

/** The notification record of the spec's table; `announcement_id` only when the switch is on, a past
 * `scheduled_at` as sent only when pastScheduledAtShownAs says so, its times without a zone when
 * timesWithoutZone says so. */
export function publicRecord(
	stored: StoredNotification,
	view: SendView,
	settings: SandboxSettings,
): Record<string, unknown> {
	const record: Record<string, unknown> = recordFields(stored, view);
	// A past scheduled_at (sent at once): shown as null unless the switch shows the time sent.
	if (
		settings.pastScheduledAtShownAs === 'asSent' &&
		!stored.scheduled &&
		stored.input.scheduled_at !== null
	)
		record.scheduled_at = stored.input.scheduled_at;
	if (settings.recordIncludesAnnouncementId) record.announcement_id = stored.input.announcement_id;
	for (const field of ['scheduled_at', 'sent_at', 'created_at'] as const)
		record[field] = shownTime(record[field] as string | null, settings.timesWithoutZone);
	return record;
}

/** Shown by the list at `now` (the API's clock, `clockOffsetMs` ahead of the sandbox's): registered,
 * and its list lag (its own, else `listLagMs`) is over, on the sandbox's clock (a step of the API's
 * clock neither hides a registered send nor shows one early). */
export function isListed(
	stored: StoredNotification,
	now: number,
	{ listLagMs, clockOffsetMs }: { listLagMs: number; clockOffsetMs: number },
): boolean {
	return now - clockOffsetMs >= stored.registeredAt + (stored.listDelayMs ?? listLagMs);
}

/** The internal view for tests (sandbox.notifications()): the record plus what the API does not show. */
export function internalRecord(stored: StoredNotification, view: SendView): NotificationRecord {
	return {
		...recordFields(stored, view),
		orgId: stored.orgId,
		announcement_id: stored.input.announcement_id,
		target_user_ids: [...stored.input.target_user_ids],
		deliveries: view.deliveries.map((delivery) => ({ ...delivery })),
	};
}
