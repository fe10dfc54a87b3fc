import { randomUUID } from 'crypto';

import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPool } from '../../../shared/pool';
import { MINUTE_MS } from '../../../shared/time';
import { NodeRunRecords } from '../../../neverTwice';
import { inStoreTurn, LOST } from '../../../store';
import type { StoreTurn } from '../../../store';
import { asNodeError, errorItem } from '../../../nodeErrors';
import { cancelNotification, failedSendOutcome, sendNotification } from '../../../transport';
import type { SendRequest } from '../../../transport';
import { encodeWindow, eventName, readWindow, recordHolds, windowName } from './digestRecord';
import type { DigestScope, WindowReading, WindowRecord } from './digestRecord';
import type { CheckedItem, DigestRule, SendInput } from './types';

/*
 * "Digest" on Send: events for the same person and Digest Key within a window become one push,
 * built on the API's own scheduled send. The first event of a window schedules a send at the
 * window's end; a later one cancels it and schedules the replacement, which carries every event so
 * far ("12 order updates"). Cancel first: a 409 for a send that went out means its window closed,
 * so a new one starts. The window (its send's id, times and count) is kept in n8n's store under the
 * keys' lock (digestRecord.ts), so runs in other executions and workers take turns on it.
 * What each case does, and what it costs: docs/local-delivery.md, "Digest".
 */

/** One person of one item: an event of a scope. */
interface DigestEvent {
	item: CheckedItem;
	rule: DigestRule;
	userId: string;
}

/** What became of the events of one scope in this run. */
type ScopeResult =
	| { ok: true; fields: IDataObject }
	| { ok: false; error: NodeApiError | NodeOperationError; unknown: boolean };

/** What an earlier try of this execution (Retry On Fail, a retried execution) made of an event: its
 * item, or the error of an outcome left unknown. Such an event is not digested again: its count
 * would be counted twice, or its window's send made twice. Kept as the send path keeps its own
 * (neverTwice/earlierTries.ts). */
type EarlierDigest = { json: IDataObject } | { error: string; description?: string };

const CONTEXT_KEY = 'companionPushDigests';

