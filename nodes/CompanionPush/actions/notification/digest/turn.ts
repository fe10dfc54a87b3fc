import type { IExecuteFunctions } from 'n8n-workflow';

import { runPool } from '../../../common/pool';
import { LOST } from '../../../store';
import type { StoreTurn } from '../../../store';
import { encodeWindow, eventName, readWindow, windowName } from './records';
import { decideScope } from './window';
import type { DigestEvent, ScopePlan } from './window';

/* The run's one turn under the store's lock: the windows and used keys read from their records, each
 * scope decided (window.ts), and what came of it written back. */

/** The record of an event's Idempotency Key, used: one per person of the item. */
const keyUsedName = (event: DigestEvent) =>
	eventName(event.item.idempotency!.key, {
		userId: event.userId,
		digestKey: event.rule.digestKey,
	});

/** One turn: read every window not decided yet, cancel and schedule per scope (in parallel), then
 * write what came of every scope (again, for those a turn whose lock was taken over decided: the
 * other holder's writes may have overtaken them; writing a record twice changes nothing). */
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
