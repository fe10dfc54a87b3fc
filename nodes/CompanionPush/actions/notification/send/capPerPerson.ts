import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { PoolResult } from '../../../common/pool';
import { failedSendOutcome } from '../../../transport';
import { fieldError } from '../../../nodeErrors';
import { giveSlotsBack, takeSlots } from './capSlots';
import type { CapRule, TakenSlot } from './capSlots';
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

export const MAX_CAP_SENDS = 100;
/** A day: longer windows would keep a slot's time less precisely still (a tick is 1/60 of the
 * window, capSlots.ts). */
export const MAX_CAP_WINDOW_MINUTES = 1_440;
export const DEFAULT_CAP_WINDOW_MINUTES = 60;

/** The options "Cap per Person" and "Cap Window (Minutes)" of an item that has a cap. */
export function readCapRule(
	context: IExecuteFunctions,
	options: IDataObject,
	itemIndex: number,
): CapRule {
	const maxSends = Number(options.capPerPerson);
	if (
		typeof options.capPerPerson === 'boolean' ||
		options.capPerPerson === '' ||
		!Number.isInteger(maxSends) ||
		maxSends < 1 ||
		maxSends > MAX_CAP_SENDS
	) {
		throw fieldError(
			context,
			'Cap per Person',
			`must be a whole number of sends from 1 to ${MAX_CAP_SENDS} (got ${String(options.capPerPerson).slice(0, 40)})`,
			itemIndex,
			'item',
		);
	}
	const window = options.capWindowMinutes ?? DEFAULT_CAP_WINDOW_MINUTES;
	const windowMinutes = Number(window);
	if (
		typeof window === 'boolean' ||
		window === '' ||
		!Number.isFinite(windowMinutes) ||
		windowMinutes <= 0 ||
		windowMinutes > MAX_CAP_WINDOW_MINUTES
	) {
		throw fieldError(
			context,
			'Cap Window (Minutes)',
			`must be a positive number of minutes, at most ${MAX_CAP_WINDOW_MINUTES} (got ${String(window).slice(0, 40)})`,
			itemIndex,
			'item',
		);
	}
	// Slots are kept to the minute at least: a part of a minute counts as a whole one.
	return { maxSends, windowMinutes: Math.ceil(windowMinutes) };
}

/** A person a send left out, over the cap. */
interface CappedPerson {
	group: SendGroup;
	userId: string;
	notifyAfter: number;
}

/** What the cap decided for a run, and what it gives back once the sends ended. */
export class RunCap {
	readonly capped: CappedPerson[] = [];
	private readonly taken = new Map<SendGroup, TakenSlot[]>();

	private constructor(
		private readonly context: IExecuteFunctions,
		readonly rule: CapRule,
	) {}

	/**
	 * Takes a slot for every person of every group (in item order) before anything is sent; those
	 * over the cap are taken out of their group's recipients. Throws, sending nothing, when n8n's
	 * store cannot be read.
	 */
	static async apply(
		context: IExecuteFunctions,
		rule: CapRule,
		audiences: Array<{ group: SendGroup; recipients: string[] }>,
	): Promise<RunCap> {
		const cap = new RunCap(context, rule);
		const requests = audiences.flatMap(({ recipients }) => recipients);
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
			const granted: string[] = [];
			const taken: TakenSlot[] = [];
			for (const userId of audience.recipients) {
				const decision = outcome.value[next++];
				if (decision.granted) {
					granted.push(userId);
					taken.push({ userId, tick: decision.tick });
				} else
					cap.capped.push({ group: audience.group, userId, notifyAfter: decision.notifyAfter });
			}
			audience.recipients = granted;
			cap.taken.set(audience.group, taken);
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
		return this.capped.map(({ group, userId, notifyAfter }) => {
			const naming = group.items.filter((item) => item.userIds.includes(userId));
			return {
				json: {
					userId,
					capped: true,
					capPerPerson: maxSends,
					capWindowMinutes: windowMinutes,
					notifyAfter: new Date(notifyAfter).toISOString(),
					title: group.lead.message.title,
				},
				pairedItem:
					naming.length > 0 ? naming.map((item) => ({ item: item.itemIndex })) : group.pairedItems,
			};
		});
	}

	/**
	 * The sends ended: the slots of every person not notified for sure go back (a send refused, never
	 * started, or skipped by never-twice). An accepted send keeps
	 * them, and so does one whose outcome is unknown: its error says so.
	 */
	async settle(tasks: SendTask[], results: Array<PoolResult<IDataObject>>): Promise<void> {
		const kept = new Set<string>();
		const keep = (task: SendTask) => {
			for (const userId of task.batch)
				kept.add(JSON.stringify([task.group.lead.itemIndex, userId]));
		};
		tasks.forEach((task, index) => {
			const result = results[index];
			if (result?.ok) {
				if (!result.value.skipped && !result.value.sentByEarlierTry) keep(task);
				return;
			}
			if (!result) return;
			const outcome = failedSendOutcome(result.error);
			if (outcome === 'notSent') return;
			keep(task);
			if (outcome === 'unknown') {
				const error = result.error as { description?: string | null };
				error.description =
					`${error.description ?? ''} Cap per Person counts this send for its people (they may have been notified).`.trim();
			}
		});
		// A group without a send kept (one that failed before its sends too) gives all back.
		const back = [...this.taken].flatMap(([group, slots]) =>
			slots.filter(({ userId }) => !kept.has(JSON.stringify([group.lead.itemIndex, userId]))),
		);
		if (back.length === 0) return;
		const outcome = await giveSlotsBack(this.context, this.rule, back);
		if (!outcome.ok) {
			this.context.logger.warn(
				`Companion Push: Cap per Person could not give back ${back.length} slot(s) of sends not made (${outcome.reason}); those people count as notified until the window ends.`,
			);
		}
	}
}