function earlierTries(context: IExecuteFunctions) {
	const run = new NodeRunRecords<EarlierDigest>(context, CONTEXT_KEY);
	const key = (event: DigestEvent) =>
		`${event.item.itemIndex}:${JSON.stringify([event.userId, event.rule.digestKey])}`;
	return {
		get: (event: DigestEvent): EarlierDigest | undefined => run.get(key(event)),
		set: (event: DigestEvent, value: EarlierDigest) => run.set(key(event), value),
		forgetRun: () => run.forgetRun(),
	};
}

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
interface ScopePlan {
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

/** The record of an event's Idempotency Key, used: one per person of the item. */
const keyUsedName = (event: DigestEvent) =>
	eventName(event.item.idempotency!.key, {
		userId: event.userId,
		digestKey: event.rule.digestKey,
	});

/**
 * Digests the events of a run: per person and key, in one turn under the store's lock, the window
 * read, its send canceled and replaced (or a new window started), and the window written. One output
 * item per item and person, paired with its item: the send that carries the event now, the window's
 * end and count.
 */
export async function digestItems(
	context: IExecuteFunctions,
	input: SendInput,
): Promise<INodeExecutionData[]> {
	const tries = earlierTries(context);
	const events: DigestEvent[] = input.checkedItems.flatMap((item) =>
		[...new Set(item.userIds)].map((userId) => ({ item, rule: item.digest!, userId })),
	);
	const toDigest = events.filter((event) => tries.get(event) === undefined);
	const byScope = new Map<string, DigestEvent[]>();
	for (const event of toDigest) {
		const key = JSON.stringify([event.userId, event.rule.digestKey]);
		byScope.set(key, [...(byScope.get(key) ?? []), event]);
	}
	const plans: ScopePlan[] = [...byScope.values()].map((ofScope) => ({
		scope: { userId: ofScope[0].userId, digestKey: ofScope[0].rule.digestKey },
		events: ofScope,
		reading: { state: 'none' },
		notes: [],
		dropOld: false,
		keysUsed: [],
		keysLost: [],
		placed: false,
	}));
	const maxParallel = input.checkedItems[0].maxParallelRequests;
	if (plans.length > 0) {
		const outcome = await inStoreTurn(
			context,
			async (turn) => await digestInTurn(context, turn, plans, maxParallel),
			'digest',
		);
		if (!outcome.ok) {
			const reason = `Digest could not read or write its windows in n8n's store: ${outcome.reason}`;
			for (const plan of plans.filter((each) => each.result === undefined)) {
				plan.result = {
					ok: false,
					unknown: false,
					error: new NodeOperationError(context.getNode(), reason, {
						itemIndex: plan.events[0].item.itemIndex,
						description:
							'Nothing was scheduled for these events. Run the node again once the database answers.',
					}),
				};
			}
		}
	}
	return outputsOf(context, events, plans, tries);
}

/** One turn: read every window not decided yet, cancel and schedule per scope (in parallel), then
 * write what came of every scope (again, for those a turn whose lock was taken over decided: the
 * other holder's writes may have overtaken them; writing a record twice changes nothing). */
async function digestInTurn(
	context: IExecuteFunctions,
	turn: StoreTurn,
	plans: ScopePlan[],
	maxParallel: number,
): Promise<void> {
	await leaveOutUsedKeys(turn, plans);
	const undecided = plans.filter((plan) => plan.result === undefined);
	const reads = await turn.read(undecided.map(({ scope }) => windowName(scope)));
	undecided.forEach((plan, index) => (plan.reading = readWindow(reads[index])));
	// Marked as being replaced before its send is canceled: a run that stops between its cancel and
	// the new record leaves the mark.
	await turn.write(
		undecided.flatMap(
			({ scope, reading }): Array<[string, string]> =>
				reading.state === 'open' && !reading.replacing
					? [[windowName(scope), encodeWindow(reading.record, true)]]
					: [],
		),
	);

	await runPool(undecided.length, maxParallel, async (index) => {
		await decideScope(context, undecided[index]);
	});

	const renewed = plans.filter((plan) => plan.next && plan.result?.ok);
	await turn.write(
		plans.flatMap(
			(plan): Array<[string, string]> => [
				...(renewed.includes(plan)
					? [[windowName(plan.scope), encodeWindow(plan.next!)] as [string, string]]
					: []),
				...(plan.placed
					? plan.events
							.filter((event) => event.item.idempotency)
							.map((event): [string, string] => [keyUsedName(event), 'used'])
					: []),
			],
		),
	);
	// A window replaced or closed without a new record goes, and so does one that cannot be read.
	const dropped = plans.filter(
		({ reading, dropOld }) =>
			(dropOld && reading.state === 'open') || reading.state === 'unreadable',
	);
	await turn.delete(
		dropped.filter((plan) => !renewed.includes(plan)).map(({ scope }) => windowName(scope)),
	);
}

/** Leaves out the events whose Idempotency Key an earlier run digested (a redelivered webhook): a
 * scope left without events is done. A key whose record cannot be read back counts as used. */
async function leaveOutUsedKeys(turn: StoreTurn, plans: ScopePlan[]): Promise<void> {
	const keyed = plans
		.filter((plan) => plan.result === undefined)
		.flatMap((plan) =>
			plan.events.filter((event) => event.item.idempotency).map((event) => ({ plan, event })),
		);
	if (keyed.length === 0) return;
	const names = keyed.map(({ event }) => keyUsedName(event));
	const reads = await turn.read(names);
	// Keys used before the store kept records: the same name, kept as one value.
	const absent = names.filter((_, index) => reads[index] === undefined);
	const markedBefore = await turn.readOldMarks(absent);
	const usedBefore = new Set(absent.filter((_, index) => markedBefore[index]));
	keyed.forEach(({ plan, event }, index) => {
		if (reads[index] === undefined && !usedBefore.has(names[index])) return;
		plan.keysUsed.push(event);
		if (reads[index] === LOST) plan.keysLost.push(event);
		plan.events = plan.events.filter((each) => each !== event);
		if (plan.events.length === 0) plan.result = { ok: true, fields: {} };
	});
}

/** The cancel (when a window is open) and the send of one scope. */
async function decideScope(context: IExecuteFunctions, plan: ScopePlan): Promise<void> {
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

/** One item per item and person, in item order; the run stops on a failure unless the node
 * continues on fail (after every scope had its turn: what was scheduled stays scheduled). */
function outputsOf(
	context: IExecuteFunctions,
	events: DigestEvent[],
	plans: ScopePlan[],
	tries: ReturnType<typeof earlierTries>,
): INodeExecutionData[] {
	const planOf = new Map(plans.flatMap((plan) => plan.events.map((event) => [event, plan])));
	const keysUsed = new Set(plans.flatMap((plan) => plan.keysUsed));
	const keysLost = new Set(plans.flatMap((plan) => plan.keysLost));
	const failures: Array<NodeApiError | NodeOperationError> = [];
	const items = events.map((event): INodeExecutionData => {
		const pairedItem = { item: event.item.itemIndex };
		const earlier = tries.get(event);
		if (keysUsed.has(event)) {
			const json = {
				skipped: true,
				skipReason: keysLost.has(event)
					? "Idempotency Key: n8n's store could not read back whether an earlier run put this event in a digest (n8n stopped in the middle of a write), so it is not digested again: check the person's sends"
					: 'Idempotency Key already used: an earlier run put this event in a digest',
				idempotencyKey: event.item.idempotency!.key,
				digestKey: event.rule.digestKey,
				userId: event.userId,
			};
			tries.set(event, { json });
			return { json, pairedItem };
		}
		const result: ScopeResult | undefined = planOf.get(event)?.result;
		if (!result && earlier && 'json' in earlier)
			return { json: { ...earlier.json, digestedByEarlierTry: true }, pairedItem };
		if (result?.ok) {
			const json = { ...result.fields, userId: event.userId, targetUserIds: [event.userId] };
			tries.set(event, { json });
			return { json, pairedItem };
		}
		const error =
			result?.error ??
			new NodeOperationError(
				context.getNode(),
				earlier && 'error' in earlier ? earlier.error : 'Digest: no outcome',
				{
					itemIndex: event.item.itemIndex,
					description:
						`${earlier && 'error' in earlier ? (earlier.description ?? '') : ''} (An earlier try of this execution left it so: it is not digested again.)`.trim(),
				},
			);
		if (result?.unknown)
			tries.set(event, { error: error.message, description: error.description ?? undefined });
		failures.push(error);
		return errorItem(error, pairedItem, { userId: event.userId });
	});
	if (failures.length > 0 && !context.continueOnFail()) {
		const first = failures[0];
		const scheduled = items.filter((item) => item.json.error === undefined).length;
		first.description = [
			first.description,
			`${scheduled} other event(s) of this run were digested and stay scheduled; ${failures.length} failed.`,
		]
			.filter(Boolean)
			.join(' ');
		throw first;
	}
	if (failures.length === 0) tries.forgetRun();
	return items;
}
