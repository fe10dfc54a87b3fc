import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { NodeRunRecords } from '../../../neverTwice';
import { inStoreTurn } from '../../../store';
import { errorItem } from '../../../nodeErrors';
import type { SendInput } from '../send/types';
import { digestInTurn } from './turn';
import type { DigestEvent, ScopePlan, ScopeResult } from './window';

/*
 * "Digest" on Send: events for the same person and Digest Key within a window become one push,
 * built on the API's own scheduled send. The first event of a window schedules a send at the
 * window's end; a later one cancels it and schedules the replacement, which carries every event so
 * far ("12 order updates"). Cancel first: a 409 for a send that went out means its window closed,
 * so a new one starts. The window (its send's id, times and count) is kept in n8n's store under the
 * keys' lock (records.ts), so runs in other executions and workers take turns on it.
 * What each case does, and what it costs: docs/local-delivery.md, "Digest".
 * The folder, in the order a run takes it:
 *   options.ts  the Digest options of an item, read and checked with the other input (send/input.ts)
 *   run.ts      (this file) the run's events, what earlier tries made of them, the output
 *   turn.ts     the run's one turn under the store's lock: records read, scopes decided, written
 *   window.ts   one person's window: its earlier send canceled, or a new one started
 *   schedule.ts the send that carries the window's events; a refused one's earlier send made again
 *   records.ts  a window's record and a used key's, as the store keeps them
 */

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
							"Nothing was scheduled for these events. A window's send canceled meanwhile keeps its earlier events for the window's next event. Run the node again once the database answers.",
					}),
				};
			}
		}
	}
	return outputsOf(context, events, plans, tries);
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
					? "Idempotency Key: n8n's store shows that an earlier run took this event but not what came of it (n8n or its store stopped before it was written), so it is not digested again: check the person's sends"
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
