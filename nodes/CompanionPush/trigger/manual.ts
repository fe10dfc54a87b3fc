import { NodeOperationError } from 'n8n-workflow';
import type { INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import { getNotification, isListProbe, listNotifications } from '../transport';
import type { NotificationDetail, NotificationRecord } from '../transport';
import { detectEvents, sampleEvent } from './events';
import type { TriggerEvent } from './events';
import { matchesFilters } from './filters';
import type { Filters } from './filters';
import { toItems } from './output';
import type { TriggerParameters } from './parameters';

/** Sends looked at, newest first, and details read at most, by "Fetch Test Event". */
const TEST_SENDS_LISTED = 10;
const TEST_DETAILS_READ = 5;

/**
 * "Fetch Test Event" (manual mode): one recent real event of the selected kinds among the latest
 * sends that pass the filters, or, when there is none, a sample of the first selected kind built
 * from the latest of those sends. When no recent send passes the filters, an error says so (as
 * n8n's own triggers do when a test finds nothing), rather than a sample of a send the active
 * trigger would never report. Reads the API only: the trigger's state is neither read nor changed.
 */
export async function fetchTestEvent(
	context: IPollFunctions,
	parameters: TriggerParameters,
): Promise<INodeExecutionData[][]> {
	let serverNow: number | undefined;
	const latest = (
		await listNotifications(context, {
			max: TEST_SENDS_LISTED,
			onPage: (page) => (serverNow ??= page.serverTimeMs),
		})
	).filter((send) => !isListProbe(send)); // sends to nobody a lookup made
	const now = serverNow ?? Date.now();
	if (latest.length === 0) {
		throw new NodeOperationError(
			context.getNode(),
			'No notification has been sent yet, so there is no event to show',
			{
				description:
					'Send a notification (Companion Push node, Send operation), then fetch a test event again.',
			},
		);
	}
	const candidates = latest
		.filter((send) => matchesFilters(send, parameters.filters) !== false)
		.slice(0, TEST_DETAILS_READ);
	const selected = new Set(parameters.events);
	let firstMatching: NotificationDetail | undefined;
	for (const send of candidates) {
		const detail = await getNotification(context, send.id);
		if (matchesFilters(detail.notification, parameters.filters, true) === false) continue;
		firstMatching ??= detail;
		const [event] = detectEvents({
			detail,
			emittedKeys: new Set(),
			selected,
			now,
			openDeadlinesMs: parameters.openDeadlinesMs,
		});
		if (event) return [items(event, parameters, detail.notification)];
	}
	if (!firstMatching) throw nothingMatches(context, parameters.filters, latest.length);
	const sample = sampleEvent(firstMatching, parameters.events, parameters.openDeadlinesMs);
	return [items(sample, parameters, firstMatching.notification)];
}

function nothingMatches(
	context: IPollFunctions,
	filters: Filters,
	looked: number,
): NodeOperationError {
	const chosen = [
		filters.titleContains?.trim() && `Title Contains "${filters.titleContains.trim()}"`,
		filters.titleExcludes?.trim() && `Title Does Not Contain "${filters.titleExcludes.trim()}"`,
		filters.announcementId?.trim() && `Announcement ID "${filters.announcementId.trim()}"`,
	].filter(Boolean);
	return new NodeOperationError(
		context.getNode(),
		`None of the latest ${looked} notifications matches the filters (${chosen.join(', ')}), so there is no event to show`,
		{
			description:
				'Send a notification that matches the filters (or change them), then fetch a test event again.',
		},
	);
}

function items(
	event: TriggerEvent,
	parameters: TriggerParameters,
	record: NotificationRecord,
): INodeExecutionData[] {
	return toItems([event], parameters.output, new Map([[record.id, record]])).map((json) => ({
		json,
	}));
}
