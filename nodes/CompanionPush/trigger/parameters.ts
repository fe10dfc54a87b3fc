import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { TRIGGER_EVENTS } from './events';
import type { Filters, OutputMode, TriggerEventName } from './events';

export const DEFAULT_WATCH_WINDOW_HOURS = 24;
export const DEFAULT_MAX_READS_PER_POLL = 50;
export const DEFAULT_OPEN_DEADLINE_MINUTES = 15;

export interface TriggerParameters {
	events: TriggerEventName[];
	output: OutputMode;
	filters: Filters;
	watchWindowMs: number;
	maxReadsPerPoll: number;
	/** Not Opened Within, in ms, when Not Opened in Time is chosen. */
	openDeadlineMs?: number;
}

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
	const output =
		context.getNodeParameter('output', 'perEvent') === 'perNotification'
			? 'perNotification'
			: 'perEvent';
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
	let openDeadlineMs: number | undefined;
	if (events.includes('notOpenedInTime')) {
		const minutes = Number(context.getNodeParameter('openDeadline', DEFAULT_OPEN_DEADLINE_MINUTES));
		if (!Number.isFinite(minutes) || minutes <= 0) {
			throw new NodeOperationError(
				context.getNode(),
				`Not Opened Within must be a positive number of minutes (got ${String(minutes)})`,
			);
		}
		// A send is watched for the watch window after it went out: a deadline beyond it never comes.
		if (minutes >= watchWindowHours * 60) {
			throw new NodeOperationError(
				context.getNode(),
				`Not Opened Within (${minutes} minutes) must be shorter than the Watch Window (${watchWindowHours} hours)`,
				{ description: 'Shorten Not Opened Within, or lengthen Options > Watch Window.' },
			);
		}
		openDeadlineMs = minutes * 60 * 1000;
	}
	return {
		events,
		output,
		filters: {
			titleContains: typeof filters.titleContains === 'string' ? filters.titleContains : undefined,
			announcementId:
				typeof filters.announcementId === 'string' ? filters.announcementId : undefined,
		},
		watchWindowMs: watchWindowHours * 60 * 60 * 1000,
		maxReadsPerPoll,
		openDeadlineMs,
	};
}
