import type { IDataObject } from 'n8n-workflow';

import { isSettled } from '../common/sendStates';
import { parseTime } from '../common/time';
import { openedBy, outcomesByUser } from '../report/userOutcomes';
import type { UserOutcome } from '../report/userOutcomes';
import type { NotificationDetail, NotificationRecord } from '../transport';
import { incompleteFields, shortfallOf } from './detail/completeness';
import { deliveryFindings } from './detail/deliveryEvents';
import { deadlinesOf, levelKey, openedAfterEscalationKey } from './ladder';

export const TRIGGER_EVENTS = [
	'notificationSettled',
	'deliveryFailed',
	'deliveryOpened',
	'noDevice',
	'notReached',
	'notOpenedInTime',
	'openedAfterEscalation',
] as const;
export type TriggerEventName = (typeof TRIGGER_EVENTS)[number];
/** What the trigger could not tell, emitted whatever Trigger On holds (a dropped send is never
 * silent): a detail short of its counters (detail/completeness.ts), a send no longer watched. */
export type NoticeName = 'detailIncomplete' | 'stoppedWatching';
/** The events whose conclusion rests on what a detail does not show. */
const FROM_ABSENCE: readonly TriggerEventName[] = ['notReached', 'notOpenedInTime'];
/** The events that are one per person, whatever their phones. */
const PERSON_EVENTS: readonly TriggerEventName[] = [
	'noDevice',
	'notReached',
	'notOpenedInTime',
	'openedAfterEscalation',
];

export interface TriggerEvent {
	name: TriggerEventName | NoticeName;
	/** Key remembered with the send: `status:<state>`, `<userId>:<n>:<state>` (the person's n-th
	 * phone in that state, detail/deliveryEvents.ts), `detailIncomplete`, or `<userId>:noDevice` /
	 * `<userId>:notReached` / `<userId>:notOpened[:<level>]` / `<userId>:openedAfterEscalation` (a
	 * person, see ladder.ts). */
	key: string;
	/** The level of a Not Opened in Time event (1 for a single deadline). */
	level?: number;
	notificationId: string;
	json: IDataObject;
}

function baseFields(record: NotificationRecord): IDataObject {
	return { notificationId: record.id, title: record.title ?? null };
}

/**
 * The events a detail read shows that were not emitted yet. Pure: the caller remembers the keys.
 * - notificationSettled: the send is in a settled state not emitted before (a later change, e.g.
 *   after the service's automatic retries, is a new state: emitted again, with the old one);
 * - deliveryFailed / deliveryOpened: a phone's delivery `failed` (once the send has settled:
 *   before, the service may still be on its first round) / was opened (detail/deliveryEvents.ts);
 * - noDevice: a person has no active app on any phone (their single `no_device` entry), once the
 *   send has settled;
 * - notReached: no phone reached a person, once the send has settled: they have no active app
 *   (`no_device`) or every phone of theirs failed (an uninstalled app is `failed`, not `no_device`);
 * - notOpenedInTime: for each level (ladder.ts), `now` (the API's clock) is past its deadline (a
 *   time after the send went out, `sent_at`), and a person reached on a phone opened it on none by
 *   then; an open after the deadline does not undo it. A person already reported as not reached is
 *   not reported again (the service's own retries may reach them later);
 * - openedAfterEscalation: a person who got any level has opened it since, with the level reached;
 * - detailIncomplete (whatever is selected, once per send): the entries fall short of the counters
 *   (detail/completeness.ts); notReached for failed phones and notOpenedInTime then wait.
 * The person events are one per person, whatever their phones.
 */
