import { randomUUID } from 'crypto';

import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { MINUTE_MS } from '../../../common/time';
import { asNodeError } from '../../../nodeErrors';
import { cancelNotification, failedSendOutcome, sendNotification } from '../../../transport';
import type { SendRequest } from '../../../transport';
import type { CheckedItem, DigestRule } from '../send/types';
import { recordHolds } from './records';
import type { DigestScope, WindowReading, WindowRecord } from './records';

/* The window of one person and Digest Key, decided in the run's turn: its earlier send canceled and
 * replaced by one that carries every event so far, or a new window started. */

/** One person of one item: an event of a scope. */
export interface DigestEvent {
	item: CheckedItem;
	rule: DigestRule;
	userId: string;
}

/** What became of the events of one scope in this run. */
export type ScopeResult =
	| { ok: true; fields: IDataObject }
	| { ok: false; error: NodeApiError | NodeOperationError; unknown: boolean };

const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The push of a window: the event's own message for one event; else the Digest Title with the
 * count, and the latest event's body, image and destination. */
function requestFor(events: DigestEvent[], count: number, endSec: number): SendRequest {
	const latest = events[events.length - 1];
	const { title, body, image_url, deeplink, announcement_id } = latest.item.message;
	return {
		title: count === 1 ? title : latest.rule.title.replace(/\{count\}/g, String(count)),
		body,
		target_user_ids: [latest.userId],
		...(image_url ? { image_url } : {}),
		...(deeplink ? { deeplink } : {}),
		...(announcement_id ? { announcement_id } : {}),
		scheduled_at: isoOf(endSec),
	};
}

/** What the cancel of a window's send told. */
type CancelTold =
	| { kind: 'canceled'; alreadyCanceled: boolean }
	| { kind: 'wentOut'; status: string }
	| { kind: 'notFound' }
	| { kind: 'failed'; error: NodeApiError | NodeOperationError };

async function cancelWindowSend(
	context: IExecuteFunctions,
	sendId: string,
	itemIndex: number,
): Promise<CancelTold> {
	try {
		const result = await cancelNotification(context, sendId, itemIndex);
		return { kind: 'canceled', alreadyCanceled: result.alreadyCanceled };
	} catch (error) {
		const nodeError = asNodeError(context, error, itemIndex);
		const status = (nodeError.context as { currentStatus?: unknown }).currentStatus;
		if (typeof status === 'string') return { kind: 'wentOut', status };
		if (nodeError instanceof NodeApiError && nodeError.httpCode === '404')
			return { kind: 'notFound' };
		return { kind: 'failed', error: nodeError };
	}
}

/** What one scope's turn decided: the window to schedule, and what to write once it is known. */
export interface ScopePlan {
	scope: DigestScope;
	events: DigestEvent[];
	reading: WindowReading;
	result?: ScopeResult;
	/** The record to write when the send is accepted. */
	next?: WindowRecord;
	/** The window's earlier send, canceled by this run: its events now ride on the replacement. */
	canceledSendId?: string;
	notes: string[];
	/** Whether the old record goes (its window replaced or closed). */
	dropOld: boolean;
	/** Events whose Idempotency Key an earlier run digested: left out. */
	keysUsed: DigestEvent[];
	/** Of those, the ones whose key's record could not be read back: left out too, never sent twice. */
	keysLost: DigestEvent[];
	/** Whether the events are in a send that was, or may have been, made: their keys count as used. */
	placed: boolean;
}

/** The cancel (when a window is open) and the send of one scope. */
export async function decideScope(context: IExecuteFunctions, plan: ScopePlan): Promise<void> {
	const { events, reading } = plan;
	const itemIndex = events[0].item.itemIndex;
	const nowSec = Math.ceil(Date.now() / 1000);
	const newWindow = () => ({
		startSec: nowSec,
		endSec: nowSec + Math.ceil(events[0].rule.windowMinutes * (MINUTE_MS / 1000)),
		count: events.length,
	});
	let window = newWindow();
	if (reading.state === 'unreadable') {
		plan.notes.push(
			"this person's earlier window could not be read back from n8n's store (a write cut short, or entries n8n dropped over its bound): a new window starts; an earlier scheduled send may still carry earlier events",
		);
	}
	if (reading.state === 'open') {
		const { record } = reading;
		const told = await cancelWindowSend(context, record.sendId, itemIndex);
		if (told.kind === 'failed') {
			plan.result = {
				ok: false,
				unknown: true,
				error: withDescription(
					told.error,
					`Digest: the window's send ${record.sendId} (${record.count} earlier event(s), at ${isoOf(record.endSec)}) could not be canceled, so nothing was scheduled for this event. If the cancel reached the API, those earlier events will not go out: check the send (Notification > Get), and run this item again.`,
				),
			};
			return;
		}
		plan.dropOld = true;
		if (told.kind === 'canceled' && !(told.alreadyCanceled && reading.replacing)) {
			plan.canceledSendId = record.sendId;
			window = {
				startSec: record.startSec,
				endSec: record.endSec,
				count: record.count + events.length,
			};
		} else if (told.kind === 'canceled') {
			plan.notes.push(
				`the window's send ${record.sendId} was canceled by a run that stopped before it wrote its replacement: if that replacement was made, it carries the ${record.count} earlier event(s); this event starts a new window`,
			);
		} else if (told.kind === 'wentOut') {
			plan.notes.push(
				`the previous window's send ${record.sendId} already went out (it is "${told.status}"): a new window starts`,
			);
		} else {
			plan.notes.push(`the window's send ${record.sendId} is not found (404): a new window starts`);
		}
	}
	const request = requestFor(events, window.count, window.endSec);
	try {
		const outcome = await sendNotification(context, request, itemIndex, {
			owner: `digest:${randomUUID()}`,
		});
		if (recordHolds(outcome.id)) plan.next = { sendId: outcome.id, ...window };
		else
			plan.notes.push(
				"the API's send id is too long to keep in n8n's store: the next event starts a new window",
			);
		plan.dropOld = true;
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
				...(plan.canceledSendId ? { replacedSendId: plan.canceledSendId } : {}),
				...(plan.notes.length > 0 ? { digestNote: plan.notes.join('; ') } : {}),
			},
		};
	} catch (error) {
		const nodeError = asNodeError(context, error, itemIndex);
		const outcome = failedSendOutcome(error);
		const earlierGo = {
			notSent: 'will not go out',
			accepted: 'go out with this send (the API accepted it)',
			unknown: 'go out only if this send was made',
		}[outcome];
		const lost = plan.canceledSendId
			? ` The window's earlier send ${plan.canceledSendId} was canceled, so its ${window.count - events.length} earlier event(s) ${earlierGo}.`
			: '';
		// Refused: nothing carries the window any more, so its record goes. Otherwise the mark of the
		// replacement stays: the next event starts a new window rather than guess.
		plan.dropOld = outcome === 'notSent' && reading.state === 'open';
		plan.placed = outcome !== 'notSent';
		plan.result = {
			ok: false,
			unknown: outcome !== 'notSent',
			error: withDescription(nodeError, `Digest:${lost}`),
		};
	}
}

function withDescription<T extends NodeApiError | NodeOperationError>(error: T, note: string): T {
	error.description = [error.description, note].filter(Boolean).join(' ');
	return error;
}
