import type { IPollFunctions } from 'n8n-workflow';

import type { TriggerEvent } from '../events';
import { MAX_REMEMBERED_KEYS, MAX_WATCHED_CHARS, MAX_WATCHED_SENDS } from '../state';

/**
 * What the trigger says of a send it stops watching before its watch window ends, so that no
 * send leaves the watch list in silence: a `stoppedWatching` item for the workflow (whatever
 * Trigger On holds; once, as the send is forgotten with it) and a warning in n8n's log.
 * - `watchListFull`: the state's hard bounds (state.ts, ageOut) were reached and newer sends took
 *   its place (a send still scheduled gives its place first);
 * - `notFound`: the API answers 404 for it: nothing more can be read of it.
 */

export type DropReason = 'watchListFull' | 'notFound';

/** A send dropped in this poll, with what the poll knows of it. */
export interface DroppedSend {
	id: string;
	reason: DropReason;
	/** Its last status seen, and its title when the poll read or listed it. */
	status?: string;
	title?: string | null;
}

const count = (value: number) => value.toLocaleString('en-US');

const WHY: Record<DropReason, string> = {
	watchListFull:
		`The trigger stopped watching this notification before its watch window ended: it watches at most ${count(MAX_WATCHED_SENDS)} notifications, ` +
		`${count(MAX_REMEMBERED_KEYS)} events or people of the alert ladder and ${count(MAX_WATCHED_CHARS)} characters of them, and newer notifications took its place. ` +
		'Its later events (opens, failures, levels of Not Opened in Time) are not reported: follow it with Notification > Get Report, and use Filters or a shorter Watch Window.',
	notFound:
		'The API no longer knows this notification (it answers 404): the trigger stopped watching it, and no later event of it can be reported.',
};

export function stoppedWatchingEvent(dropped: DroppedSend): TriggerEvent {
	const { id, reason } = dropped;
	return {
		name: 'stoppedWatching',
		key: 'stoppedWatching',
		notificationId: id,
		json: {
			event: 'stoppedWatching',
			eventKey: `${id}:stoppedWatching`,
			notificationId: id,
			title: dropped.title ?? null,
			status: dropped.status ?? null,
			reason,
			message: WHY[reason],
		},
	};
}

/** n8n's log says it too, for those who read it rather than the executions. */
export function warnForgottenEarly(context: IPollFunctions, ids: string[]): void {
	const shown = ids.slice(0, 10).join(', ');
	context.logger.warn(
		`Companion Push Trigger: more notifications or events than it can remember (${count(MAX_WATCHED_SENDS)} notifications, ` +
			`${count(MAX_REMEMBERED_KEYS)} events or people of the alert ladder, ${count(MAX_WATCHED_CHARS)} characters); it stopped watching ${ids.length} before their watch window ended: ` +
			`${shown}${ids.length > 10 ? ', …' : ''}. Their later events are not reported (each has a stoppedWatching item): use Filters or a shorter Watch Window.`,
	);
}
