import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { parseEscalationDeadlines } from '../report/escalationDeadlines';
import { TRIGGER_EVENTS } from './events';
import type { TriggerEventName } from './events';
import type { Filters } from './filters';
import type { OutputMode } from './output';

export const DEFAULT_WATCH_WINDOW_HOURS = 24;
export const DEFAULT_MAX_READS_PER_POLL = 50;
export const DEFAULT_OPEN_DEADLINE_MINUTES = 15;

export interface TriggerParameters {
	events: TriggerEventName[];
	output: OutputMode;
	filters: Filters;
	watchWindowMs: number;
	maxReadsPerPoll: number;
	/** The deadlines of Not Opened in Time, in ms after a send went out, level 1 first: Escalation
	 * Deadlines when given, else Not Opened Within; set when Not Opened in Time is chosen. */
	openDeadlinesMs?: number[];
}

const OUTPUT_MODES: readonly OutputMode[] = ['perEvent', 'perNotification', 'perGroup'];

/** The node's parameters, checked: a wrong value stops the poll with a message saying what to fix. */
export function readParameters(context: IPollFunctions): TriggerParameters {
	const events = (context.getNodeParameter('events', []) as string[]).filter(
		(name): name is TriggerEventName => (TRIGGER_EVENTS as readonly string[]).includes(name),
	);
	if (events.length === 0) {
		throw new NodeOperationError(context.getNode(), 'No event to watch', {
			description: 'Choose at least one event in "Trigger On".',
		});
	}
	const chosenOutput = context.getNodeParameter('output', 'perEvent') as OutputMode;
	const output = OUTPUT_MODES.includes(chosenOutput) ? chosenOutput : 'perEvent';
	const filters = context.getNodeParameter('filters', {}) as IDataObject;
	const options = context.getNodeParameter('options', {}) as IDataObject;
	const watchWindowHours = Number(options.watchWindow ?? DEFAULT_WATCH_WINDOW_HOURS);
	const maxReadsPerPoll = Number(options.maxReadsPerPoll ?? DEFAULT_MAX_READS_PER_POLL);
	if (!Number.isFinite(watchWindowHours) || watchWindowHours <= 0) {
		throw new NodeOperationError(
			context.getNode(),
			`Watch Window must be a positive number of hours (got ${String(options.watchWindow)})`,
		);
	}
	if (!Number.isInteger(maxReadsPerPoll) || maxReadsPerPoll < 1) {
		throw new NodeOperationError(
			context.getNode(),
			`Max Reads per Poll must be a whole number of at least 1 (got ${String(options.maxReadsPerPoll)})`,
		);
	}
	if (events.includes('openedAfterEscalation') && !events.includes('notOpenedInTime')) {
		throw new NodeOperationError(
			context.getNode(),
			'Opened After Escalation needs Not Opened in Time in "Trigger On"',
			{
				description:
					'Only a person told as Not Opened in Time is escalated: choose both events, or remove Opened After Escalation.',
			},
		);
	}
	const openDeadlinesMs = events.includes('notOpenedInTime')
		? readDeadlines(context, watchWindowHours).map((minutes) => minutes * 60 * 1000)
		: undefined;
	return {
		events,
		output,
		filters: {
			titleContains: typeof filters.titleContains === 'string' ? filters.titleContains : undefined,
			titleExcludes: typeof filters.titleExcludes === 'string' ? filters.titleExcludes : undefined,
			announcementId:
				typeof filters.announcementId === 'string' ? filters.announcementId : undefined,
		},
		watchWindowMs: watchWindowHours * 60 * 60 * 1000,
		maxReadsPerPoll,
		openDeadlinesMs,
	};
}

/** The deadlines of Not Opened in Time in minutes, level 1 first: Escalation Deadlines (a list)
 * with Deadline "Alert Ladder", else the single Not Opened Within (the default, as in workflows
 * saved before the ladder). n8n hides, and so drops, the field of the other choice. */
function readDeadlines(context: IPollFunctions, watchWindowHours: number): number[] {
	const fromLadder = context.getNodeParameter('deadlineMode', 'single') === 'ladder';
	const field = fromLadder ? 'Escalation Deadlines' : 'Not Opened Within';
	let minutes: number[];
	if (fromLadder) {
		try {
			minutes = parseEscalationDeadlines(context.getNodeParameter('openDeadlines', '') as unknown);
		} catch (error) {
			throw new NodeOperationError(context.getNode(), `${field} ${(error as Error).message}`, {
				description: 'Write the minutes after sending, in increasing order, e.g. 15, 30, 45.',
			});
		}
		if (minutes.length === 0) {
			throw new NodeOperationError(context.getNode(), `${field} is empty`, {
				description:
					'Write the minutes after sending, in increasing order, e.g. 15, 30, 45, or set Deadline to "One Deadline".',
			});
		}
	} else {
		const single = Number(context.getNodeParameter('openDeadline', DEFAULT_OPEN_DEADLINE_MINUTES));
		if (!Number.isFinite(single) || single <= 0) {
			throw new NodeOperationError(
				context.getNode(),
				`${field} must be a positive number of minutes (got ${String(single)})`,
			);
		}
		minutes = [single];
	}
	// A send is watched for the watch window after it went out: a deadline beyond it never comes.
	const last = minutes[minutes.length - 1];
	if (last >= watchWindowHours * 60) {
		throw new NodeOperationError(
			context.getNode(),
			`${field} (${last} minutes) must be shorter than the Watch Window (${watchWindowHours} hours)`,
			{ description: `Shorten ${field}, or lengthen Options > Watch Window.` },
		);
	}
	return minutes;
}
