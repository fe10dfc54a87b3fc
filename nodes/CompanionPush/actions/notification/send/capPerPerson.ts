import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { PoolResult } from '../../../common/pool';
import { failedSendOutcome } from '../../../transport';
import { NodeRunRecords } from '../../../neverTwice';
import { giveSlotsBack, takeSlots } from './capSlots';
import type { CapRule, SlotDecision, SlotRequest, TakenSlot } from './capSlots';
import type { SendGroup, SendTask } from './types';

/*
 * "Cap per Person" on Send: at most N sends per person within a rolling window, counted in n8n's
 * store for this node by every execution and process (capSlots.ts). The plan asks for a slot per
 * person of each send before any is made; people over the cap leave the send and come out on the
 * second output, "Capped". Once the sends ended, a send surely not made gives its slots back; an
 * accepted one keeps them, and so does one whose outcome is unknown (its people may have been
 * notified).
 */

export type { CapRule } from './capSlots';
export {
	DEFAULT_CAP_WINDOW_MINUTES,
	MAX_CAP_SENDS,
	MAX_CAP_WINDOW_MINUTES,
	readCapRule,
} from './capSlots';

const ruleText = (rule: CapRule) => `${rule.maxSends}/${rule.windowMinutes}`;

/** Said of a person capped now whose earlier try's send has an unknown outcome. */
const EARLIER_TRY_UNKNOWN = {
	earlierTryOutcome: 'unknown',
	note: "An earlier try of this execution sent to this person and its outcome is unknown (the answer was lost): look for it in the list of sends (Get Many) before notifying them again. The earlier try's error names it. Its slot no longer counts, and the cap is full now, so nothing was sent again.",
};

/** A person a send left out, over the cap. */
interface CappedPerson {
	group: SendGroup;
	userId: string;
	notifyAfter: number;
	/** An earlier try of this run sent to them and its outcome stayed unknown: said on their item. */
	earlierTryUnknown?: true;
}

/**
 * What the tries of this node's run decided for a group's people, kept in the execution's data
 * (why there: neverTwice/earlierTries.ts) so that a later try, of Retry On Fail or a retried
 * execution, replays it: the people granted keep their slot (their send may have been made: it is
 * looked up, never counted again, never capped by its own slot), the people capped stay capped (the
 * batches stay those of the earlier try).
 */
interface CapTry {
	/** The cap it counted under ("3/60"): under another, it is not replayed. */
	rule: string;
	/** The people granted, each with the tick of the slot they hold. */
	granted: Record<string, number>;
	/** The people capped, each with when they may be notified. */
	capped: Record<string, number>;
	/** The people whose send by a try of this run has an outcome that stayed unknown. */
	unknown: string[];
}

const CAP_TRIES_KEY = 'companionPushCapSlots';

/** What the cap decided for a run, and what it gives back once the sends ended. */
export class RunCap {
	readonly capped: CappedPerson[] = [];
	private readonly taken = new Map<SendGroup, TakenSlot[]>();

	private constructor(
		private readonly context: IExecuteFunctions,
		readonly rule: CapRule,
		private readonly tries: NodeRunRecords<CapTry>,
	) {}

	private earlierTryOf(group: SendGroup): CapTry | undefined {
		const earlier = this.tries.get(String(group.lead.itemIndex));
		return earlier?.rule === ruleText(this.rule) ? earlier : undefined;
	}

	/**
	 * Takes a slot for every person of every group (in item order) before anything is sent; those
	 * over the cap are taken out of their group's recipients. An earlier try's decisions are
	 * replayed (CapTry). Throws, sending nothing, when n8n's store cannot be read.
	 */
	static async apply(
		context: IExecuteFunctions,
		rule: CapRule,
		audiences: Array<{ group: SendGroup; recipients: string[] }>,
	): Promise<RunCap> {
		const cap = new RunCap(context, rule, new NodeRunRecords<CapTry>(context, CAP_TRIES_KEY));
		const requests = audiences.flatMap(({ group, recipients }): SlotRequest[] => {
			const earlier = cap.earlierTryOf(group);
			return recipients
				.filter((userId) => earlier?.capped[userId] === undefined)
				.map((userId) => ({ userId, heldTick: earlier?.granted[userId] }));
		});
		const outcome = await takeSlots(context, rule, requests);
		if (!outcome.ok) {
			throw new NodeOperationError(
				context.getNode(),
				`Cap per Person could not be checked, so nothing was sent: ${outcome.reason}`,
				{
					description:
						"The cap's counts live in n8n's database; run the node again once it answers, or remove the option.",
				},
			);
		}
		let next = 0;
		for (const audience of audiences) {
			const { group } = audience;
			const earlier = cap.earlierTryOf(group);
			const granted: string[] = [];
			const taken: TakenSlot[] = [];
			const thisTry: CapTry = { rule: ruleText(rule), granted: {}, capped: {}, unknown: [] };
			for (const userId of audience.recipients) {
				const replayed = earlier?.capped[userId];
				const decision: SlotDecision =
					replayed !== undefined
						? { granted: false, notifyAfter: replayed }
						: outcome.value[next++];
				// Said on every later try, also of a person capped since.
				const earlierTryUnknown = earlier?.unknown.includes(userId) ?? false;
				if (earlierTryUnknown) thisTry.unknown.push(userId);
				if (decision.granted) {
					granted.push(userId);
					taken.push({ userId, tick: decision.tick, ...(decision.held ? { held: true } : {}) });
					thisTry.granted[userId] = decision.tick;
					continue;
				}
				thisTry.capped[userId] = decision.notifyAfter;
				const { notifyAfter } = decision;
				cap.capped.push({
					group,
					userId,
					notifyAfter,
					...(earlierTryUnknown && { earlierTryUnknown }),
				});
			}
			audience.recipients = granted;
			cap.taken.set(group, taken);
			// Recorded before any send: a try cut short leaves what it decided for the next one.
			cap.tries.set(String(group.lead.itemIndex), thisTry);
		}
		return cap;
	}

