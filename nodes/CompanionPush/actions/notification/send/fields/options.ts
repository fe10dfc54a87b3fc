import type { INodeProperties } from 'n8n-workflow';

import { maxParallelRequestsOption } from '../../../descriptions';
import { DEFAULT_KEYS_TO_KEEP, MAX_KEY_LENGTH, MAX_KEYS_TO_KEEP } from '../../../../neverTwice';
import { waitOptions } from '../../wait';
import { DEFAULT_CAP_WINDOW_MINUTES, MAX_CAP_SENDS, MAX_CAP_WINDOW_MINUTES } from '../capPerPerson';
import {
	DEFAULT_DIGEST_TITLE,
	DEFAULT_DIGEST_WINDOW_MINUTES,
	MAX_DIGEST_WINDOW_MINUTES,
} from '../../digest/options';

/* The Options of Send and Schedule (index.ts holds their other fields), sorted by name as n8n
 * lists them; sendOptions (at the end) picks those of either operation. */

/**
 * Shown (and kept) only once the option it refines is added, e.g. Cap Window with Cap per Person.
 * n8n drops a hidden option's value when it loads a workflow, in the editor and at run time alike:
 * that loses nothing here, as the node reads each of these only together with the option it refines.
 */
function shownWith(option: string): INodeProperties['displayOptions'] {
	return { show: { [option]: [{ _cnd: { exists: true } }] } };
}

const batchSizeOption: INodeProperties = {
	displayName: 'Batch Size',
	name: 'batchSize',
	type: 'number',
	default: 1000,
	typeOptions: { minValue: 1, maxValue: 1000 },
	description:
		'Recipients per send. Larger audiences are split into several sends, each with its own ID (the API recommends at most 1000).',
};

const SEND_WAIT_DESCRIPTION =
	'Whether to wait, checking with growing intervals, until the send is delivered (sent, partially failed or failed) before the node finishes';

/** Idempotency Key and its settings (see idempotencyKeys.ts), among the Options of Send and Schedule:
 * its two settings are named from the key, so that they sort beside it. */
const idempotencyOptions: INodeProperties[] = [
	{
		displayName: 'Idempotency Key',
		name: 'idempotencyKey',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.orderId }}:{{ $json.status }}',
		description: `Names the event this send is for, usually from the item (at most ${MAX_KEY_LENGTH.toLocaleString('en-US')} characters). An event whose key was already sent is not sent again: its item says "skipped", so an event delivered twice notifies nobody twice. A key with an empty {{ }} part (a field the item lacks) or with no letter or digit is refused.`,
	},
	{
		displayName: 'Idempotency Key Applies To',
		name: 'idempotencyScope',
		displayOptions: shownWith('idempotencyKey'),
		type: 'options',
		default: 'node',
		description:
			'The sends a used key is checked against. Only those of this node: send the events that share keys through one Companion Push node.',
		options: [
			{
				name: 'This Node',
				value: 'node',
				description: 'The keys this node has sent with',
			},
		],
	},
	{
		displayName: 'Idempotency Keys Remembered',
		name: 'keysToKeep',
		displayOptions: shownWith('idempotencyKey'),
		type: 'number',
		default: DEFAULT_KEYS_TO_KEEP,
		typeOptions: { minValue: 1, maxValue: MAX_KEYS_TO_KEEP },
		description: `How many used keys this node remembers (at most ${MAX_KEYS_TO_KEEP.toLocaleString('en-US')}). Beyond that the oldest are forgotten: an event that old, delivered again, would be sent again.`,
	},
];

/** "Deliver at Local Time" and "Quiet Hours" (send/localDelivery.ts), among the Options of Send and
 * Schedule, each in its place in the sorted list. */
const criticalOption: INodeProperties = {
	displayName: 'Critical',
	name: 'critical',
	displayOptions: shownWith('quietHours'),
	type: 'boolean',
	default: false,
	description:
		'Whether the notification ignores Quiet Hours and goes out at once (or at its time), e.g. a safety alert',
};

const deliverAtLocalTimeOption: INodeProperties = {
	displayName: 'Deliver at Local Time',
	name: 'deliverAtLocalTime',
	type: 'string',
	default: '',
	placeholder: 'e.g. 09:00',
	description:
		"Time of day (HH:mm, 24-hour clock) at which each person gets it, in their Recipient Time Zone (or the workflow's). The node makes one scheduled send per time zone and batch; a time already past today goes out tomorrow. With Schedule, Scheduled At gives the day.",
};

const deliveryZoneOptions: INodeProperties[] = [
	{
		displayName: 'Quiet Hours',
		name: 'quietHours',
		type: 'string',
		default: '',
		placeholder: 'e.g. 22:00-07:00',
		description:
			"Span of the day (HH:mm-HH:mm) in each person's Recipient Time Zone (or the workflow's) when nobody is notified: a send that would arrive then is scheduled for its end, unless Critical is on",
	},
	{
		displayName: 'Recipient Time Zone',
		name: 'recipientTimeZone',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.timeZone }}',
		description:
			"Time zone of this item's people (an IANA name such as Europe/Madrid), usually an expression, used by Deliver at Local Time and Quiet Hours. When empty, the workflow's time zone is used and the output lists those people; a name that is not a time zone fails the item.",
	},
];

