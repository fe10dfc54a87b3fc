import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { toScheduledAtWithOffset } from '../../input/scheduleTime';
import { fieldError } from '../../nodeErrors';
import { readParameter } from '../itemLoop';
import { sendOperationProperties } from './send/fields';
import { sendItems } from './send/run';

const properties = sendOperationProperties({
	scheduledAtField: {
		displayName: 'Scheduled At',
		name: 'scheduledAt',
		type: 'dateTime',
		required: true,
		default: '',
		description:
			"When the notification goes out (with Deliver at Local Time: its day). A time without a time zone is read in the workflow's time zone; the API always receives an explicit offset. Dispatch may come up to a couple of minutes late.",
	},
	sendIfPastOption: {
		displayName: 'Send If Time Is Past',
		name: 'sendIfPast',
		type: 'boolean',
		default: false,
		description:
			'Whether to send at once when Scheduled At is already past. Off: the item fails instead, so a late run never notifies people unexpectedly.',
	},
});

export const description = updateDisplayOptions(
	{ show: { resource: ['notification'], operation: ['schedule'] } },
	properties,
);

/** "Scheduled At" of an item, with an explicit offset. A past time is refused unless "Send If Time
 * Is Past" is on (then the send goes out at once), so a late run never notifies people unexpectedly.
 * With "Deliver at Local Time" it names the day only: each zone's time on it is checked in the plan. */
function readSchedule(context: IExecuteFunctions, itemIndex: number, options: IDataObject) {
	const when = toScheduledAtWithOffset(
		readParameter(context, 'scheduledAt', 'Scheduled At', itemIndex, '', undefined, 'item'),
		context.getTimezone(),
	);
	if ('problem' in when) throw fieldError(context, 'Scheduled At', when.problem, itemIndex, 'item');
	const localTime = options.deliverAtLocalTime;
	if (typeof localTime === 'string' && localTime.trim() !== '')
		return { scheduledAtWithOffset: when.iso };
	if (when.epochMs > Date.now()) return { scheduledAtWithOffset: when.iso };
	if (options.sendIfPast === true) return { sentImmediately: true };
	throw fieldError(
		context,
		'Scheduled At',
		`is in the past (${when.iso}), so the notification would go out at once. Pick a future time, or turn on the option "Send If Time Is Past"`,
		itemIndex,
		'item',
	);
}

/** Schedules a send: as Send, with `scheduled_at` always carrying an explicit offset. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return (await sendItems(this, readSchedule)).items;
}
