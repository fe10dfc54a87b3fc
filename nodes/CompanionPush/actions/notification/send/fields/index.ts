import type { INodeProperties } from 'n8n-workflow';

import { optionsCollection } from '../../../descriptions';
import { MAX_BODY_LENGTH, MAX_TITLE_LENGTH } from '../../../../input/message';
import { digestConflictNotices, sendOptions } from './options';

/* The fields of Send and Schedule, declared once; sendOperationProperties (at the end) puts them
 * in order for either operation. Their Options are in options.ts. */

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
		description: `Plain-text title shown in bold on the phone. At most 50 characters is recommended; longer titles go out with a warning, and more than ${MAX_TITLE_LENGTH.toLocaleString('en-US')} are refused.`,
	},
	{
		displayName: 'Body',
		name: 'body',
		type: 'string',
		required: true,
		default: '',
		typeOptions: { rows: 3 },
		placeholder: 'Order 1042 is on its way',
		description: `Plain-text message shown under the title. At most 150 characters is recommended; longer texts go out with a warning, and more than ${MAX_BODY_LENGTH.toLocaleString('en-US')} are refused.`,
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
			'Comma-separated list of user IDs as returned by Get Many Users (24 characters such as 65f1c2a9e4b0c81d2a3f4b5c), not names or e-mails. New lines also separate IDs; spaces do not. An expression may give a list: each element is one ID (an element holding a comma is refused). An ID that looks like an e-mail or a name is refused (see Options > Unusual User IDs). Duplicates are removed; IDs of other organizations are silently not notified.',
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
			displayName: 'Announcement to Open',
			name: 'deeplinkAnnouncementId',
			type: 'string',
			default: '',
			placeholder: 'e.g. an-42',
			description:
				'With Deeplink "Announcement": the ID of the announcement the app opens when the notification is tapped. When empty, the Linked Announcement ID is opened.',
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
					description: 'Home, opening the announcement of Announcement to Open',
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
			displayName: 'Image URL',
			name: 'imageUrl',
			type: 'string',
			default: '',
			placeholder: 'https://example.com/picture.png',
			description:
				'Public https address of a JPG or PNG image. Some phones do not show images, so the message must make sense without it.',
		},
		{
			displayName: 'Linked Announcement ID',
			name: 'announcementId',
			type: 'string',
			default: '',
			placeholder: 'e.g. an-42',
			description:
				"The announcement published in the service that this send belongs to: kept with the send (the trigger's Announcement ID filter finds it by this). It does not choose what the app opens: that is Deeplink.",
		},
	],
};

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
		optionsCollection(sendOptions(schedule?.sendIfPastOption)),
		...(schedule ? [] : digestConflictNotices),
	];
}
