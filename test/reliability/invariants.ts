/**
 * The invariants of issue 7 ("Reliability"), checked after a run of the action node against the
 * sandbox's own record of what it registered (its request log, which names the send a request
 * registered even when the answer was lost):
 *
 * 1. Nobody notified twice per intended send: sends are told apart by their content (every
 *    intended send of these tests has a title of its own); among the registered sends with one
 *    title, no user is a recipient twice, across every run checked by the same ledger.
 * 2. No send lost unreported: every send registered during the run has its id in the node's
 *    output or in an error's text, or an error of the item that made it says the outcome is
 *    unknown / the send was accepted but its answer unreadable (not re-sent).
 * 3. Every error names what failed: the node error and every error item start with the action
 *    ("Sending the notification", "Reading notification <id>" ...) or name the field.
 */
import type { INodeExecutionData } from 'n8n-workflow';

import type { LoggedRequest, Sandbox } from '../../sandbox';
import type { NodeRunResult } from '../../devkit/engine';
import { SEND } from '../harness';

/** How an error of this package starts: the action that failed, or the field to fix. */
export const NAMES_WHAT_FAILED = new RegExp(
	[
		'^Sending the notification\\b',
		'^Reading the user list\\b',
		'^Reading the users with an active app\\b',
		'^Reading the list of sends\\b',
		'^Reading notification [^\\s:]+',
		'^Canceling notification [^\\s:]+',
		'^Notification [^\\s]+ can no longer be canceled\\b',
		'^The audience has no users\\b',
		'^"[^"]+" .+\\[item \\d+\\]$',
	].join('|'),
);

/** An error that stands for a send whose id could not be told: registered or maybe registered. */
const OUTCOME_WITHOUT_ID = /outcome is unknown|accepted, not re-sent/;

export interface ReportedError {
	/** message and description */
	text: string;
	message: string;
	/** The input items the error belongs to. */
	items: number[];
}

export interface RegisteredSend {
	id: string;
	title: string;
	recipients: string[];
}

function pairedItems(item: INodeExecutionData): number[] {
	const paired = item.pairedItem;
	if (paired === undefined) return [];
	return (Array.isArray(paired) ? paired : [paired]).map((entry) => (typeof entry === 'number' ? entry : entry.item));
}

/** The node error and the error items of a run. */
export function errorsOf(result: NodeRunResult): ReportedError[] {
	const errors: ReportedError[] = [];
	if (result.error) {
		const itemIndex = (result.error as { context?: { itemIndex?: number } }).context?.itemIndex;
		errors.push({
			message: result.error.message,
			text: `${result.error.message}\n${result.error.description ?? ''}`,
			items: itemIndex === undefined ? [] : [itemIndex],
		});
	}
	for (const item of result.outputs.flat()) {
		if (typeof item.json.error !== 'string') continue;
		errors.push({
			message: item.json.error,
			text: `${item.json.error}\n${String(item.json.errorDescription ?? '')}`,
			items: pairedItems(item),
		});
	}
	return errors;
}

/** Sends the sandbox registered from the request log entries given. */
export function registeredIn(entries: LoggedRequest[]): RegisteredSend[] {
	return entries
		.filter((entry) => entry.endpoint === SEND && entry.notificationId !== undefined)
		.map((entry) => {
			const body = entry.body as { title: string; target_user_ids: string[] };
			return { id: entry.notificationId!, title: body.title, recipients: body.target_user_ids };
		});
}

export class InvariantViolation extends Error {}

/**
 * 4. Nothing dropped in silence (Send and Schedule): unless the node stopped with an error (which
 *    names what was sent and what was not), every input item has an output item that says what
 *    happened to it: a send id (new or from an earlier try), a "skipped" marker, or an error.
 */
export function everyItemAnswered(result: NodeRunResult, itemCount: number): void {
	if (result.error) return;
	const answered = new Set<number>();
	for (const item of result.outputs.flat()) {
		const json = item.json;
		if (typeof json.id !== 'string' && json.skipped !== true && typeof json.error !== 'string') {
			throw new InvariantViolation(`an output item says nothing of its send: ${JSON.stringify(json).slice(0, 200)}`);
		}
		for (const index of pairedItems(item)) answered.add(index);
	}
	const silent = Array.from({ length: itemCount }, (_, index) => index).filter((index) => !answered.has(index));
	if (silent.length > 0) throw new InvariantViolation(`input items ${silent.join(', ')} have no output item`);
}

/** Keeps, over many runs, which user got which intended send (by title). */
export class SendLedger {
	private readonly seen = new Set<string>();
	/** Invariants checked so far (one per registered send and rule, one per error). */
	checks = 0;
	registered = 0;
	errors = 0;

	/**
	 * Checks the three invariants for one run of the node: `logStart` is the request log's length
	 * before the run; `itemsOfTitle` gives the input items a title was sent for.
	 */
	check(sandbox: Sandbox, logStart: number, result: NodeRunResult, itemsOfTitle: (title: string) => number[], logEnd?: number): RegisteredSend[] {
		const registered = registeredIn(sandbox.requestLog().slice(logStart, logEnd));
		const errors = errorsOf(result);
		const outputIds = new Set(result.outputs.flat().map((item) => item.json.id));
		const problems: string[] = [];

		for (const send of registered) {
			this.registered++;
			for (const userId of new Set(send.recipients)) {
				const key = `${send.title}\u0000${userId}`;
				if (this.seen.has(key)) problems.push(`user ${userId} got "${send.title}" twice (send ${send.id})`);
				this.seen.add(key);
			}
			this.checks++;
			const items = itemsOfTitle(send.title);
			const reported =
				outputIds.has(send.id) ||
				errors.some((error) => error.text.includes(send.id)) ||
				errors.some((error) => OUTCOME_WITHOUT_ID.test(error.text) && error.items.some((item) => items.includes(item)));
			this.checks++;
			if (!reported) problems.push(`send ${send.id} ("${send.title}") was registered but the workflow was not told`);
		}
		for (const error of errors) {
			this.errors++;
			this.checks++;
			if (!NAMES_WHAT_FAILED.test(error.message)) problems.push(`an error does not name what failed: ${error.message}`);
		}
		if (problems.length > 0) throw new InvariantViolation(problems.join('\n'));
		return registered;
	}
}
