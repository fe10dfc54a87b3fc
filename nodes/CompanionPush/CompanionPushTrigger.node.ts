import { NodeConnectionTypes } from 'n8n-workflow';
import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';

import { pollCompanionPush } from './trigger/poll';
import { MAX_ESCALATION_LEVELS } from './report/escalationDeadlines';
import {
	DEFAULT_MAX_READS_PER_POLL,
	DEFAULT_OPEN_DEADLINE_MINUTES,
	DEFAULT_WATCH_WINDOW_HOURS,
} from './trigger/parameters';

export class CompanionPushTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Companion Push Trigger',
		name: 'companionPushTrigger',
		icon: {
			light: 'file:../../icons/companionPush.svg',
			dark: 'file:../../icons/companionPush.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		// n8n's node panel shows one entry for this node and the action node, with this description.
		description:
			'Send push notifications to the companion app, and start workflows when they settle, fail on a phone, are opened, reach no phone of a person, are not opened in time, or are opened after an escalation',
		defaults: {
			name: 'Companion Push Trigger',
		},
		credentials: [
			{
				name: 'companionPushApi',
				required: true,
			},
		],
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{
				displayName: 'Trigger On',
				name: 'events',
				type: 'multiOptions',
				required: true,
				default: ['notificationSettled'],
				// n8n's node panel lists each event as its `action` (else "On " + its name in lower case).
				description:
					'The events that start the workflow. Each event is emitted once. Whatever is chosen, a notification the trigger cannot follow in full comes as an item too: "detailIncomplete" (the API listed fewer delivery entries than it counts) or "stoppedWatching" (dropped from the watch list).',
				options: [
					{
						name: 'Delivery Failed',
						value: 'deliveryFailed',
						action: 'On delivery failed on a phone',
						description: 'A phone could not be reached (one item per failed delivery)',
					},
					{
						name: 'Delivery Opened',
						value: 'deliveryOpened',
						action: 'On notification opened',
						description: 'Someone tapped the notification (one item per opened delivery)',
					},
					{
						name: 'No Device',
						value: 'noDevice',
						action: 'On person with no active app',
						description:
							'A person has no active app on any phone, so the notification could not reach them (one item per person)',
					},
					{
						name: 'Not Opened in Time',
						value: 'notOpenedInTime',
						action: 'On person not opening in time',
						description:
							'A person reached on a phone opened it on none of their phones within the chosen minutes after it went out (one item per person; not again for someone already reported as Not Reached)',
					},
					{
						name: 'Not Reached',
						value: 'notReached',
						action: 'On person not reached on any phone',
						description:
							'No phone of a person got the notification: no active app (as No Device), or every phone failed, e.g. the app was uninstalled (one item per person)',
					},
					{
						name: 'Notification Settled',
						value: 'notificationSettled',
						action: 'On notification settled',
						description:
							'A send left "sending" (sent, partially failed or failed) or was canceled; emitted again if its state changes later',
					},
					{
						name: 'Opened After Escalation',
						value: 'openedAfterEscalation',
						action: 'On person opening after escalation',
						description:
							'A person told as Not Opened in Time opened it later (one item per person, with the level reached and the seconds it took); needs Not Opened in Time',
					},
				],
			},
			{
				displayName: 'Deadline',
				name: 'deadlineMode',
				type: 'options',
				default: 'single',
				displayOptions: { show: { events: ['notOpenedInTime'] } },
				options: [
					{
						name: 'One Deadline',
						value: 'single',
						description: 'Not Opened in Time is told once per person, at Not Opened Within',
					},
					{
						name: 'Alert Ladder (Several Deadlines)',
						value: 'ladder',
						description:
							'Not Opened in Time is told at each of the Escalation Deadlines, as level 1, 2, 3 and so on',
					},
				],
			},
			{
				displayName: 'Not Opened Within (Minutes)',
				name: 'openDeadline',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: DEFAULT_OPEN_DEADLINE_MINUTES,
				displayOptions: { show: { events: ['notOpenedInTime'], deadlineMode: ['single'] } },
				description:
					"Minutes after the notification went out (for a scheduled one: after it was sent, not its scheduled time) by which a person must have opened it on some phone. Not told when the API writes its send time without a time zone (n8n's log then says so).",
			},
			{
				displayName: 'Escalation Deadlines (Minutes)',
				name: 'openDeadlines',
				type: 'string',
				default: '',
				placeholder: 'e.g. 15, 30, 45',
				displayOptions: { show: { events: ['notOpenedInTime'], deadlineMode: ['ladder'] } },
				description: `Minutes after the notification went out, in increasing order (at most ${MAX_ESCALATION_LEVELS}): Not Opened in Time tells level 1 at the first, level 2 at the second, and so on, each person each level once and only while they have opened on no phone`,
			},
			{
				displayName: 'Output',
				name: 'output',
				type: 'options',
				default: 'perEvent',
				options: [
					{
						name: 'One Item per Event',
						value: 'perEvent',
					},
					{
						name: 'One Item per Notification',
						value: 'perNotification',
						description: 'Each notification with its new events in an "events" list',
					},
					{
						name: 'One Item per Notification and Group of People',
						value: 'perGroup',
						description:
							'The people of one event (of one level for Not Opened in Time) of a notification together in "userIds", with a "groupKey" for a Send\'s Idempotency Key: one Send reminds them all',
					},
				],
			},
			{
				displayName: 'Filters',
				name: 'filters',
				type: 'collection',
				placeholder: 'Add Filter',
				default: {},
				options: [
					{
						displayName: 'Announcement ID',
						name: 'announcementId',
						type: 'string',
						default: '',
						description:
							'Only notifications linked to this announcement (by their announcement ID, or a deeplink that opens it)',
					},
					{
						displayName: 'Title Contains',
						name: 'titleContains',
						type: 'string',
						default: '',
						description: 'Only notifications whose title contains this text (not case-sensitive)',
					},
					{
						displayName: 'Title Does Not Contain',
						name: 'titleExcludes',
						type: 'string',
						default: '',
						placeholder: 'e.g. Reminder:',
						description:
							'Not the notifications whose title contains this text (not case-sensitive): e.g. the reminders this workflow sends, so they are not escalated in turn',
					},
				],
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Max Reads per Poll',
						name: 'maxReadsPerPoll',
						type: 'number',
						typeOptions: { minValue: 1 },
						default: DEFAULT_MAX_READS_PER_POLL,
						description:
							'At most this many notifications are read per poll; the others wait for the next poll, most overdue first',
					},
					{
						displayName: 'Watch Window (Hours)',
						name: 'watchWindow',
						type: 'number',
						typeOptions: { minValue: 1 },
						default: DEFAULT_WATCH_WINDOW_HOURS,
						description:
							'How long after sending a notification is watched for new opens, failures and state changes',
					},
				],
			},
		],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		return await pollCompanionPush.call(this);
	}
}