export function detectEvents(input: {
	detail: NotificationDetail;
	previousStatus?: string;
	emittedKeys: ReadonlySet<string>;
	selected: ReadonlySet<TriggerEventName>;
	/** The API's time of this read (ms). */
	now: number;
	/** The ladder's deadlines, in ms after sending, when notOpenedInTime is selected. */
	openDeadlinesMs?: readonly number[];
}): TriggerEvent[] {
	const { detail, previousStatus, emittedKeys, selected, now, openDeadlinesMs } = input;
	const record = detail.notification;
	const events: TriggerEvent[] = [];
	const push = (
		name: TriggerEventName | NoticeName,
		key: string,
		json: IDataObject,
		level?: number,
	) => {
		const notice = name === 'detailIncomplete';
		if ((!notice && !selected.has(name as TriggerEventName)) || emittedKeys.has(key)) return;
		events.push({
			name,
			key,
			...(level === undefined ? {} : { level }),
			notificationId: record.id,
			json: { event: name, eventKey: `${record.id}:${key}`, ...json },
		});
	};

	const settled = isSettled(record.status);
	if (settled) {
		push('notificationSettled', `status:${record.status}`, {
			...baseFields(record),
			status: record.status,
			previousStatus: previousStatus && previousStatus !== record.status ? previousStatus : null,
			sentAt: record.sent_at ?? null,
			stats: (record.stats ?? {}) as IDataObject,
			notification: record as IDataObject,
		});
	}

	for (const { name, key, deliveryIndex, entry } of deliveryFindings(
		detail.deliveries,
		emittedKeys,
		settled,
	)) {
		const common = { ...baseFields(record), userId: entry.user_id, deliveryIndex };
		if (name === 'deliveryFailed')
			push(name, key, { ...common, status: 'failed', sentAt: entry.sent_at ?? null });
		else push(name, key, { ...common, openedAt: entry.opened_at ?? null });
	}

	// An incomplete detail: what it lists is told, nothing is concluded from what it leaves out.
	const shortfall = shortfallOf(detail);
	const phonesMissing = shortfall?.phonesMissing === true;
	if (shortfall) {
		const withheld = phonesMissing ? FROM_ABSENCE.filter((name) => selected.has(name)) : [];
		push('detailIncomplete', 'detailIncomplete', {
			...baseFields(record),
			status: record.status,
			stats: (record.stats ?? {}) as IDataObject,
			...incompleteFields(shortfall, withheld),
		});
	}

	if (!PERSON_EVENTS.some((name) => selected.has(name))) return events;
	const deadlines = deadlinesOf(record, openDeadlinesMs) ?? [];
	for (const outcome of outcomesByUser(detail.deliveries).values()) {
		if (settled && outcome.noDevice && outcome.phones === 0) {
			push('noDevice', `${outcome.userId}:noDevice`, noDeviceFields(record, outcome.userId));
		}
		const notReachedKey = `${outcome.userId}:notReached`;
		if (settled && reachedNoPhone(outcome) && (outcome.phones === 0 || !phonesMissing)) {
			push('notReached', notReachedKey, notReachedFields(record, outcome));
		}
		// Every level whose deadline passed while the person had opened on no phone: after a missed
		// or failed poll, all of them at once, so nobody skips a level.
		let levelReached = 0;
		for (const [index, deadline] of deadlines.entries()) {
			const level = index + 1;
			if (
				now < deadline ||
				phonesMissing ||
				outcome.phonesReached === 0 ||
				openedBy(outcome, deadline) ||
				emittedKeys.has(notReachedKey)
			)
				break;
			push(
				'notOpenedInTime',
				levelKey(outcome.userId, level),
				notOpenedFields(record, outcome, deadline, level),
				level,
			);
			levelReached = level;
		}
		// The highest level they got, at this read or before (a level is told only once all levels
		// below it were).
		while (
			levelReached < deadlines.length &&
			emittedKeys.has(levelKey(outcome.userId, levelReached + 1))
		)
			levelReached++;
		if (levelReached > 0 && outcome.phonesOpened > 0) {
			push(
				'openedAfterEscalation',
				openedAfterEscalationKey(outcome.userId),
				openedAfterEscalationFields(record, outcome, levelReached),
			);
		}
	}
	return events;
}

/** The person events carry the message itself, so a next step can pass it on another way. */
function personFields(record: NotificationRecord, userId: string | null): IDataObject {
	return { ...baseFields(record), body: record.body ?? null, userId };
}

function noDeviceFields(record: NotificationRecord, userId: string | null): IDataObject {
	return { ...personFields(record, userId), sentAt: record.sent_at ?? null };
}

