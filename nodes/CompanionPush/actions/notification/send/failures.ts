import type {
	IDataObject,
	IExecuteFunctions,
	NodeApiError,
	NodeOperationError,
} from 'n8n-workflow';

import type { PoolResult } from '../../../common/pool';
import { asNodeError } from '../../../nodeErrors';
import { taggedSendOutcome } from '../../../transport';
import type { SendGroup, SendTask } from './types';

/*
 * The wording of failures of a Send or Schedule run. When the node stops on an error, n8n drops
 * its output with it, so the error itself must name every send already made (a re-run would
 * notify those people twice otherwise), what was skipped, what else failed, and what was not sent.
 */

function joinSentences(...parts: Array<string | null | undefined>): string {
	return parts.filter(Boolean).join(' ');
}

/** Entries named at most per list: the error stays a few KB however large the run (n8n shows it,
 * stores it with the execution, and a user reads it). */
const NAMED_AT_MOST = 20;

/** The first entries of a list, then how many more: "a, b, c and 97 more". */
function firstOf(entries: string[], separator = ', '): string {
	if (entries.length <= NAMED_AT_MOST) return entries.join(separator);
	return `${entries.slice(0, NAMED_AT_MOST).join(separator)} and ${entries.length - NAMED_AT_MOST} more`;
}

/** A failure named beside the one that stops the node: its message, and for a send that may have
 * gone out (its outcome unknown, or accepted without a readable id) also why and how to check, as
 * its own error item would say: nothing else names it when the node stops. */
function inBrief(error: unknown): string {
	const { message, description } = error as { message: string; description?: unknown };
	// Only a tagged outcome: an error the send path never tagged is no send that may have gone out.
	const outcome = taggedSendOutcome(error);
	const mayHaveGoneOut = outcome === 'unknown' || outcome === 'accepted';
	return mayHaveGoneOut && typeof description === 'string' && description !== ''
		? `${message} — ${description}`
		: message;
}

/** "item 3" or "items 1, 4 batch 2". */
function itemList(names: Array<number | string>): string {
	return `item${names.length > 1 ? 's' : ''} ${firstOf(names.map(String))}`;
}

/** A group failed before any send (its audience): the other groups were not sent either. */
export function notSentForOtherItems<E extends NodeApiError | NodeOperationError>(
	nodeError: E,
	failed: SendGroup,
	groups: SendGroup[],
): E {
	const others = groups.filter((other) => other !== failed).map((other) => other.lead.itemIndex);
	if (others.length > 0)
		nodeError.description = joinSentences(nodeError.description, `Not sent: ${itemList(others)}.`);
	return nodeError;
}

/** For a failed batch of a group in batches: which batch, and what its group already sent. */
export function batchFailure(
	description: string | null | undefined,
	failed: SendTask,
	tasks: SendTask[],
	results: Array<PoolResult<IDataObject>>,
	notStarted = 0,
): string {
	const sentSummaries = tasks.flatMap((task, index) => {
		const result = results[index];
		return task.group === failed.group && result?.ok && typeof result.value.id === 'string'
			? [`batch ${task.batchIndex + 1}: ${result.value.id}`]
			: [];
	});
	return joinSentences(
		description,
		`Batch ${failed.batchIndex + 1} of ${failed.batchCount} failed.`,
		sentSummaries.length > 0
			? `Already sent (not repeated): ${firstOf(sentSummaries)}.`
			: 'No batch was sent before it.',
		notStarted > 0 ? `Not sent: the ${notStarted} batch(es) after it.` : '',
	);
}

/**
 * The error that stops the node: the first failed send, in item order, naming every send already
 * made, what was skipped, what else failed, and what was not sent.
 */
export function stopError(
	context: IExecuteFunctions,
	tasks: SendTask[],
	results: Array<PoolResult<IDataObject>>,
) {
	const firstFailed = results.findIndex((result) => result?.ok === false);
	const failedTask = tasks[firstFailed];
	const failedItem = failedTask.group.lead.itemIndex;
	const nodeError = asNodeError(
		context,
		(results[firstFailed] as { error: unknown }).error,
		failedItem,
	);
	const name = (task: SendTask) =>
		`item ${task.group.lead.itemIndex}${task.batchCount > 1 ? ` batch ${task.batchIndex + 1}` : ''}`;
	const sent: string[] = [];
	const skipped: string[] = [];
	const alsoFailed: string[] = [];
	const notSent: SendTask[] = [];
	let laterSent = false;
	tasks.forEach((task, index) => {
		const result = results[index];
		if (task.group === failedTask.group) return;
		if (result === undefined) notSent.push(task);
		else if (!result.ok) alsoFailed.push(`${name(task)} (${inBrief(result.error)})`);
		else if (result.value.skipped === true) skipped.push(name(task));
		else {
			sent.push(`${name(task)}: ${String(result.value.id)}`);
			laterSent ||= task.group.lead.itemIndex > failedItem;
		}
	});
	if (failedTask.batchCount > 1) {
		const notStartedOfGroup = tasks.filter(
			(task, index) => task.group === failedTask.group && results[index] === undefined,
		).length;
		nodeError.description = batchFailure(
			nodeError.description,
			failedTask,
			tasks,
			results,
			notStartedOfGroup,
		);
	}
	// A group none of whose batches started is named as an item; one cut short, by its batches.
	const notSentNames = [...new Set(notSent.map((task) => task.group))].flatMap((group) => {
		const ofGroup = tasks.filter((task) => task.group === group);
		const unstarted = notSent.filter((task) => task.group === group);
		return unstarted.length === ofGroup.length
			? [`${group.lead.itemIndex}`]
			: unstarted.map((task) => `${group.lead.itemIndex} batch ${task.batchIndex + 1}`);
	});
	nodeError.description = joinSentences(
		nodeError.description,
		sent.length > 0
			? `Already sent for ${laterSent ? 'other' : 'earlier'} items (not repeated): ${sent.length} sends: ${firstOf(sent)}.`
			: '',
		skipped.length > 0 ? `Skipped (Idempotency Key already used): ${firstOf(skipped)}.` : '',
		alsoFailed.length > 0 ? `Also failed: ${firstOf(alsoFailed, '; ')}.` : '',
		notSentNames.length > 0 ? `Not sent: ${itemList(notSentNames)}.` : '',
	);
	return nodeError;
}
