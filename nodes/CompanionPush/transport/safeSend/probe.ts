import { randomBytes } from 'crypto';

import { timings } from '../../common/timings';
import { readJson, serverTimeMs } from '../answers';
import { cancelNotification } from '../endpoints';
import { credentialKey } from '../http';
import type { CompanionPushContext } from '../http';
import { Tries } from '../retry';
import { sendAcceptedSchema } from '../schemas';
import type { SendRequest } from '../schemas';
import { noteApiClock, watchSendsMadeSince } from './listings';
import { recordOwner } from './registry';

/*
 * List probes: the evidence a lookup after a lost answer (lookup.ts) makes when nothing else shows
 * that the list of sends is up to date past the loss (a quiet organization, a first send). A probe
 * is a send to nobody: its one recipient is an id that cannot be a user (spec: "IDs outside the
 * caller's organization do not receive the notification"), scheduled a year ahead and canceled as
 * soon as it is accepted. It is recorded as a send of this process with the moment it went out
 * (registry.ts), so once the list shows it, it shows the list current past every answer lost
 * before it went out, as any later send of this process does.
 * - One probe serves every lookup of the credential whose answer was lost before it went out: a
 *   lookup that finds one under way waits for it.
 * - Made only when needed: after the settle wait, when nothing shows the list current past the
 *   loss and no send of this process made after the loss is on its way to the list.
 * - A probe whose answer is lost (5xx, no answer) or refused is never tried again at once, and never
 *   looked up: a lookup may make another one later, at most one per settle wait per credential and
 *   MAX_PROBES_PER_LOOKUP in all. No probe listed within the lookup's wait: "unknown", as without.
 * - A cancel that fails is not reported: the probe then stays a send to nobody scheduled a year
 *   ahead (the organization may cancel it in its console).
 * The readers of the list that show sends (Get Many, Get Report, the trigger) leave probes out
 * (isListProbe).
 */

/** What a probe says, in the organization's list of sends. */
export const PROBE_TITLE = 'List check (n8n)';
const PROBE_NOTE =
	'sent to nobody and canceled at once: n8n checks that the list of sends is up to date';
/** The recipient of a probe: no user id has this shape. The body starts with it too, so that a
 * probe is told from a detail or a list that does not show its recipients. */
const PROBE_RECIPIENT = /^companion-push-list-probe-[0-9a-f]{16}$/;
const PROBE_BODY = /^(companion-push-list-probe-[0-9a-f]{16}): /;
const PROBE_SCHEDULED_AHEAD_MS = 365 * 24 * 60 * 60_000;
/** Probes one lookup may make, its lost or refused ones included. */
const MAX_PROBES_PER_LOOKUP = 3;

/** Whether a send (listed, or a detail's record) is a list probe: its title, and a body and
 * recipients (when shown) that name a probe recipient. */
export function isListProbe(send: {
	title?: unknown;
	body?: unknown;
	target_user_ids?: unknown;
}): boolean {
	if (send.title !== PROBE_TITLE || typeof send.body !== 'string') return false;
	const named = PROBE_BODY.exec(send.body)?.[1];
	if (named === undefined) return false;
	const recipients = send.target_user_ids;
	return (
		recipients === undefined ||
		(Array.isArray(recipients) &&
			recipients.length === 1 &&
			recipients[0] === named &&
			PROBE_RECIPIENT.test(named))
	);
}

/** The newest probe attempt of a credential: when it started, and whether its request is still out. */
interface ProbeAttempt {
	startedAt: number;
	/** Whether it was accepted, once answered. */
	done: Promise<boolean>;
	underWay: boolean;
}

/** Per credential, in this process. A restart forgets them: the next lookup makes a new one. */
const newestProbes = new Map<string, ProbeAttempt>();
/** Probes each lookup made (by its Lookup object). */
const probesMadeBy = new WeakMap<object, number>();

/** Forgets the probes of this process (tests, with resetProcessState). */
export function forgetProbes(): void {
	newestProbes.clear();
}

/**
 * Called by a lookup (`lookup`, its Lookup) whose answer was lost by `lostBy` (n8n's clock), once its
 * settle wait is over and nothing showed the list current past the loss: makes a probe, or waits for
 * the one under way, unless a send of this process made since the loss is already on its way to the
 * list or the bounds above say no. Resolves once the probe was answered (and canceled): true when a
 * probe was accepted, so that the lookup reads the list at once; never throws.
 */
export async function probeTheList(
	context: CompanionPushContext,
	lookup: { itemIndex?: number },
	lostBy: number,
): Promise<boolean> {
	const { firstListedAt, newestUnlistedSentAt } = watchSendsMadeSince(context, lostBy);
	if (firstListedAt !== undefined || newestUnlistedSentAt !== undefined) return false;
	const key = credentialKey(context);
	const newest = newestProbes.get(key);
	if (newest?.underWay && newest.startedAt >= lostBy) return await newest.done;
	// A clock set back since (a negative age) does not hold probes back.
	const age = newest === undefined ? Infinity : Date.now() - newest.startedAt;
	if (age >= 0 && age < timings().lookupSettleMs) return false;
	const made = probesMadeBy.get(lookup) ?? 0;
	if (made >= MAX_PROBES_PER_LOOKUP) return false;
	probesMadeBy.set(lookup, made + 1);
	const attempt: ProbeAttempt = {
		startedAt: Date.now(),
		done: Promise.resolve(false),
		underWay: true,
	};
	attempt.done = sendProbe(context, lookup.itemIndex).finally(() => (attempt.underWay = false));
	newestProbes.set(key, attempt);
	return await attempt.done;
}

/** One probe: sent once (a lost or refused answer is left as it is), recorded, then canceled; whether
 * it was accepted. */
async function sendProbe(context: CompanionPushContext, itemIndex?: number): Promise<boolean> {
	const recipient = `companion-push-list-probe-${randomBytes(8).toString('hex')}`;
	const sentAt = Date.now();
	const request: SendRequest = {
		title: PROBE_TITLE,
		body: `${recipient}: ${PROBE_NOTE}`,
		target_user_ids: [recipient],
		// An explicit offset (Z): never read in another zone.
		scheduled_at: new Date(sentAt + PROBE_SCHEDULED_AHEAD_MS).toISOString(),
	};
	const tries = new Tries(context, {
		method: 'POST',
		path: '/push-notification/send',
		body: { ...request },
		action: 'Sending a list probe',
		itemIndex,
	});
	const answer = await tries.send().catch(() => undefined);
	if (answer?.kind === 'answer') noteApiClock(context, serverTimeMs(answer.headers), sentAt);
	if (answer?.kind !== 'answer' || answer.status < 200 || answer.status >= 300) return false;
	const json = readJson(answer.body);
	const accepted = json.ok ? sendAcceptedSchema.safeParse(json.value) : undefined;
	if (!accepted?.success) return false;
	const { id } = accepted.data.data;
	recordOwner(context, id, `probe:${recipient}`, request, sentAt);
	await cancelNotification(context, id, itemIndex).catch(() => undefined);
	return true;
}
