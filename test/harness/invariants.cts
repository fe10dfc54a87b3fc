/**
 * The reliability invariants, checked after a run of the action node against the sandbox's own
 * record of what it registered (its request log, which names the send a request registered even
 * when the answer was lost):
 *
 * 1. Nobody notified twice per intended send: a registered send stands for an intended send (an
 *    event: one item's send, or all items' in "One Send for All Items" mode, the same event when
 *    its Idempotency Key comes again); among the registered sends of one event no user is a
 *    recipient twice, across every run checked by the same ledger. By default an event is told by
 *    its title (every intended send of a test has a title of its own); runs that send one message
 *    several times say which event each send stands for (see Attribution).
 * 2. No send lost unreported: every send registered during the run has its id in the node's
 *    output or in an error's text, or an error of the item that made it says the outcome is
 *    unknown / the send was accepted but its answer unreadable (not re-sent).
 * 3. Every error names what failed: the node error and every error item start with the action
 *    ("Sending the notification", "Reading notification <id>" ...) or name the field.
 * 4. Nothing dropped in silence: see everyItemAnswered.
 * 5. No item carries another item's send, and 6. an "unknown" only where the API showed too
 *    little: see Attribution.
 */
import type { INodeExecutionData } from 'n8n-workflow';

import type { LoggedRequest, Sandbox } from '../../sandbox/index.cts';
import type { NodeRunResult } from '../../devkit/engine.cts';
import { SEND } from '../../devkit/endpoints.cts';
import { isProbeSend } from './requestLog.cts';

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

/** The sends a stopping error counts without naming them: "Already sent ...: a, b and 3 more." */
const COUNTED_NOT_NAMED = /Already sent[^:]*\(not repeated\):[^.]*? and (\d+) more\./g;

/** An error that stands for a send whose id could not be told: registered or maybe registered. */
export const OUTCOME_WITHOUT_ID = /outcome is unknown|accepted, not re-sent/;
const ACCEPTED_WITHOUT_ID = /accepted, not re-sent/;
/** Why a lookup that read nothing like its send could not prove it absent (lookup.ts). */
const NOT_SHOWN_UP_TO_DATE = 'nothing shows the list is up to date';
/** A lookup's reason: an exact match in the list may be another send of the process left unknown. */
const PROCESS_TWIN = 'which may be another send of this process whose outcome stayed unknown';

export interface ReportedError {
	/** message and description */
	text: string;
	message: string;
	/** The input items the error belongs to. */
	items: number[];
}

export interface LoggedSend {
	id: string;
	title: string;
	body: string;
	recipients: string[];
	scheduledAt?: string;
}

export function pairedItems(item: INodeExecutionData): number[] {
	const paired = item.pairedItem;
	if (paired === undefined) return [];
	return (Array.isArray(paired) ? paired : [paired]).map((entry) =>
		typeof entry === 'number' ? entry : entry.item,
	);
}

/** The other sends a stopping error says failed: "Also failed: item 2 (<message>); item 4 batch 1
 * (<message> — <why and how to check>)." (a send that may have gone out carries its description, whose
 * sentences end in ". "), the last sentence but "Not sent: ...", and perhaps "and 3 more.". */
const ALSO_FAILED_SENTENCE = /Also failed: (.*?\.)(?: Not sent: |$)/s;
const ALSO_FAILED = /item (\d+)(?: batch \d+)? \((.+?)\)(?=; item \d|\.$| and \d+ more\.$)/gs;

