import { randomUUID } from 'crypto';

import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { asNodeError } from '../../../nodeErrors';
import { failedSendOutcome, getNotification, sendNotification } from '../../../transport';
import type { SendOutcome, SendRequest } from '../../../transport';
import { recordHolds } from './records';
import type { WindowRecord } from './records';
import { isoOf, withDescription } from './window';
import type { DigestEvent, ScopePlan, WindowSpan } from './window';

/* The send of one scope, once its window is decided (window.ts): the push that carries every event
 * of the window so far. A replacement the API refuses leaves the window without a send: its earlier
 * send is then made again as it was, so the events it carried still go out. */

/** The push of a window: the event's own message for one event; else the Digest Title with the
 * count, and the latest event's body, image and destination. */
function requestFor(events: DigestEvent[], window: WindowSpan): SendRequest {
	const latest = events[events.length - 1];
	const { title, body, image_url, deeplink, announcement_id } = latest.item.message;
	return {
		title:
			window.count === 1 ? title : latest.rule.title.replace(/\{count\}/g, String(window.count)),
		body,
		target_user_ids: [latest.userId],
		...(image_url ? { image_url } : {}),
		...(deeplink ? { deeplink } : {}),
		...(announcement_id ? { announcement_id } : {}),
		scheduled_at: isoOf(window.endSec),
	};
}

/** A send this run made: never the window's canceled send, which a lookup after a lost answer could
 * take for it (a replacement can look exactly like the send it replaces). */
function madeNow(outcome: SendOutcome, canceledSendId: string | undefined): boolean {
	return outcome.status !== 'canceled' && outcome.id !== canceledSendId;
}

/** Schedules the send of a scope whose window is decided. */
export async function scheduleStep(context: IExecuteFunctions, plan: ScopePlan): Promise<void> {
	const { events, reading, canceledSendId } = plan;
	const window = plan.window!;
	const itemIndex = events[0].item.itemIndex;
	const request = requestFor(events, window);
	try {
		const outcome = await sendNotification(context, request, itemIndex, {
			owner: `digest:${randomUUID()}`,
		});
		if (!madeNow(outcome, canceledSendId)) {
			// The lookup found only the canceled send: whether ours was made is not known.
			plan.placed = true;
			plan.result = {
				ok: false,
				unknown: true,
				error: new NodeOperationError(
					context.getNode(),
					"Digest: the outcome of the send is unknown: its answer was lost, and the list of sends shows only the window's canceled send, which is not this one",
					{
						itemIndex,
						description: `The canceled send is ${outcome.id}. The window's ${window.count - events.length} earlier event(s) go out only if this send was made: check the person's sends (Notification > Get Many) before running this item again.`,
					},
				),
			};
			return;
		}
		if (recordHolds(outcome.id)) plan.next = { sendId: outcome.id, ...window };
		else
			plan.notes.push(
				"the API's send id is too long to keep in n8n's store: the next event starts a new window",
			);
		plan.placed = true;
		plan.result = {
			ok: true,
			fields: {
				id: outcome.id,
				status: outcome.status,
				...(outcome.recoveredAfter ? { recoveredAfter: outcome.recoveredAfter } : {}),
				title: request.title,
				digestKey: plan.scope.digestKey,
				digestCount: window.count,
				digestWindowStart: isoOf(window.startSec),
				scheduledAt: request.scheduled_at,
				...(canceledSendId ? { replacedSendId: canceledSendId } : {}),
				...(plan.notes.length > 0 ? { digestNote: plan.notes.join('; ') } : {}),
			},
		};
	} catch (error) {
		const nodeError = asNodeError(context, error, itemIndex);
		const outcome = failedSendOutcome(error);
		plan.placed = outcome !== 'notSent';
		const earlier = window.count - events.length;
		let note = '';
		let restoreMayBeMade = false;
		if (canceledSendId && outcome === 'notSent') {
			({ note, mayBeMade: restoreMayBeMade } = await restoreEarlierSend(
				context,
				plan,
				canceledSendId,
				earlier,
			));
		} else if (canceledSendId) {
			const go =
				outcome === 'accepted'
					? 'go out with this send (the API accepted it)'
					: 'go out only if this send was made';
			note = ` The window's earlier send ${canceledSendId} was canceled, so its ${earlier} earlier event(s) ${go}.`;
		}
		// Refused, with nothing carrying the window: its record goes. Otherwise the mark of the
		// replacement stays: the next event starts a new window rather than guess.
		plan.dropOld =
			outcome === 'notSent' && reading.state === 'open' && !plan.next && !restoreMayBeMade;
		plan.result = {
			ok: false,
			unknown: outcome !== 'notSent',
			error: withDescription(nodeError, `Digest:${note}`),
		};
	}
}

/**
 * The replacement was refused after the window's earlier send was canceled: that send is made again
 * as the API shows it (its title, body, image, links), at the window's end, so the events it carried
 * still go out. What became of it, in words for the refused event's error.
 */
async function restoreEarlierSend(
	context: IExecuteFunctions,
	plan: ScopePlan,
	canceledSendId: string,
	earlier: number,
): Promise<{ note: string; mayBeMade: boolean }> {
	const { record } = plan.reading as { record: WindowRecord };
	const itemIndex = plan.events[0].item.itemIndex;
	const lost = ` The window's earlier send ${canceledSendId} was canceled`;
	let request: SendRequest;
	try {
		const { notification } = await getNotification(context, canceledSendId, itemIndex);
		const { title, body, image_url, deeplink } = notification;
		const announcementId = (notification as { announcement_id?: unknown }).announcement_id;
		if (!title || !body) throw new Error('the API does not show its title and body');
		request = {
			title,
			body,
			target_user_ids: [plan.scope.userId],
			...(image_url ? { image_url } : {}),
			...(deeplink ? { deeplink } : {}),
			...(typeof announcementId === 'string' && announcementId
				? { announcement_id: announcementId }
				: {}),
			scheduled_at: isoOf(record.endSec),
		};
	} catch (error) {
		return {
			note: `${lost} and could not be read to be made again (${(error as Error).message}), so its ${earlier} earlier event(s) will not go out.`,
			mayBeMade: false,
		};
	}
	try {
		const restored = await sendNotification(context, request, itemIndex, {
			owner: `digest:${randomUUID()}`,
		});
		if (!madeNow(restored, canceledSendId))
			throw Object.assign(new Error('only the canceled send is listed'), { unknown: true });
		if (recordHolds(restored.id)) plan.next = { ...record, sendId: restored.id };
		return {
			note: `${lost} and made again as ${restored.id}: its ${earlier} earlier event(s) still go out at ${isoOf(record.endSec)}; this event is not in it.`,
			mayBeMade: true,
		};
	} catch (error) {
		const outcome = (error as { unknown?: boolean }).unknown ? 'unknown' : failedSendOutcome(error);
		return {
			note:
				outcome === 'notSent'
					? `${lost}, and making it again was refused too (${(error as Error).message}), so its ${earlier} earlier event(s) will not go out.`
					: `${lost}; it was made again, but the outcome is unknown (${(error as Error).message}), so its ${earlier} earlier event(s) go out only if that send was made.`,
			mayBeMade: outcome !== 'notSent',
		};
	}
}
