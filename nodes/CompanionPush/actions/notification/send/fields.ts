import type { INodeProperties } from 'n8n-workflow';

import { maxParallelRequestsOption, optionsCollection } from '../../descriptions';
import { DEFAULT_KEYS_TO_KEEP, MAX_KEY_LENGTH, MAX_KEYS_TO_KEEP } from '../../../neverTwice';
import { waitOptions } from '../wait';
import { DEFAULT_CAP_WINDOW_MINUTES, MAX_CAP_SENDS, MAX_CAP_WINDOW_MINUTES } from './capPerPerson';
import {
	DEFAULT_DIGEST_TITLE,
	DEFAULT_DIGEST_WINDOW_MINUTES,
	MAX_DIGEST_WINDOW_MINUTES,
} from '../digestOptions';

/* The fields of Send and Schedule, declared once; sendOperationProperties (at the end) puts them
 * in order for either operation. */

// One sentence and a link (n8n's UX guidelines for an info box): the details are in the README.
const asyncNotice: INodeProperties = {
	displayName:
		'Phones get the notification shortly after this node finishes: <a href="https://github.com/n8n-nodes-companion-push/n8n-nodes-companion-push#never-twice-idempotency-key-and-unknown-items" target="_blank">how to follow up on delivery and never notify anyone twice</a>',
	name: 'asyncNotice',
	type: 'notice',
	default: '',
};

const messageFields: INodeProperties[] = [
	{
		displayName: 'Title',
		name: 'title',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'Your order has shipped',
		description:
			'Plain-text title shown in bold on the phone. At most 50 characters is recommended; longer titles go out with a warning.',
	},
	{
		displayName: 'Body',
		name: 'body',
		type: 'string',
		required: true,
		default: '',
		typeOptions: { rows: 3 },
		placeholder: 'Order 1042 is on its way',
		description:
			'Plain-text message shown under the title. At most 150 characters is recommended; longer texts go out with a warning.',
	},
];

const audienceFields: INodeProperties[] = [
	{
		displayName: 'Audience',
		name: 'audience',
		type: 'options',
		default: 'userIds',
		options: [
			{
				name: 'A User From the List',
				value: 'user',
				description: 'Pick one user of the organization',
			},
			{
				name: 'All Users',
				value: 'allUsers',
				description: 'Everyone in the organization, read from the user list at run time',
			},
			{
				name: 'User IDs',
				value: 'userIds',
				description: 'The user IDs you give (service user IDs, not e-mails)',
			},
			{
				name: 'Users With an Active App',
				value: 'activeUsers',
				description: 'Users who can receive notifications now, read at run time',
			},
		],
	},
	{
		displayName: 'User IDs',
		name: 'userIds',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 65f1c2a9e4b0c81d2a3f4b5c, 65f1c2a9e4b0c81d2a3f4b5d',
		description:
			'Comma-separated list of user IDs as returned by Get Many Users (24 characters such as 65f1c2a9e4b0c81d2a3f4b5c), not names or e-mails. Spaces and new lines also separate IDs. An expression may give a list: each element is one ID (an element holding a comma or space is refused). Duplicates are removed; IDs of other organizations are silently not notified.',
		displayOptions: { show: { audience: ['userIds'] } },
	},
	{
		displayName: 'User',
		name: 'user',
		type: 'resourceLocator',
		required: true,
		default: { mode: 'list', value: '' },
		description: 'The user to notify',
		displayOptions: { show: { audience: ['user'] } },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				typeOptions: { searchListMethod: 'searchUsers', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 65f1c2a9e4b0c81d2a3f4b5c',
			},
		],
	},
];

const sendModeField: INodeProperties = {
	displayName: 'Send Mode',
	name: 'sendMode',
	type: 'options',
	default: 'perItem',
	options: [
		{
			name: 'One Send per Input Item',
			value: 'perItem',
			description: 'Each input item makes its own send (for example one per order event)',
		},
		{
			name: 'One Send for All Items',
			value: 'combined',
			description:
				'The recipients of all input items are merged and de-duplicated into one send; title, body and fields come from the first item',
		},
	],
};