/** The node error (and each other failure it names) and the error items of a run. */
export function errorsOf(result: NodeRunResult): ReportedError[] {
	const errors: ReportedError[] = [];
	if (result.error) {
		const itemIndex = (result.error as { context?: { itemIndex?: number } }).context?.itemIndex;
		const description = result.error.description ?? '';
		errors.push({
			message: result.error.message,
			text: `${result.error.message}\n${description}`,
			items: itemIndex === undefined ? [] : [itemIndex],
		});
		const alsoFailed = ALSO_FAILED_SENTENCE.exec(description)?.[1] ?? '';
		for (const [, item, entry] of alsoFailed.matchAll(ALSO_FAILED)) {
			const [message, description] = entry.split(' — ');
			errors.push({
				message,
				text: description === undefined ? message : `${message}\n${description}`,
				items: [Number(item)],
			});
		}
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

/** Sends the sandbox registered from the request log entries given (list probes notify nobody and
 * stand for no item: left out). */
export function registeredIn(entries: LoggedRequest[]): LoggedSend[] {
	return entries
		.filter((entry) => entry.notificationId !== undefined && !isProbeSend(entry))
		.filter((entry) => entry.endpoint === SEND)
		.map((entry) => {
			const body = entry.body as {
				title: string;
				body: string;
				target_user_ids: string[];
				scheduled_at?: string;
			};
			return {
				id: entry.notificationId!,
				title: body.title,
				body: body.body,
				recipients: body.target_user_ids,
				scheduledAt: body.scheduled_at,
			};
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
			throw new InvariantViolation(
				`an output item says nothing of its send: ${JSON.stringify(json).slice(0, 200)}`,
			);
		}
		for (const index of pairedItems(item)) answered.add(index);
	}
	const silent = Array.from({ length: itemCount }, (_, index) => index).filter(
		(index) => !answered.has(index),
	);
	if (silent.length > 0)
		throw new InvariantViolation(`input items ${silent.join(', ')} have no output item`);
}

/** Keeps, over many runs, which user got which intended send (by title). */
export class SendLedger {
	private readonly seen = new Set<string>();
	/** Invariants checked so far (one per registered send and rule, one per error). */
	checks = 0;
	registered = 0;
	errors = 0;

	/**
	 * Checks the three invariants for one run of the node: `logStart` (and `logEnd`) bound the run's
	 * part of the request log; `itemsOfTitle` gives the input items a title was sent for; `eventOf`
	 * the event a registered send stands for (by default its title).
	 */
	check(
		sandbox: Sandbox,
		logStart: number,
		result: NodeRunResult,
		itemsOfTitle: (title: string) => number[],
		{
			logEnd,
			eventOf = (send) => send.title,
		}: { logEnd?: number; eventOf?: (send: LoggedSend) => string } = {},
	): LoggedSend[] {
		const registered = registeredIn(sandbox.requestLog().slice(logStart, logEnd));
		const errors = errorsOf(result);
		const outputIds = new Set(result.outputs.flat().map((item) => item.json.id));
		const problems: string[] = [];
		const notNamed: LoggedSend[] = [];

		for (const send of registered) {
			this.registered++;
			for (const userId of new Set(send.recipients)) {
				const key = `${eventOf(send)}\u0000${userId}`;
				if (this.seen.has(key))
					problems.push(`user ${userId} got "${send.title}" twice (send ${send.id})`);
				this.seen.add(key);
			}
			this.checks++;
			const items = itemsOfTitle(send.title);
			const reported =
				outputIds.has(send.id) ||
				errors.some((error) => error.text.includes(send.id)) ||
				errors.some(
					(error) =>
						OUTCOME_WITHOUT_ID.test(error.text) && error.items.some((item) => items.includes(item)),
				);
			this.checks++;
			if (!reported) notNamed.push(send);
		}
		// A stopping error names 20 sends at most and counts the rest ("... and 3 more."): those
		// counted were told too, as many as it counts.
		const counted = errors
			.flatMap((error) => [...error.text.matchAll(COUNTED_NOT_NAMED)])
			.reduce((sum, [, more]) => sum + Number(more), 0);
		if (notNamed.length > counted)
			for (const send of notNamed)
				problems.push(
					`send ${send.id} ("${send.title}") was registered but the workflow was not told`,
				);
		for (const error of errors) {
			this.errors++;
			this.checks++;
			if (!NAMES_WHAT_FAILED.test(error.message))
				problems.push(`an error does not name what failed: ${error.message}`);
		}
		if (problems.length > 0) throw new InvariantViolation(problems.join('\n'));
		return registered;
	}
}

/** What a run meant to send: one event, its message, and its recipients (undefined: an audience
 * read from the API, every user of it). */
export interface IntendedSend {
	event: string;
	title: string;
	body: string;
	userIds?: string[];
}

/** Whether the list of sends showed enough during a run to prove any lost answer's outcome, and if
 * not, why (see Attribution, invariant 6). */
export interface ListConditions {
	informative: boolean;
	why?: string;
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
	new Set(a).size === new Set(b).size && a.every((value) => b.includes(value));

/**
 * Which event each registered send stands for, told from the run that registered it: the intended
 * send of that run with the send's title among whose recipients its recipients are. Over many runs:
 *
 * 5. No item carries another item's send: the send an output item names (its `id`, or the
 *    `earlierSendId` of a skip) stands for that item's own event.
 * 6. "Unknown" only where the API showed too little: an item ends "outcome unknown" (or "accepted,
 *    not re-sent") only when
 *    (a) the list of sends was not informative during its run: its elements left out recipients,
 *        creation times, title or body, it showed new sends later than the settle wait, it ignored
 *        paging, or a read of the list, of a send's detail or of the token answered other than 200
 *        (a fault, a limit) at least once; or
 *    (b) a send of another event with the same title and body (and recipients, when the error
 *        names them) may be in the list with no id held for it: the sandbox holds such a send whose
 *        id no workflow was ever told, or an earlier item of another event with that message ended
 *        unknown and was not resolved since (the process cannot know whether the API registered
 *        it, so an exact match in the list may be that send); when the lookup says the match may
 *        be such a send of its process, any send of another event with that message asked of the
 *        process so far counts (the harness does not see every try's outcome, and the process
 *        forgets an unknown send only when a later try of that same send resolves it).
 *    Otherwise a lost answer always resolves: the send is found, or proven absent and sent. An item
 *    "accepted, not re-sent" (a 2xx whose body could not be read) is a known outcome without its
 *    id: where the list was informative it is counted (acceptedIdNotFound) and reported, not failed.
 */
export class Attribution {
	private readonly eventOfSend = new Map<string, string>();
	private readonly sends = new Map<string, LoggedSend>();
	/** Ids some output or error named: the process holds them (a lookup never takes them). */
	private readonly reported = new Set<string>();
	/** Items that ended unknown, by reason: the list was not informative, nothing showed it up to date
	 * (no send of the process made after the lost answer was listed in time; `reasonNotShown`: an
	 * item a stopping error names with its message only, which may be that), or a twin was there. */
	readonly unknown = { notInformative: 0, notShownUpToDate: 0, reasonNotShown: 0, twin: 0 };
	/** Items accepted by the API whose id the list did not give, where it was informative. */
	acceptedIdNotFound = 0;
	/** Items of earlier runs that ended unknown and were not resolved since, with their recipients
	 * when known. */
	private unresolved: Array<IntendedSend & { recipients?: string[] }> = [];
	/** Every send intended so far (attribute's), this run's included. The process keeps a send whose
	 * outcome one of its tries could not tell until a later try of that same send resolves it, and
	 * what the harness sees of a run (its output and error) does not tell every try (Retry On Fail,
	 * a stopped run, a try resolved by another run of its event): such a send may be any of these. */
	private readonly everIntended = new Map<string, IntendedSend>();

	/** Attributes the sends one run registered to what that run intended (throws when a send stands
	 * for no intended send, or for several). */
	attribute(registered: LoggedSend[], intended: IntendedSend[]): void {
		for (const want of intended) this.everIntended.set(want.event, want);
		for (const send of registered) {
			const events = new Set(
				send.recipients.map(
					(userId) =>
						intended.find(
							(want) =>
								want.title === send.title &&
								(want.userIds === undefined || want.userIds.includes(userId)),
						)?.event,
				),
			);
			const [event] = [...events];
			if (events.size !== 1 || event === undefined) {
				throw new InvariantViolation(
					`send ${send.id} ("${send.title}" to ${send.recipients.length}) stands for no single intended send of its run`,
				);
			}
			this.eventOfSend.set(send.id, event);
			this.sends.set(send.id, send);
		}
	}

	eventOf(sendId: string): string | undefined {
		return this.eventOfSend.get(sendId);
	}

	/** The sends attributed so far. */
	registered(): LoggedSend[] {
		return [...this.sends.values()];
	}

	/** Checks invariants 5 and 6 for one run; `intendedOf` gives what an input item was sent for. */
	checkOutputs(
		result: NodeRunResult,
		intendedOf: (itemIndex: number) => IntendedSend | undefined,
		conditions: ListConditions,
	): void {
		const problems: string[] = [];
		const outputs = result.outputs.flat();
		const errors = errorsOf(result);
		for (const item of outputs)
			for (const id of [item.json.id, item.json.earlierSendId])
				if (typeof id === 'string') this.reported.add(id);
		for (const send of this.sends.values())
			if (errors.some((error) => error.text.includes(send.id))) this.reported.add(send.id);

		for (const item of outputs) {
			const event = intendedOf(pairedItems(item)[0])?.event;
			for (const id of [item.json.id, item.json.earlierSendId]) {
				if (typeof id !== 'string') continue;
				const sendEvent = this.eventOfSend.get(id);
				if (sendEvent !== event)
					problems.push(
						`an item of ${event} names send ${id}, which stands for ${sendEvent ?? 'no registered send'}`,
					);
			}
		}
		const resolvedEvents = new Set(
			outputs
				.filter((item) => typeof item.json.id === 'string')
				.map((item) => intendedOf(pairedItems(item)[0])?.event),
		);
		this.unresolved = this.unresolved.filter((earlier) => !resolvedEvents.has(earlier.event));
		const endedUnknown: Array<IntendedSend & { recipients?: string[] }> = [];
		for (const error of errors.filter((candidate) => OUTCOME_WITHOUT_ID.test(candidate.text))) {
			const intended = intendedOf(error.items[0]);
			const errorItem = outputs.find(
				(item) => item.json.error === error.message && pairedItems(item).includes(error.items[0]),
			);
			const recipients =
				(errorItem?.json.targetUserIds as string[] | undefined) ?? intended?.userIds;
			if (intended) endedUnknown.push({ ...intended, recipients });
			if (!conditions.informative) {
				this.unknown.notInformative++;
				continue;
			}
			// The lookup read nothing like it, but no later send of the process proved the list up to
			// date: unknown by the rule, whatever the list would have shown later.
			if (error.text.includes(NOT_SHOWN_UP_TO_DATE)) {
				this.unknown.notShownUpToDate++;
				continue;
			}
			if (error.text === error.message) {
				this.unknown.reasonNotShown++;
				continue;
			}
			const sameMessage = (
				other: { title: string; body: string },
				otherRecipients: string[] | undefined,
			) =>
				other.title === intended?.title &&
				other.body === intended.body &&
				(recipients === undefined ||
					otherRecipients === undefined ||
					sameSet(otherRecipients, recipients));
			const twinSent = [...this.sends.values()].some(
				(send) =>
					this.eventOfSend.get(send.id) !== intended?.event &&
					!this.reported.has(send.id) &&
					sameMessage(send, send.recipients),
			);
			// A lookup that names such a send of its own process (PROCESS_TWIN): any send of another
			// event with that message the process was asked for (see everIntended).
			const twinUnresolved = error.text.includes(PROCESS_TWIN)
				? [...this.everIntended.values()].some(
						(other) => other.event !== intended?.event && sameMessage(other, other.userIds),
					)
				: this.unresolved.some(
						(earlier) =>
							earlier.event !== intended?.event && sameMessage(earlier, earlier.recipients),
					);
			if (twinSent || twinUnresolved) this.unknown.twin++;
			// Accepted (a 2xx whose body could not be read): it went out and is never sent again, a known
			// outcome without its id, not an unknown one. Counted and reported, not a broken promise.
			else if (ACCEPTED_WITHOUT_ID.test(error.text)) this.acceptedIdNotFound++;
			else
				problems.push(
					`an item of ${intended?.event} ended "${error.message}" although the list of sends was informative and held no twin of it (what it said: ${error.text})`,
				);
		}
		this.unresolved.push(...endedUnknown);
		if (problems.length > 0) throw new InvariantViolation(problems.join('\n'));
	}
}
