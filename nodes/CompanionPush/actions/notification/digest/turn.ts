import type { IExecuteFunctions } from 'n8n-workflow';

import { runPool } from '../../../common/pool';
import { LOST } from '../../../store';
import type { StoreTurn } from '../../../store';
import { encodeWindow, eventName, readWindow, windowName } from './records';
import { scheduleStep } from './schedule';
import { cancelStep } from './window';
import type { DigestEvent, ScopePlan } from './window';

/* The run's one turn under the store's lock: the windows and used keys read from their records, the
 * windows' sends canceled, what may leave written down, the sends scheduled, and what came of them
 * written back. */

/** The record of an event's Idempotency Key: one per person of the item. */
const keyName = (event: DigestEvent) =>
	eventName(event.item.idempotency!.key, {
		userId: event.userId,
		digestKey: event.rule.digestKey,
	});

/** A key's record: `claimed` before its event's send leaves, `used` once the send is known made. */
const CLAIMED = 'claimed';
const USED = 'used';

const keyedEvents = (plan: ScopePlan) => plan.events.filter((event) => event.item.idempotency);

/** One turn: read every window not decided yet, cancel the open windows' sends (in parallel), write
 * down what may leave, schedule per scope (in parallel), then write what came of every scope (again,
 * for those a turn whose lock was taken over decided: the other holder's writes may have overtaken
 * them; writing a record twice changes nothing). */
export async function digestInTurn(
	context: IExecuteFunctions,
	turn: StoreTurn,
	plans: ScopePlan[],
	maxParallel: number,
): Promise<void> {
	await leaveOutUsedKeys(turn, plans);
	const undecided = plans.filter((plan) => plan.result === undefined);
	const reads = await turn.read(undecided.map(({ scope }) => windowName(scope)));
	undecided.forEach((plan, index) => (plan.reading = readWindow(reads[index])));
	await runPool(undecided.length, maxParallel, async (index) => {
		await cancelStep(context, undecided[index]);
	});

	// Before anything leaves: each event's key claimed (a copy delivered again, whatever becomes of
	// this turn's last write, is never digested twice), and each window whose send was canceled
	// marked (a replacement may exist from now on: a run that finds the mark never carries the
	// window's events a second time). A window without the mark whose send is canceled had no
	// replacement: the next event carries its events.
	const sending = undecided.filter((plan) => plan.result === undefined);
	await turn.write(
		sending.flatMap(
			(plan): Array<[string, string]> => [
				...(plan.canceledSendId && plan.reading.state === 'open'
					? [[windowName(plan.scope), encodeWindow(plan.reading.record, true)] as [string, string]]
					: []),
				...keyedEvents(plan).map((event): [string, string] => [keyName(event), CLAIMED]),
			],
		),
	);
	await runPool(sending.length, maxParallel, async (index) => {
		await scheduleStep(context, sending[index]);
	});

	const renewed = plans.filter((plan) => plan.next);
	await turn.write(
		plans.flatMap(
			(plan): Array<[string, string]> => [
				...(plan.next
					? [[windowName(plan.scope), encodeWindow(plan.next)] as [string, string]]
					: []),
				...(plan.placed
					? keyedEvents(plan).map((event): [string, string] => [keyName(event), USED])
					: []),
			],
		),
	);
	// A window replaced or closed without a new record goes, and so does one that cannot be read; the
	// keys of events refused go too (they are free for a copy delivered again).
	const dropped = plans.filter(
		({ reading, dropOld }) =>
			(dropOld && reading.state === 'open') || reading.state === 'unreadable',
	);
	await turn.delete([
		...dropped.filter((plan) => !renewed.includes(plan)).map(({ scope }) => windowName(scope)),
		...sending
			.filter((plan) => !plan.placed && plan.result !== undefined)
			.flatMap((plan) => keyedEvents(plan).map(keyName)),
	]);
}

/** Leaves out the events whose Idempotency Key an earlier run digested or claimed (a redelivered
 * webhook): a scope left without events is done. A key whose record cannot be read back, or that a
 * run claimed without writing what came of it, counts as used, its outcome not known. */
async function leaveOutUsedKeys(turn: StoreTurn, plans: ScopePlan[]): Promise<void> {
	const keyed = plans
		.filter((plan) => plan.result === undefined)
		.flatMap((plan) => keyedEvents(plan).map((event) => ({ plan, event })));
	if (keyed.length === 0) return;
	const names = keyed.map(({ event }) => keyName(event));
	const reads = await turn.read(names);
	// Keys used before the store kept records: the same name, kept as one value.
	const absent = names.filter((_, index) => reads[index] === undefined);
	const markedBefore = await turn.readOldMarks(absent);
	const usedBefore = new Set(absent.filter((_, index) => markedBefore[index]));
	keyed.forEach(({ plan, event }, index) => {
		if (reads[index] === undefined && !usedBefore.has(names[index])) return;
		plan.keysUsed.push(event);
		if (reads[index] === LOST || reads[index] === CLAIMED) plan.keysLost.push(event);
		plan.events = plan.events.filter((each) => each !== event);
		if (plan.events.length === 0) plan.result = { ok: true, fields: {} };
	});
}
