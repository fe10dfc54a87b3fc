/*
 * The send path of Send and Schedule, one stage a file, in the order a run takes them:
 * 1. input.ts    every item is read and checked before anything is sent (its options by their
 *                own files: idempotencyKeyOption.ts, localDelivery.ts, capPerPerson.ts, ../digest/);
 * 2. plan.ts     the sends are planned: audiences read, de-duplicated, split by time zone with
 *                Deliver at Local Time or Quiet Hours (localDelivery.ts), then into batches;
 * 3. batch.ts    the batches are sent in parallel up to Max Parallel Requests, started in item
 *                order, each through never-twice (neverTwice/), which skips what an earlier try or
 *                an Idempotency Key says was sent, and the transport's safe send (transport/safeSend/);
 * 4. run.ts      (this file) drives them; with Wait for Final Status every send is followed at once
 *                (one list read per round for all of them);
 * 5. run.ts      the output keeps item and batch order, each item paired with the input items it
 *                stands for; failures.ts words the error that stops a run. With Cap per Person
 *                (capPerPerson.ts), the plan took a slot per person first, people over the cap
 *                come out on a second output, and sends surely not made give their slots back.
 *                With a Digest Key (../digest/), the checked items take another path: per person and
 *                key, one scheduled send per window, canceled and replaced as events come.
 * fields/ holds the fields of both operations, types.ts the shapes the stages hand each other.
 */

import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPool } from '../../../common/pool';
import type { PoolResult } from '../../../common/pool';
import { recipientsCountedByApi } from '../../../input/recipients';
import { asNodeError, errorItem } from '../../../nodeErrors';
import { NeverTwice } from '../../../neverTwice';
import { FinalStatusWatch } from '../finalStatusWatch';
import { waitFields } from '../wait';
import { sendBatch } from './batch';
import { digestItems } from '../digest/run';
import { batchFailure, stopError } from './failures';
import { readSendInput } from './input';
import { planSends } from './plan';
import type { ScheduleReader, SendTask } from './types';

/** What a run hands n8n: the items of the sends, and the people Cap per Person left out. */
export interface SendOutputs {
	items: INodeExecutionData[];
	capped: INodeExecutionData[];
}

/** Send and Schedule (with `readSchedule`): the stages at the top of this file. */
export async function sendItems(
	context: IExecuteFunctions,
	readSchedule?: ScheduleReader,
): Promise<SendOutputs> {
	const input = readSendInput(context, readSchedule);
	if (input.checkedItems.length === 0) return { items: [...input.rejected.values()], capped: [] };
	if (input.checkedItems[0].digest) {
		const digested = await digestItems(context, input);
		const byItem = (item: INodeExecutionData) =>
			(item.pairedItem as { item: number } | undefined)?.item ?? 0;
		const items = [...input.rejected.values(), ...digested];
		return { items: items.sort((a, b) => byItem(a) - byItem(b)), capped: [] };
	}
	const { groups, tasks, groupErrors, cap } = await planSends(context, input);

	const neverTwice = new NeverTwice(context, groups);
	// When one send fails and the node does not continue on fail, nothing new starts: what is in
	// flight finishes, then the error says what was sent and what was not.
	const maxParallel = input.checkedItems[0].maxParallelRequests;
	const stopOnFailure = !context.continueOnFail();
	const sendTask = async (index: number) => {
		const task = tasks[index];
		return await sendBatch(context, neverTwice, task).catch((error: unknown) => {
			throw asNodeError(context, error, task.group.lead.itemIndex);
		});
	};
	const results = await runPool(tasks.length, maxParallel, sendTask, stopOnFailure);
	await neverTwice.finish();
	await cap?.settle(tasks, results);
	if (stopOnFailure && results.some((result) => result?.ok === false)) {
		const error = stopError(context, tasks, results);
		// n8n drops the Capped output with the run: the error names those people instead.
		if (cap) error.description = [error.description, cap.stopNote()].filter(Boolean).join(' ');
		throw error;
	}

	await followSends(context, tasks, results, maxParallel);

	const outputByItem: INodeExecutionData[][] = context.getInputData().map((_, itemIndex) => {
		const rejected = input.rejected.get(itemIndex);
		return rejected ? [rejected] : [];
	});
	for (const group of groups) {
		const groupError = groupErrors.get(group);
		if (groupError)
			outputByItem[group.lead.itemIndex].push(errorItem(groupError, group.pairedItems));
		else if (cap && !tasks.some((task) => task.group === group))
			outputByItem[group.lead.itemIndex].push(cap.allCappedItem(group));
	}
	tasks.forEach((task, index) => {
		const output = outputOf(context, task, index, tasks, results);
		const storeNote = neverTwice.storeNoteOf(task.group);
		if (storeNote && output.json.error === undefined) output.json.idempotencyKeyNote = storeNote;
		const cappedUserIds = cap?.cappedOf(task.group) ?? [];
		if (cappedUserIds.length > 0) output.json.cappedUserIds = cappedUserIds;
		outputByItem[task.group.lead.itemIndex].push(output);
	});
	const output = outputByItem.flat();
	if (!output.some((item) => item.json.error !== undefined)) {
		neverTwice.runSucceeded();
		cap?.runSucceeded();
	}
	return { items: output, capped: cap?.cappedItems() ?? [] };
}

/**
 * Wait for Final Status: every send made followed at once, not Max Parallel Requests at a time: a
 * round reads the list once for all of them, and only detail reads (where the list falls short)
 * are requests that Max Parallel Requests bounds.
 */
async function followSends(
	context: IExecuteFunctions,
	tasks: SendTask[],
	results: Array<PoolResult<IDataObject>>,
	maxParallel: number,
) {
	const toFollow = tasks.flatMap((task, index) => {
		const result = results[index];
		const json = result?.ok ? result.value : undefined;
		return json && typeof json.id === 'string' && task.group.lead.waitTimeoutSeconds !== undefined
			? [{ json, lead: task.group.lead }]
			: [];
	});
	const watch = new FinalStatusWatch(context, maxParallel);
	const followOne = async ({ json, lead }: (typeof toFollow)[number]) => {
		try {
			const result = await watch.follow(
				json.id as string,
				lead.waitTimeoutSeconds!,
				lead.itemIndex,
			);
			Object.assign(json, waitFields(result), {
				stats: result.record.stats,
				sentAt: result.record.sent_at,
			});
			if (result.finalStatusReached)
				Object.assign(json, recipientsCountedByApi(json.recipients, result.record.stats));
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
	if (task.batchCount > 1)
		nodeError.description = batchFailure(nodeError.description, task, tasks, results);
	const batchFields =
		task.batchCount > 1 ? { batch: task.batchIndex + 1, batchCount: task.batchCount } : {};
	return errorItem(nodeError, group.pairedItems, {
		...batchFields,
		recipients: task.batch.length,
		targetUserIds: task.batch,
	});
}
