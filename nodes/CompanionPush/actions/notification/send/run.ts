import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPool } from '../../../helpers/pool';
import type { PoolResult } from '../../../helpers/pool';
import { asNodeError, errorItem } from '../../../nodeErrors';
import { failedSendOutcome } from '../../../transport';
import { EarlierTries } from '../../../neverTwice/earlierTries';
import { IdempotencyKeys } from '../../../neverTwice/idempotencyKeys';
import { KeyedEvent } from '../../../neverTwice/keyedEvent';
import { sendBatch } from './batch';
import type { SendMemory } from './batch';
import { batchFailure, stopError } from './failures';
import { readSendInput } from './input';
import type { ScheduleReader } from './input';
import { planSends } from './plan';
import type { SendGroup, SendTask } from './plan';
import { FinalStatusWatch } from '../finalStatusWatch';
import { waitFields } from '../wait';

/**
 * Send and Schedule (with `readSchedule`):
 * 1. every item is read and checked before anything is sent (sendInput.ts);
 * 2. the sends are planned: audiences read, de-duplicated, split into batches (sendPlan.ts);
 * 3. the batches are sent in parallel up to Max Parallel Requests, started in item order, each
 *    without repeating what an earlier try or an Idempotency Key says was sent (sendBatch.ts);
 * 4. with Wait for Final Status, every send is followed at once (one list read per round for all);
 * 5. the output keeps item and batch order, each item paired with the input items it stands for.
 */
export async function sendItems(context: IExecuteFunctions, readSchedule?: ScheduleReader): Promise<INodeExecutionData[]> {
	const input = readSendInput(context, readSchedule);
	if (input.checkedItems.length === 0) return [...input.rejected.values()];
	const { groups, tasks, groupErrors } = await planSends(context, input);

	const earlierTries = new EarlierTries(context);
	const memory: SendMemory = { earlierTries, events: eventsOf(context, groups, earlierTries) };
	// When one send fails and the node does not continue on fail, nothing new starts: what is in
	// flight finishes, then the error says what was sent and what was not.
	const maxParallel = input.checkedItems[0].maxParallelRequests;
	const stopOnFailure = !context.continueOnFail();
	const results = await runPool(tasks.length, maxParallel, async (index) => await sendAndReport(context, memory, tasks[index]), stopOnFailure);
	// Events cut short (a failure stopped the run) end too: their keys say what was sent.
	for (const event of memory.events.values()) await event.finish();
	if (stopOnFailure && results.some((result) => result?.ok === false)) throw stopError(context, tasks, results);

	await followSends(context, tasks, results, maxParallel);

	const outputByItem: INodeExecutionData[][] = context.getInputData().map((_, itemIndex) => {
		const rejected = input.rejected.get(itemIndex);
		return rejected ? [rejected] : [];
	});
	for (const group of groups) {
		const groupError = groupErrors.get(group);
		if (groupError) outputByItem[group.lead.itemIndex].push(errorItem(groupError, group.pairedItems));
	}
	tasks.forEach((task, index) => {
		const output = outputOf(context, task, index, tasks, results);
		const storeNote = memory.events.get(task.group)?.storeNote;
		if (storeNote && output.json.error === undefined) output.json.idempotencyKeyNote = storeNote;
		outputByItem[task.group.lead.itemIndex].push(output);
	});
	const output = outputByItem.flat();
	// With error items n8n may run the node again (Retry On Fail retries a run whose first item is an
	// error), so the records stay; otherwise nothing runs this node run again.
	if (!output.some((item) => item.json.error !== undefined)) earlierTries.forgetRun();
	return output;
}

/** One event per group with an Idempotency Key (see keyedEvent.ts). */
function eventsOf(context: IExecuteFunctions, groups: SendGroup[], earlierTries: EarlierTries): Map<SendGroup, KeyedEvent> {
	const keys = new IdempotencyKeys(context);
	const events = new Map<SendGroup, KeyedEvent>();
	for (const group of groups) {
		const { idempotency, itemIndex } = group.lead;
		if (!idempotency || group.layout.length === 0) continue;
		events.set(group, new KeyedEvent(context, keys, idempotency, group.layout, earlierTries.batchesOf(itemIndex).length > 0));
	}
	return events;
}

/** Sends one batch and tells its event (if it has a key) what became of it. */
async function sendAndReport(context: IExecuteFunctions, memory: SendMemory, task: SendTask): Promise<IDataObject> {
	const event = memory.events.get(task.group);
	try {
		const json = await sendBatch(context, memory, task);
		await event?.batchDone(task.batchId, 'accepted');
		return json;
	} catch (error) {
		await event?.batchDone(task.batchId, failedSendOutcome(error));
		throw asNodeError(context, error, task.group.lead.itemIndex);
	}
}

/**
 * Wait for Final Status: every send made followed at once, not Max Parallel Requests at a time: a
 * round reads the list once for all of them, and only detail reads (where the list falls short)
 * are requests that Max Parallel Requests bounds.
 */
async function followSends(context: IExecuteFunctions, tasks: SendTask[], results: Array<PoolResult<IDataObject>>, maxParallel: number) {
	const toFollow = tasks.flatMap((task, index) => {
		const result = results[index];
		const json = result?.ok ? result.value : undefined;
		return json && typeof json.id === 'string' && task.group.lead.waitTimeoutSeconds !== undefined ? [{ json, lead: task.group.lead }] : [];
	});
	const watch = new FinalStatusWatch(context, maxParallel);
	const followOne = async ({ json, lead }: (typeof toFollow)[number]) => {
		try {
			const result = await watch.follow(json.id as string, lead.waitTimeoutSeconds!, lead.itemIndex);
			Object.assign(json, waitFields(result), { stats: result.record.stats, sentAt: result.record.sent_at });
		} catch (error) {
			// The send went out: its id must reach the workflow even when following it up fails.
			Object.assign(json, { finalStatusReached: false, waitError: (error as Error).message });
		}
	};
	await Promise.all(toFollow.map(followOne));
}

/** The output item of one batch: its send (or skip), or its error item. */
function outputOf(
	context: IExecuteFunctions,
	task: SendTask,
	index: number,
	tasks: SendTask[],
	results: Array<PoolResult<IDataObject>>,
): INodeExecutionData {
	const result = results[index]!;
	const { group } = task;
	if (result.ok) return { json: result.value, pairedItem: group.pairedItems };
	const nodeError = asNodeError(context, result.error, group.lead.itemIndex);
	if (task.batchCount > 1) nodeError.description = batchFailure(nodeError.description, task, tasks, results);
	const batchFields = task.batchCount > 1 ? { batch: task.batchIndex + 1, batchCount: task.batchCount } : {};
	return errorItem(nodeError, group.pairedItems, { ...batchFields, recipients: task.batch.length, targetUserIds: task.batch });
}