const additionalFields: INodeProperties = {
	displayName: 'Additional Fields',
	name: 'additionalFields',
	type: 'collection',
	placeholder: 'Add Field',
	default: {},
	options: [
		{
			displayName: 'Announcement ID',
			name: 'announcementId',
			type: 'string',
			default: '',
			description: 'Links the send to an announcement published in the service',
		},
		{
			displayName: 'Custom Deeplink',
			name: 'customDeeplink',
			type: 'string',
			default: '',
			placeholder: 'companionapp://chat',
			description: 'Used when Deeplink is "Custom". Must start with companionapp://.',
		},
		{
			displayName: 'Deeplink',
			name: 'deeplink',
			type: 'options',
			default: 'none',
			description: 'The screen the app opens when the notification is tapped',
			options: [
				{
					name: 'Announcement',
					value: 'announcement',
					description: 'Home, opening an announcement (give its ID)',
				},
				{
					name: 'Chat',
					value: 'chat',
					description: 'Conversation with the agent (companionapp://chat)',
				},
				{ name: 'Coach', value: 'coach', description: 'Coach section (companionapp://coach)' },
				{ name: 'Custom', value: 'custom', description: 'A companionapp:// value of your own' },
				{ name: 'Home', value: 'home', description: 'Home screen (companionapp://home)' },
				{ name: 'None', value: 'none', description: 'The app opens on its usual screen' },
			],
		},
		{
			displayName: 'Deeplink Announcement ID',
			name: 'deeplinkAnnouncementId',
			type: 'string',
			default: '',
			description:
				'Used when Deeplink is "Announcement": the announcement to open. When empty, the Announcement ID field is used.',
		},
		{
			displayName: 'Image URL',
			name: 'imageUrl',
			type: 'string',
			default: '',
			placeholder: 'https://example.com/picture.png',
			description:
				'Public https address of a JPG or PNG image. Some phones do not show images, so the message must make sense without it.',
		},
	],
};

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

/** Idempotency Key and its settings (see idempotencyKeys.ts), among the Options of Send and Schedule. */
const idempotencyOptions: INodeProperties[] = [
	{
		displayName: 'Idempotency Key',
		name: 'idempotencyKey',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.orderId }}:{{ $json.status }}',
		description: `A key that names the event this send is for (at most ${MAX_KEY_LENGTH.toLocaleString('en-US')} characters), usually an expression. A send whose key was already used successfully is not made again: the item comes out marked as skipped. Keys are kept in n8n's database, shared by every worker.`,
	},
	{
		displayName: 'Idempotency Scope',
		name: 'idempotencyScope',
		type: 'options',
		default: 'node',
		description:
			'Where a used key counts. "The Whole Workflow" is no longer offered: n8n\'s store gives the nodes of a workflow no lock they can share, so two nodes could both send one event; a node still set to it fails without sending.',
		options: [{ name: 'This Node', value: 'node', description: 'Keys used by this node only' }],
	},
	{
		displayName: 'Keys to Keep',
		name: 'keysToKeep',
		type: 'number',
		default: DEFAULT_KEYS_TO_KEEP,
		typeOptions: { minValue: 1, maxValue: MAX_KEYS_TO_KEEP },
		description: `How many used keys are remembered (at most ${MAX_KEYS_TO_KEEP.toLocaleString('en-US')}); beyond that the oldest are forgotten and could be used again`,
	},
];

/** "Deliver at Local Time" and "Quiet Hours" (localDelivery.ts), among the Options of Send and
 * Schedule, each in its place in the sorted list. */
const criticalOption: INodeProperties = {
	displayName: 'Critical',
	name: 'critical',
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

/** "Cap per Person" (capPerPerson.ts), among the Options of Send only. */
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
		type: 'number',
		default: DEFAULT_CAP_WINDOW_MINUTES,
		typeOptions: { minValue: 1, maxValue: MAX_CAP_WINDOW_MINUTES },
		description: `The rolling window of Cap per Person, in minutes (at most ${MAX_CAP_WINDOW_MINUTES}, a day). Used only with Cap per Person.`,
	},
];

/** "Digest Key" and its settings (digest.ts), among the Options of Send only. */
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
		type: 'string',
		default: DEFAULT_DIGEST_TITLE,
		placeholder: 'e.g. {count} order updates',
		description:
			"Title of a digest push that carries more than one event; {count} is their number. The body is the latest event's. A window with one event sends that event as it is.",
	},
	{
		displayName: 'Digest Window (Minutes)',
		name: 'digestWindowMinutes',
		type: 'number',
		default: DEFAULT_DIGEST_WINDOW_MINUTES,
		typeOptions: { minValue: 1, maxValue: MAX_DIGEST_WINDOW_MINUTES },
		description: `How long a window gathers events from its first one, in minutes (at most ${MAX_DIGEST_WINDOW_MINUTES}, a day). Used only with Digest Key.`,
	},
];

/** What Schedule adds to Send: its time, and what to do when that time is already past. */
export interface ScheduleProperties {
	scheduledAtField: INodeProperties;
	sendIfPastOption: INodeProperties;
}

/** The properties of Send, or of Schedule with `schedule`: the same fields in the same order. */
export function sendOperationProperties(schedule?: ScheduleProperties): INodeProperties[] {
	return [
		asyncNotice,
		...messageFields,
		...audienceFields,
		sendModeField,
		...(schedule ? [schedule.scheduledAtField] : []),
		additionalFields,
		optionsCollection([
			batchSizeOption,
			...(schedule ? [] : capOptions),
			criticalOption,
			deliverAtLocalTimeOption,
			...(schedule ? [] : digestOptions),
			...idempotencyOptions,
			maxParallelRequestsOption,
			...deliveryZoneOptions,
			...(schedule ? [schedule.sendIfPastOption] : []),
			...waitOptions(SEND_WAIT_DESCRIPTION),
		]),
	];
}
