import { NodeOperationError } from 'n8n-workflow';
import type { INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import { getNotification, listNotifications } from '../transport';
import type { NotificationDetail, NotificationRecord } from '../transport';
import { detectEvents, matchesFilters, sampleEvent, toItems } from './events';
import type { TriggerEvent } from './events';
import type { TriggerParameters } from './parameters';

/** Sends looked at, newest first, and details read at most, by "Fetch Test Event". */
const TEST_SENDS_LISTED = 10;
const TEST_DETAILS_READ = 5;

/**
 * "Fetch Test Event" (manual mode): one recent real event of the selected kinds among the latest
 * sends, or, when there is none, a sample built from the latest send. Reads the API only: the
 * trigger's state in static data is neither read nor changed.
 */
export async function fetchTestEvent(
	context: IPollFunctions,
	parameters: TriggerParameters,
): Promise<INodeExecutionData[][]> {
	let serverNow: number | undefined;
	const latest = await listNotifications(context, {
		max: TEST_SENDS_LISTED,
		onPage: (page) => (serverNow ??= page.serverTimeMs),
	});
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
			openDeadlineMs: parameters.openDeadlineMs,
		});
		if (event) return [items(event, parameters, detail.notification)];
	}
	const base = firstMatching ?? (await getNotification(context, latest[0].id));
	return [
		items(
			sampleEvent(base, parameters.events, parameters.openDeadlineMs),
			parameters,
			base.notification,
		),
	];
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