/** True when the entries prove that no phone reached the person: their `no_device` entry, or phones
 * that all failed. An entry in a state this node does not know proves nothing. */
function reachedNoPhone(outcome: UserOutcome): boolean {
	if (outcome.phones === 0) return outcome.noDevice;
	return outcome.phonesFailed === outcome.phones;
}

function notReachedFields(
	record: NotificationRecord,
	outcome: UserOutcome | undefined,
): IDataObject {
	const phones = outcome?.phones ?? 0;
	return {
		...personFields(record, outcome?.userId ?? null),
		sentAt: record.sent_at ?? null,
		// Why no phone reached them: no active app, or each of their phones failed.
		reason: phones === 0 ? 'noDevice' : 'deliveryFailed',
		phonesFailed: outcome?.phonesFailed ?? 0,
	};
}

function notOpenedFields(
	record: NotificationRecord,
	outcome: UserOutcome | undefined,
	deadline: number | undefined,
	level: number,
): IDataObject {
	return {
		...personFields(record, outcome?.userId ?? null),
		sentAt: record.sent_at ?? null,
		level,
		deadline: deadline === undefined ? null : new Date(deadline).toISOString(),
		phonesReached: outcome?.phonesReached ?? 0,
		// An open after the deadline (the event stands: it came too late).
		openedAt:
			outcome?.firstOpenedAt === undefined ? null : new Date(outcome.firstOpenedAt).toISOString(),
	};
}

/** Time to open runs from `sent_at` to the first open, both on the API's clock; null when either
 * has no zone (common/time.ts: it places nothing) or the API did not say when. */
function openedAfterEscalationFields(
	record: NotificationRecord,
	outcome: UserOutcome | undefined,
	level: number,
): IDataObject {
	const sentAt = parseTime(record.sent_at);
	const openedAt = outcome?.openedAtUnknown ? undefined : outcome?.firstOpenedAt;
	return {
		...personFields(record, outcome?.userId ?? null),
		sentAt: record.sent_at ?? null,
		level,
		openedAt: openedAt === undefined ? null : new Date(openedAt).toISOString(),
		secondsToOpen:
			openedAt === undefined || sentAt === undefined
				? null
				: Math.round((openedAt - sentAt) / 1000),
	};
}

/**
 * A sample event of the first selected kind, built from a send, for "Fetch Test Event" when no
 * real event is there yet. It is marked `sample: true`.
 */
export function sampleEvent(
	detail: NotificationDetail,
	selected: readonly TriggerEventName[],
	openDeadlinesMs?: readonly number[],
): TriggerEvent {
	const record = detail.notification;
	const name = selected[0] ?? 'notificationSettled';
	const delivery = detail.deliveries[0];
	const common = { ...baseFields(record), userId: delivery?.user_id ?? null, deliveryIndex: 0 };
	let json: IDataObject;
	if (name === 'deliveryFailed')
		json = { ...common, status: 'failed', sentAt: delivery?.sent_at ?? null };
	else if (name === 'deliveryOpened') json = { ...common, openedAt: delivery?.opened_at ?? null };
	else if (name === 'noDevice') json = noDeviceFields(record, delivery?.user_id ?? null);
	else if (name === 'notReached')
		json = notReachedFields(
			record,
			delivery && outcomesByUser(detail.deliveries).get(delivery.user_id),
		);
	else if (name === 'notOpenedInTime') {
		const outcome = delivery && outcomesByUser(detail.deliveries).get(delivery.user_id);
		json = notOpenedFields(record, outcome, deadlinesOf(record, openDeadlinesMs)?.[0], 1);
	} else if (name === 'openedAfterEscalation') {
		const outcome = delivery && outcomesByUser(detail.deliveries).get(delivery.user_id);
		json = openedAfterEscalationFields(record, outcome, 1);
	} else {
		json = {
			...baseFields(record),
			status: record.status,
			previousStatus: null,
			sentAt: record.sent_at ?? null,
			stats: (record.stats ?? {}) as IDataObject,
			notification: record as IDataObject,
		};
	}
	return {
		name,
		key: 'sample',
		notificationId: record.id,
		json: { event: name, eventKey: `${record.id}:sample`, sample: true, ...json },
	};
}
