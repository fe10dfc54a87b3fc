import { NodeApiError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, NodeOperationError } from 'n8n-workflow';

import { MINUTE_MS } from '../../../common/time';
import { asNodeError } from '../../../nodeErrors';
import { cancelNotification } from '../../../transport';
import type { CheckedItem, DigestRule } from '../send/types';
import type { DigestScope, WindowReading, WindowRecord } from './records';

/* The window of one person and Digest Key, decided in the run's turn: its earlier send canceled (this
 * file), then the send that carries every event so far scheduled (schedule.ts). */

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

/** A window's times and the events its send carries. */
export type WindowSpan = Omit<WindowRecord, 'sendId'>;

/** What one scope's turn decided, and what to write once it is known. */
export interface ScopePlan {
	scope: DigestScope;
	events: DigestEvent[];
	reading: WindowReading;
	result?: ScopeResult;
	/** The window the send carries, once its earlier send is canceled (or there was none). */
	window?: WindowSpan;
	/** The record to write when the send is accepted (or the window's earlier send restored). */
	next?: WindowRecord;
	/** The window's earlier send, canceled by this run: its events ride on the replacement. */
	canceledSendId?: string;
	notes: string[];
	/** Whether the old record goes (its window replaced or closed). */
	dropOld: boolean;
	/** Events whose Idempotency Key an earlier run digested: left out. */
	keysUsed: DigestEvent[];
	/** Of those, the ones whose key's record could not be read back, or that an earlier run claimed
	 * without writing what came of it: left out too, never sent twice. */
	keysLost: DigestEvent[];
	/** Whether the events are in a send that was, or may have been, made: their keys count as used. */
	placed: boolean;
}

export const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();

export function withDescription<T extends NodeApiError | NodeOperationError>(
	error: T,
	note: string,
): T {
	error.description = [error.description, note].filter(Boolean).join(' ');
	return error;
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

/**
 * The window the scope's send carries: a new one, or the open one once its send is canceled. A
 * canceled send whose record bears no mark carries the window's events still (it was canceled by a
 * cancel whose answer was lost, by hand, or by a run that sent nothing after it): the replacement
 * carries them. With the mark (a run may have made a replacement before it stopped), a new window
 * starts: that replacement, if made, carries them.
 */
export async function cancelStep(context: IExecuteFunctions, plan: ScopePlan): Promise<void> {
	const { events, reading } = plan;
	const itemIndex = events[0].item.itemIndex;
	const nowSec = Math.ceil(Date.now() / 1000);
	plan.window = {
		startSec: nowSec,
		endSec: nowSec + Math.ceil(events[0].rule.windowMinutes * (MINUTE_MS / 1000)),
		count: events.length,
	};
	if (reading.state === 'unreadable') {
		plan.notes.push(
			"this person's earlier window could not be read back from n8n's store (a write cut short): a new window starts; an earlier scheduled send may still carry earlier events",
		);
	}
	if (reading.state !== 'open') return;
	const { record, replacing } = reading;
	const told = await cancelWindowSend(context, record.sendId, itemIndex);
	if (told.kind === 'failed') {
		plan.window = undefined;
		plan.result = {
			ok: false,
			unknown: false,
			error: withDescription(
				told.error,
				`Digest: the window's send ${record.sendId} (${record.count} earlier event(s), at ${isoOf(record.endSec)}) could not be canceled, so nothing was scheduled for this event; the window's earlier events stay with that send (if the cancel reached the API, the window's next event schedules them again). Run this item again.`,
			),
		};
		return;
	}
	plan.dropOld = true;
	if (told.kind === 'canceled' && !(told.alreadyCanceled && replacing)) {
		plan.canceledSendId = record.sendId;
		plan.window = {
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
