import type {
	DeliveryRecord,
	DeliveryStatus,
	NotificationStats,
	SandboxDevice,
	SendStatus,
} from '../types.cts';

/**
 * The life of a send is planned when it is registered and read at any clock time, so moving the
 * clock is all it takes to "run" dispatches, deliveries and retries: nothing runs in the background.
 *
 * Rounds: the first delivery attempts settle `deliveryMs` after dispatch (round 1); retries of
 * transient failures follow at the same interval (rounds 2 and 3). Per phone behaviour:
 * - ok:          round 1 sent
 * - uninstalled: round 1 failed, never retried (spec "What the service does" 8, permanent)
 * - flaky:       round 1 failed, round 2 sent (transient, retried automatically)
 * - unreachable: rounds 1-3 failed, then given up (transient that persists)
 * Users without an active app get one `no_device` entry at round 1 (spec Delivery record).
 */

export const MAX_ATTEMPTS = 3;

export type Outcome = SandboxDevice['behaviour'] | 'noDevice';

export interface PlannedDelivery {
	userId: string;
	outcome: Outcome;
	/** When the sandbox taps it by itself (autoTapShare), or null. */
	autoOpenAt: number | null;
	/** When tap() opened it, or null. */
	tappedAt: number | null;
}

export interface Timeline {
	dispatchAt: number;
	deliveryMs: number;
	canceledAt: number | null;
	deliveries: PlannedDelivery[];
	targetedUsers: number;
}

/** One entry per active phone, or a single no_device entry for a user without an active app. */
export function planDeliveries(
	targets: Array<{ userId: string; devices: SandboxDevice[] }>,
): PlannedDelivery[] {
	const planned: PlannedDelivery[] = [];
	for (const { userId, devices } of targets) {
		const activePhones = devices.filter((device) => device.session === 'active');
		if (activePhones.length === 0)
			planned.push({ userId, outcome: 'noDevice', autoOpenAt: null, tappedAt: null });
		for (const phone of activePhones)
			planned.push({ userId, outcome: phone.behaviour, autoOpenAt: null, tappedAt: null });
	}
	return planned;
}

export const roundAt = (timeline: Timeline, round: number) =>
	timeline.dispatchAt + round * timeline.deliveryMs;

/** When the phone got the notification, or null if it never will. */
export function deliveredAt(timeline: Timeline, delivery: PlannedDelivery): number | null {
	if (delivery.outcome === 'ok') return roundAt(timeline, 1);
	if (delivery.outcome === 'flaky') return roundAt(timeline, 2);
	return null;
}

/** When no delivery will change any more (apart from opens). */
export function settledAt(timeline: Timeline): number {
	const outcomes = new Set(timeline.deliveries.map((delivery) => delivery.outcome));
	if (outcomes.has('unreachable')) return roundAt(timeline, MAX_ATTEMPTS);
	if (outcomes.has('flaky')) return roundAt(timeline, 2);
	return roundAt(timeline, 1);
}

/** The delivery entry as the API shows it at `now`, or undefined before round 1. */
export function deliveryAt(
	timeline: Timeline,
	delivery: PlannedDelivery,
	now: number,
): DeliveryRecord | undefined {
	const first = roundAt(timeline, 1);
	if (timeline.canceledAt !== null || now < first) return undefined;
	const entry = (
		status: DeliveryStatus,
		at: number,
		openedAt: number | null = null,
	): DeliveryRecord => ({
		user_id: delivery.userId,
		status,
		sent_at: iso(at),
		opened_at: openedAt === null ? null : iso(openedAt),
	});
	switch (delivery.outcome) {
		case 'noDevice':
			return entry('no_device', first);
		case 'uninstalled':
			return entry('failed', first);
		case 'unreachable':
			return entry(
				'failed',
				roundAt(timeline, Math.min(MAX_ATTEMPTS, attemptsSoFar(timeline, now))),
			);
		case 'flaky':
		case 'ok': {
			const reached = deliveredAt(timeline, delivery) as number;
			if (now < reached) return entry('failed', first); // flaky, waiting for its retry
			const openedAt = openedAtBy(delivery, now);
			return openedAt === null ? entry('sent', reached) : entry('opened', reached, openedAt);
		}
	}
}

export function openedAtBy(delivery: PlannedDelivery, now: number): number | null {
	const times = [delivery.tappedAt, delivery.autoOpenAt].filter(
		(at): at is number => at !== null && at <= now,
	);
	return times.length === 0 ? null : Math.min(...times);
}

export interface SendView {
	status: SendStatus;
	sentAt: number | null;
	deliveries: DeliveryRecord[];
	stats: NotificationStats;
}

/**
 * Status and counters at `now`. Counters are always derived from the visible entries:
 * devices = entries of phones (sent + opened + failed), sent = sent + opened (an opened
 * notification was delivered), failed, opened, no_device = no_device entries,
 * targeted_users = distinct recipients of the caller's organization.
 */
export function viewAt(
	timeline: Timeline,
	scheduled: boolean,
	now: number,
	retriesVisible: boolean,
): SendView {
	const stats: NotificationStats = {
		targeted_users: timeline.targetedUsers,
		devices: 0,
		sent: 0,
		failed: 0,
		opened: 0,
		no_device: 0,
	};
	if (timeline.canceledAt !== null)
		return { status: 'canceled', sentAt: null, deliveries: [], stats };
	if (now < timeline.dispatchAt)
		return { status: scheduled ? 'scheduled' : 'sending', sentAt: null, deliveries: [], stats };

	const deliveries: DeliveryRecord[] = [];
	for (const planned of timeline.deliveries) {
		const entry = deliveryAt(timeline, planned, now);
		if (!entry) continue;
		deliveries.push(entry);
		if (entry.status === 'no_device') stats.no_device++;
		else stats.devices++;
		if (entry.status === 'sent' || entry.status === 'opened') stats.sent++;
		if (entry.status === 'opened') stats.opened++;
		if (entry.status === 'failed') stats.failed++;
	}
	return {
		status: sendStatus(timeline, now, stats, retriesVisible),
		sentAt: timeline.dispatchAt,
		deliveries,
		stats,
	};
}

/**
 * Spec send states: `sent` = delivered to all available devices (users without a device are no
 * failure, so a send that reaches nobody but no_device users is `sent`); `partially_failed` =
 * some reached, some failed; `failed` = reached no device. While retries run the state may move
 * (partially_failed -> sent) unless retriesVisible is off, which keeps `sending` until they end.
 */
function sendStatus(
	timeline: Timeline,
	now: number,
	stats: NotificationStats,
	retriesVisible: boolean,
): SendStatus {
	if (now < roundAt(timeline, 1)) return 'sending';
	if (!retriesVisible && now < settledAt(timeline)) return 'sending';
	if (stats.failed === 0) return 'sent';
	return stats.sent === 0 ? 'failed' : 'partially_failed';
}

function attemptsSoFar(timeline: Timeline, now: number): number {
	if (timeline.deliveryMs === 0) return MAX_ATTEMPTS;
	return Math.floor((now - timeline.dispatchAt) / timeline.deliveryMs);
}

export const iso = (ms: number) => new Date(ms).toISOString();