	/** The people of a group the cap left out. */
	cappedOf(group: SendGroup): string[] {
		return this.capped.filter((person) => person.group === group).map(({ userId }) => userId);
	}

	/** The item of a group whose every person was over the cap: nothing was sent for it. */
	allCappedItem(group: SendGroup): INodeExecutionData {
		return {
			json: {
				skipped: true,
				skipReason:
					'Cap per Person: every recipient is over the cap, so nothing was sent (each is on the Capped output)',
				title: group.lead.message.title,
				cappedUserIds: this.cappedOf(group),
				...(this.capped.some((person) => person.group === group && person.earlierTryUnknown)
					? EARLIER_TRY_UNKNOWN
					: {}),
			},
			pairedItem: group.pairedItems,
		};
	}

	/** For the error that stops the run (n8n then drops both outputs): who the cap left out. */
	stopNote(): string {
		if (this.capped.length === 0) return '';
		const named = this.capped
			.slice(0, 20)
			.map(({ group, userId }) => `${userId} (item ${group.lead.itemIndex})`);
		const more = this.capped.length > 20 ? ` and ${this.capped.length - 20} more` : '';
		return `Over Cap per Person, not sent: ${named.join(', ')}${more}.`;
	}

	/** The Capped output: one item per person and send left out, paired with the items naming them. */
	cappedItems(): INodeExecutionData[] {
		const { maxSends, windowMinutes } = this.rule;
		return this.capped.map(({ group, userId, notifyAfter, earlierTryUnknown }) => {
			const naming = group.items.filter((item) => item.userIds.includes(userId));
			return {
				json: {
					userId,
					capped: true,
					capPerPerson: maxSends,
					capWindowMinutes: windowMinutes,
					notifyAfter: new Date(notifyAfter).toISOString(),
					title: group.lead.message.title,
					...(earlierTryUnknown ? EARLIER_TRY_UNKNOWN : {}),
				},
				pairedItem:
					naming.length > 0 ? naming.map((item) => ({ item: item.itemIndex })) : group.pairedItems,
			};
		});
	}

	/**
	 * The sends ended: the slots of every person not notified for sure go back (a send refused, never
	 * started, or skipped by never-twice). An accepted send keeps them, and so does one whose outcome
	 * is unknown: its error says so. A slot an earlier try holds goes back only when this try's send
	 * was surely not made (not made by this try says nothing of the earlier one's). What this try
	 * holds is recorded for the next one (CapTry).
	 */
	async settle(tasks: SendTask[], results: Array<PoolResult<IDataObject>>): Promise<void> {
		const kept = new Set<string>();
		const unknown = new Set<string>();
		const notSent = new Set<string>();
		const personOf = (group: SendGroup, userId: string) =>
			JSON.stringify([group.lead.itemIndex, userId]);
		const mark = (into: Set<string>, task: SendTask) => {
			for (const userId of task.batch) into.add(personOf(task.group, userId));
		};
		tasks.forEach((task, index) => {
			const result = results[index];
			if (result?.ok) {
				if (result.value.sentByEarlierTry) return;
				if (result.value.skipped) mark(notSent, task);
				else mark(kept, task);
				return;
			}
			if (!result) return;
			const outcome = failedSendOutcome(result.error);
			if (outcome === 'notSent') return mark(notSent, task);
			mark(kept, task);
			if (outcome === 'unknown') {
				mark(unknown, task);
				const error = result.error as { description?: string | null };
				error.description =
					`${error.description ?? ''} Cap per Person counts this send for its people (they may have been notified).`.trim();
			}
		});
		const goesBack = (group: SendGroup, { userId, held }: TakenSlot) =>
			!kept.has(personOf(group, userId)) && (!held || notSent.has(personOf(group, userId)));
		// A group without a send kept (one that failed before its sends too) gives all back.
		const back = [...this.taken].flatMap(([group, slots]) =>
			slots.filter((slot) => goesBack(group, slot)),
		);
		const givenBack = back.length === 0 || (await this.giveBack(back));
		for (const [group, slots] of this.taken) {
			// The execution's own record (a reference into its data): the next try reads it.
			const thisTry = this.tries.get(String(group.lead.itemIndex));
			for (const slot of thisTry ? slots : []) {
				const person = personOf(group, slot.userId);
				// A slot given back is no longer this run's; one kept is the next try's to hold.
				if (givenBack && goesBack(group, slot)) delete thisTry!.granted[slot.userId];
				const others = thisTry!.unknown.filter((userId) => userId !== slot.userId);
				const settled = kept.has(person) || notSent.has(person);
				const stillUnknown = settled
					? unknown.has(person)
					: others.length < thisTry!.unknown.length;
				thisTry!.unknown = stillUnknown ? [...others, slot.userId] : others;
			}
		}
	}

	private async giveBack(slots: TakenSlot[]): Promise<boolean> {
		const outcome = await giveSlotsBack(this.context, this.rule, slots);
		if (!outcome.ok) {
			this.context.logger.warn(
				`Companion Push: Cap per Person could not give back ${slots.length} slot(s) of sends not made (${outcome.reason}); those people count as notified until the window ends.`,
			);
		}
		return outcome.ok;
	}

	/** The run ended without an error item: nothing runs it again, so its records go. */
	runSucceeded(): void {
		this.tries.forgetRun();
	}
}
