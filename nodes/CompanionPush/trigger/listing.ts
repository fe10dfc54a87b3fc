import { NodeOperationError } from 'n8n-workflow';
import type { IPollFunctions } from 'n8n-workflow';

import { parseTime } from '../common/time';
import { isListProbe, listNotifications } from '../transport';
import type { ListedNotification } from '../transport';
import { listingEndsAt, MAX_RECENT_IDS } from './state';
import type { TriggerState } from './state';

/** What a reading of the list could not reach (see readListing). */
export interface Unread {
	/** How far down the reading had to go: the state's floor (server time, ms). */
	floor: number;
	/** The oldest created_at the reading met (ms), when it met one. */
	oldestRead?: number;
	/** Sends the reading met. */
	read: number;
	/** The sends the list counts in all, when it says. */
	total?: number;
}

export interface Listing {
	/** The sends read, newest first. */
	sends: ListedNotification[];
	/** The server's clock at the first page (its Date header), else the host's. */
	now: number;
	/** Set when the reading did not reach the floor: then it proves nothing about the sends below
	 * what it met, and the trigger must not take it as complete. */
	unread?: Unread;
}

/**
 * Reads the list of sends newest first, down to the state's floor (see state.ts), and says whether
 * the reading got there. It did when it met a send below the floor, or the list showed its end (an
 * empty page, or its `total` reached). It did not when the transport stopped at a page holding only
 * sends already read: an API that ignores `skip` answers its newest page again and again (or the
 * list moved by a whole page between two reads), so what lies beyond it was not read. That holds
 * also when the reading found nothing new: sends already known do not prove that none lies below.
 * The first poll (no state) reads at most MAX_RECENT_IDS down to its own time: a starting point,
 * complete by definition.
 */
export async function readListing(
	context: IPollFunctions,
	state: TriggerState | undefined,
): Promise<Listing> {
	let serverNow: number | undefined;
	const idsRead = new Set<string>();
	let total: number | undefined;
	let lastPageRepeated = false;
	const listed = await listNotifications(context, {
		max: state ? undefined : MAX_RECENT_IDS,
		onPage: (page) => {
			serverNow ??= page.serverTimeMs ?? Date.now();
			total = page.total ?? total;
			lastPageRepeated = page.items.length > 0 && page.items.every((send) => idsRead.has(send.id));
			for (const send of page.items) idsRead.add(send.id);
		},
		stopWhen: (send) => listingEndsAt(state, send, state?.listed.floor ?? serverNow),
	});
	const sends = listed.filter((send) => !isListProbe(send)); // sends to nobody a lookup made
	const now = serverNow ?? Date.now();
	if (!state || !lastPageRepeated) return { sends, now };
	const createdTimes = sends
		.map((send) => parseTime(send.created_at))
		.filter((time): time is number => time !== undefined);
	return {
		sends,
		now,
		unread: {
			floor: state.listed.floor,
			oldestRead: createdTimes.length > 0 ? Math.min(...createdTimes) : undefined,
			read: idsRead.size,
			total,
		},
	};
}

/** The error a poll reports for a reading that could not reach the floor: n8n records it as a failed
 * execution (the executions list, and the error workflow), as it does for any polling trigger that
 * throws, and the poll changes nothing, so the next one can still catch up. */
export class ListOutOfReachError extends NodeOperationError {}

const iso = (ms: number) => new Date(ms).toISOString();

export function listOutOfReach(context: IPollFunctions, unread: Unread): ListOutOfReachError {
	const counted = unread.total === undefined ? '' : ` of the ${unread.total} it counts`;
	const below = unread.oldestRead === undefined ? '' : ` and ${iso(unread.oldestRead)}`;
	return new ListOutOfReachError(
		context.getNode(),
		`The list of notifications could not be read as far as needed: it answered a later page with notifications already read (it seems to ignore "skip"), so only the newest ${unread.read}${counted} could be read`,
		{
			description:
				`Notifications created between ${iso(unread.floor)}${below} (the API's clock) may not have been read, so their events are not reported yet. ` +
				'The next poll reads the list again and reports them if it can. If it cannot either, the trigger goes on from the newest notification it read, and the events of those notifications are not reported: check them in your push service.',
		},
	);
}