/** "Cap per Person" (send/capPerPerson.ts), among the Options of Send only. */
const capOptions: INodeProperties[] = [
	{
		displayName: 'Cap per Person',
		name: 'capPerPerson',
		type: 'number',
		default: 3,
		typeOptions: { minValue: 1, maxValue: MAX_CAP_SENDS },
		description:
			'At most this many sends per person within the Cap Window, counted by every execution of this node. People over it are left out of the send and come out on a second output, "Capped", with when they may be notified next.',
	},
	{
		displayName: 'Cap Window (Minutes)',
		name: 'capWindowMinutes',
		displayOptions: shownWith('capPerPerson'),
		type: 'number',
		default: DEFAULT_CAP_WINDOW_MINUTES,
		typeOptions: { minValue: 1, maxValue: MAX_CAP_WINDOW_MINUTES },
		description: `The rolling window of Cap per Person, in minutes (at most ${MAX_CAP_WINDOW_MINUTES}, a day). Used only with Cap per Person.`,
	},
];

/** "Digest Key" and its settings (digest/), among the Options of Send only. */
const digestOptions: INodeProperties[] = [
	{
		displayName: 'Digest Key',
		name: 'digestKey',
		type: 'string',
		default: '',
		placeholder: 'e.g. order-updates',
		description:
			"Names a kind of event to gather: events for the same person and key within the Digest Window become one push, scheduled at the window's end (each later event cancels it and schedules a replacement that counts them all). Each item's output names the send that carries it.",
	},
	{
		displayName: 'Digest Title',
		name: 'digestTitle',
		displayOptions: shownWith('digestKey'),
		type: 'string',
		default: DEFAULT_DIGEST_TITLE,
		placeholder: 'e.g. {count} order updates',
		description:
			"Title of a digest push that carries more than one event; {count} is their number. The body is the latest event's. A window with one event sends that event as it is.",
	},
	{
		displayName: 'Digest Window (Minutes)',
		name: 'digestWindowMinutes',
		displayOptions: shownWith('digestKey'),
		type: 'number',
		default: DEFAULT_DIGEST_WINDOW_MINUTES,
		typeOptions: { minValue: 1, maxValue: MAX_DIGEST_WINDOW_MINUTES },
		description: `How long a window gathers events from its first one, in minutes (at most ${MAX_DIGEST_WINDOW_MINUTES}, a day). Used only with Digest Key.`,
	},
];

/** What to do with User IDs that look like an e-mail or a name (../input.ts). */
const unusualUserIdsOption: INodeProperties = {
	displayName: 'Unusual User IDs',
	name: 'unusualUserIds',
	type: 'options',
	default: 'refuse',
	description:
		'What to do with a user ID that looks like an e-mail (an @) or a name (a space inside): the API accepts an ID it does not know and notifies nobody',
	options: [
		{
			name: 'Refuse',
			value: 'refuse',
			description: 'The item fails and nothing is sent for it, naming the IDs',
		},
		{
			name: 'Warn',
			value: 'warn',
			description: 'Sent as given; the output and a hint above it name the IDs',
		},
	],
};

/**
 * What a Digest Key cannot go with (digest/options.ts refuses the run), said in the editor as soon as
 * both are there. Notices, not hidden options: hiding one of the two would make n8n drop its value
 * from a saved workflow, turning a run that fails into one that sends otherwise than was set.
 * n8n shows a notice when every condition holds; an expression counts as holding, so the option's
 * own condition comes first and the Digest Key's second (a key is often an expression). The options
 * are named from the root ("/options.quietHours"): n8n 1.x fails to load a node whose condition
 * names a path it cannot resolve on the notice's own level.
 */
const DIGEST_CONFLICTS: Array<
	[string, string, NonNullable<INodeProperties['displayOptions']>['show']]
> = [
	['Quiet Hours', 'QuietHours', { '/options.quietHours': [{ _cnd: { exists: true } }] }],
	[
		'Deliver at Local Time',
		'LocalTime',
		{ '/options.deliverAtLocalTime': [{ _cnd: { exists: true } }] },
	],
	['Cap per Person', 'Cap', { '/options.capPerPerson': [{ _cnd: { exists: true } }] }],
	['Wait for Final Status', 'Wait', { '/options.waitForFinalStatus': [true] }],
	[
		'Audience "All Users" or "Users With an Active App"',
		'Audience',
		{ audience: ['allUsers', 'activeUsers'] },
	],
	['Send Mode "One Send for All Items"', 'SendMode', { sendMode: ['combined'] }],
];

export const digestConflictNotices: INodeProperties[] = DIGEST_CONFLICTS.map(
	([what, name, when]): INodeProperties => ({
		displayName: `Digest Key cannot go with ${what}: a run with both fails without sending. Remove one of them.`,
		name: `digestWith${name}`,
		type: 'notice',
		default: '',
		displayOptions: { show: { ...when, '/options.digestKey': [{ _cnd: { exists: true } }] } },
	}),
);

/** The Options of Send, or of Schedule with its `sendIfPastOption`. */
export function sendOptions(sendIfPastOption?: INodeProperties): INodeProperties[] {
	const schedule = sendIfPastOption !== undefined;
	return [
		batchSizeOption,
		...(schedule ? [] : capOptions),
		criticalOption,
		deliverAtLocalTimeOption,
		...(schedule ? [] : digestOptions),
		...idempotencyOptions,
		...deliveryZoneOptions,
		maxParallelRequestsOption,
		...(sendIfPastOption ? [sendIfPastOption] : []),
		unusualUserIdsOption,
		...waitOptions(SEND_WAIT_DESCRIPTION),
	];
}
