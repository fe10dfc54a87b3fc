import { DateTime } from 'luxon';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import {
	checkTimeZone,
	deliveryTimeIn,
	parseQuietHours,
	parseTimeOfDay,
	sameZoneKey,
} from '../../../input/deliveryTime';
import type { DeliveryRule, DeliveryTime } from '../../../input/deliveryTime';
import { fieldError } from '../../../nodeErrors';
import type { CheckedItem, DeliveryPolicy, SendGroup } from './types';

/*
 * "Deliver at Local Time" and "Quiet Hours": read with the other input on an item that has either
 * (readDeliveryPolicy), then, for one send group, its recipients split by time zone
 * (each item's "Recipient Time Zone", or the workflow's), each zone with its own delivery time. The
 * plan then splits each zone into batches; all of them stay one group, so an Idempotency Key still
 * covers the whole item and a later run sends only the zones and batches not yet accepted.
 */

/** Whether an option of the Options collection was added and given a value. */
function isSet(value: unknown): boolean {
	return value !== undefined && !(typeof value === 'string' && value.trim() === '');
}

/** The options "Deliver at Local Time", "Quiet Hours", "Critical" and "Recipient Time Zone" of an
 * item; undefined when neither a local time nor quiet hours apply. */
export function readDeliveryPolicy(
	context: IExecuteFunctions,
	options: IDataObject,
	itemIndex: number,
	userIds: string[],
): DeliveryPolicy | undefined {
	const policy: DeliveryPolicy = { timeZoneMissing: false };
	if (isSet(options.deliverAtLocalTime)) {
		const localTime = parseTimeOfDay(options.deliverAtLocalTime);
		if ('problem' in localTime)
			throw fieldError(context, 'Deliver at Local Time', localTime.problem, itemIndex, 'item');
		policy.localTime = localTime;
	}
	if (isSet(options.quietHours)) {
		const quietHours = parseQuietHours(options.quietHours);
		if ('problem' in quietHours)
			throw fieldError(context, 'Quiet Hours', quietHours.problem, itemIndex, 'item');
		// Checked even when Critical: the same workflow sends non-critical items with it too.
		if (options.critical !== true) policy.quietHours = quietHours;
	}
	if (!policy.localTime && !policy.quietHours) return undefined;
	if ('recipientTimeZone' in options) {
		const more = userIds.length > 5 ? ` and ${userIds.length - 5} more` : '';
		const whose = userIds.length > 0 ? `of ${userIds.slice(0, 5).join(', ')}${more}` : '';
		const zone = checkTimeZone(options.recipientTimeZone, whose);
		if ('problem' in zone)
			throw fieldError(context, 'Recipient Time Zone', zone.problem, itemIndex, 'item');
		if ('zone' in zone) policy.recipientTimeZone = zone.zone;
		else policy.timeZoneMissing = true;
	}
	return policy;
}

/** The recipients of one time zone and when they get the send. */
export interface ZonePart {
	recipients: string[];
	delivery: DeliveryTime;
	/** Recipients whose item gave no time zone: they got the workflow's. */
	usersWithoutTimeZone: Set<string>;
}

/** The rule of the group's lead: its local time and quiet hours; for Schedule, its day or time. */
function ruleOf(lead: CheckedItem): DeliveryRule {
	const { localTime, quietHours } = lead.delivery!;
	const rule: DeliveryRule = { localTime, quietHours };
	if (lead.scheduledAtWithOffset === undefined) return rule;
	const scheduledAt = DateTime.fromISO(lead.scheduledAtWithOffset, { setZone: true });
	// With a local time, Scheduled At names the day (as written); otherwise it is the time itself.
	if (localTime) rule.day = scheduledAt.toISODate()!;
	else rule.atMs = scheduledAt.toMillis();
	return rule;
}

/** The zone of each recipient: the first item that names them decides. */
function zonesOf(group: SendGroup, workflowZone: string) {
	const zoneOf = (item: CheckedItem) => item.delivery?.recipientTimeZone ?? workflowZone;
	const byUser = new Map<string, CheckedItem>();
	for (const item of group.items)
		for (const userId of item.userIds) if (!byUser.has(userId)) byUser.set(userId, item);
	// Audiences read from the API (all users, active users) take the lead's zone.
	return (userId: string) => {
		const item = byUser.get(userId) ?? group.lead;
		return { zone: zoneOf(item), missing: item.delivery?.timeZoneMissing === true };
	};
}

/** The group's recipients by time zone, in the order their zones first appear, or a problem with
 * the day Schedule gave (already over in some zone). Two names of one zone (the workflow's
 * Asia/Kolkata, a person's Asia/Calcutta) are one part, shown by the name that came first. */
export function zoneParts(
	group: SendGroup,
	recipients: string[],
	workflowZone: string,
	nowMs: number,
): ZonePart[] | { problem: string } {
	const rule = ruleOf(group.lead);
	const zoneOf = zonesOf(group, workflowZone);
	const parts = new Map<string, ZonePart>();
	const keys = new Map<string, string>(); // a name's key, found once per name, not once per person
	for (const userId of recipients) {
		const { zone, missing } = zoneOf(userId);
		const key = keys.get(zone) ?? sameZoneKey(zone);
		keys.set(zone, key);
		let part = parts.get(key);
		if (!part) {
			const delivery = deliveryTimeIn(zone, rule, nowMs);
			if ('problem' in delivery) return delivery;
			part = { recipients: [], delivery, usersWithoutTimeZone: new Set() };
			parts.set(key, part);
		}
		part.recipients.push(userId);
		if (missing) part.usersWithoutTimeZone.add(userId);
	}
	return [...parts.values()];
}
