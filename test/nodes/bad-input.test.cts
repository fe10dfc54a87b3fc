/**
 * The bad-input catalog: wrong types, empty values, wrong formats, zones, huge lists,
 * unicode and expressions resolving to odd types, across every operation. Each case runs the node
 * through n8n's engine and must end in a NodeOperationError whose message names the field and the
 * item, with nothing at all reaching the sandbox (not even a token renewal).
 */
import type { IDataObject } from 'n8n-workflow';

import {
	count,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	pairedOf,
	runOn,
	SEND,
	sendParameters,
	sentBodies,
	useSandbox,
} from '../harness/index.cts';

interface BadCase {
	/** The field the message must name, as the user sees it. */
	field: string;
	parameters: IDataObject;
	/** Input items; the bad one is the last. Default one empty item. */
	items?: IDataObject[];
	timezone?: string;
	/** A further part the message must contain. */
	says?: RegExp;
}

const USER = 'e533773a0ba45c0000000000';
const send = (fields: IDataObject) => sendParameters({ userIds: USER, ...fields });
const schedule = (scheduledAt: string, fields: IDataObject = {}) =>
	send({ operation: 'schedule', scheduledAt, ...fields });
const byId = (
	operation: 'cancel' | 'get',
	notificationId: string,
	options: IDataObject = {},
): IDataObject => ({
	resource: 'notification',
	operation,
	notificationId,
	options,
});
/** Item 0 is good, item 1 carries `value` in `key`: read with '={{ $json.<key> }}'. */
const secondItem = (
	key: string,
	value: IDataObject[string],
	good: IDataObject[string] = 'Good',
): IDataObject[] => [{ [key]: good }, { [key]: value }];
const manyIds = Array.from({ length: 10_000 }, (_, index) => `user-${index}`);

const catalog: Array<[string, BadCase]> = [
	// Title and body: empty, blank, odd types from expressions, invisible unicode.
	[
		'title empty from an expression',
		{ field: 'Title', parameters: send({ title: '={{ "" }}' }), says: /is empty/ },
	],
	[
		'title only spaces and new lines',
		{ field: 'Title', parameters: send({ title: ' \n\t ' }), says: /is empty/ },
	],
	[
		'title only zero-width spaces and a BOM',
		{ field: 'Title', parameters: send({ title: '\u200b\u200d\ufeff' }), says: /is empty/ },
	],
	[
		'title null from the item',
		{ field: 'Title', items: secondItem('t', null), parameters: send({ title: '={{ $json.t }}' }) },
	],
	[
		'title missing from the item',
		{ field: 'Title', items: [{ t: 'Good' }, {}], parameters: send({ title: '={{ $json.t }}' }) },
	],
	[
		'title an object',
		{
			field: 'Title',
			items: secondItem('t', { text: 'hi' }),
			parameters: send({ title: '={{ $json.t }}' }),
			says: /object/,
		},
	],
	[
		'title a list',
		{
			field: 'Title',
			items: secondItem('t', ['a', 'b']),
			parameters: send({ title: '={{ $json.t }}' }),
			says: /list/,
		},
	],
	['body empty', { field: 'Body', parameters: send({ body: '={{ "   " }}' }), says: /is empty/ }],
	[
		'body an object',
		{
			field: 'Body',
			items: secondItem('b', { a: 1 }),
			parameters: send({ body: '={{ $json.b }}' }),
			says: /object/,
		},
	],
	['body only a zero-width joiner', { field: 'Body', parameters: send({ body: '\u200d' }) }],

	[
		'title an expression with broken syntax',
		{ field: 'Title', parameters: send({ title: '={{ $json. }}' }), says: /could not be read/ },
	],

	// Recipients.
	[
		'user IDs empty from an expression',
		{ field: 'User IDs', parameters: send({ userIds: '={{ "" }}' }), says: /is empty/ },
	],
	[
		'user IDs only separators',
		{ field: 'User IDs', parameters: send({ userIds: ' , ;\n\n ,' }), says: /is empty/ },
	],
	[
		'user IDs an empty list',
		{
			field: 'User IDs',
			items: secondItem('ids', [], [USER]),
			parameters: send({ userIds: '={{ $json.ids }}' }),
		},
	],
	[
		'user IDs null',
		{
			field: 'User IDs',
			items: secondItem('ids', null, USER),
			parameters: send({ userIds: '={{ $json.ids }}' }),
		},
	],
	[
		'user IDs a boolean',
		{
			field: 'User IDs',
			items: secondItem('ids', true, USER),
			parameters: send({ userIds: '={{ $json.ids }}' }),
		},
	],
	[
		'user IDs an object without id',
		{
			field: 'User IDs',
			items: secondItem('ids', { user: USER }, USER),
			parameters: send({ userIds: '={{ $json.ids }}' }),
			says: /not a user ID/,
		},
	],
	[
		'user IDs a list holding an object',
		{
			field: 'User IDs',
			items: secondItem('ids', [USER, { name: 'x' }], USER),
			parameters: send({ userIds: '={{ $json.ids }}' }),
		},
	],
	[
		'user IDs a list of nulls',
		{
			field: 'User IDs',
			items: secondItem('ids', [null, null], USER),
			parameters: send({ userIds: '={{ $json.ids }}' }),
		},
	],
	[
		'user IDs: 10,000 of them with one object at the end',
		{
			field: 'User IDs',
			items: secondItem('ids', [...manyIds, { bad: true }], USER),
			parameters: send({ userIds: '={{ $json.ids }}' }),
		},
	],
	[
		'user IDs from a node that does not exist',
		{
			field: 'User IDs',
			parameters: send({ userIds: '={{ $("Nope").item.json.ids }}' }),
			says: /could not be read/,
		},
	],
	[
		'user IDs a list whose element holds two IDs',
		{
			field: 'User IDs',
			items: secondItem('ids', ['u1', 'u2, u3'], [USER]),
			parameters: send({ userIds: '={{ $json.ids }}' }),
			says: /element 2: "u2, u3"/,
		},
	],
	['user IDs holding NaN', { field: 'User IDs', parameters: send({ userIds: '={{ [NaN] }}' }) }],
	[
		'user IDs an e-mail and a name, as a builder types them (refused by default)',
		{
			field: 'User IDs',
			parameters: send({ userIds: 'john.smith@acme.com, Jane Doe' }),
			says: /"john\.smith@acme\.com" looks like an e-mail, "Jane Doe" looks like a name/,
		},
	],
	[
		'user IDs a list element with a space inside (a name, not two IDs)',
		{
			field: 'User IDs',
			items: secondItem('ids', [USER, 'Jane Doe'], [USER]),
			parameters: send({ userIds: '={{ $json.ids }}' }),
			says: /"Jane Doe" looks like a name/,
		},
	],
	[
		'user picker by ID given an e-mail',
		{
			field: 'User',
			parameters: send({
				audience: 'user',
				user: { __rl: true, mode: 'id', value: 'jane@acme.com' },
			}),
			says: /looks like an e-mail/,
		},
	],
	[
		'Unusual User IDs unknown from an expression',
		{
			field: 'Unusual User IDs',
			parameters: send({ options: { unusualUserIds: '={{ "ignore" }}' } }),
		},
	],
	[
		'a user ID of 100 kB',
		{
			field: 'User IDs',
			items: secondItem('ids', `${USER}, ${'x'.repeat(102_400)}`, USER),
			parameters: send({ userIds: '={{ $json.ids }}' }),
			says: /102,400 characters \(ID 2, starting "xxx.*at most 256/,
		},
	],
	[
		'a user picked by an ID of 100 kB',
		{
			field: 'User',
			parameters: send({
				audience: 'user',
				user: { __rl: true, mode: 'id', value: 'x'.repeat(102_400) },
			}),
			says: /longer than 256/,
		},
	],
	[
		'a title of 1,001 characters',
		{ field: 'Title', parameters: send({ title: 'Ω'.repeat(1_001) }), says: /1,001 characters/ },
	],
	[
		'a body of 4,001 characters (emoji count as one each)',
		{ field: 'Body', parameters: send({ body: '🚀'.repeat(4_001) }), says: /4,001 characters/ },
	],
	[
		'an Idempotency Key built from fields the item lacks: only its separator is left',
		{
			field: 'Idempotency Key',
			items: [
				{ orderId: '1042', status: 'shipped' },
				{ order_id: '1043', state: 'shipped' },
			],
			parameters: send({
				options: { idempotencyKey: '={{ $json.orderId }}:{{ $json.status }}' },
			}),
			says: /parts that gave nothing for this item: \{\{ \$json\.orderId \}\}, \{\{ \$json\.status \}\} \(the key came out as ":"\)/,
		},
	],
	[
		'an Idempotency Key missing one of its fields: ":shipped" has letters, but a part gave nothing',
		{
			field: 'Idempotency Key',
			items: [
				{ orderId: '1042', status: 'shipped' },
				{ order_id: '1043', status: 'shipped' },
			],
			parameters: send({
				options: { idempotencyKey: '={{ $json.orderId }}:{{ $json.status }}' },
			}),
			says: /a part that gave nothing for this item: \{\{ \$json\.orderId \}\} \(the key came out as ":shipped"\)/,
		},
	],
	[
		'an Idempotency Key of separators, spaces and punctuation only',
		{
			field: 'Idempotency Key',
			parameters: send({ options: { idempotencyKey: ' - / #:: ' } }),
			says: /no letter or digit/,
		},
	],
	[
		'a Digest Key of 201 characters',
		{
			field: 'Digest Key',
			parameters: send({ options: { digestKey: 'k'.repeat(201) } }),
			says: /longer than 200/,
		},
	],
	[
		'audience unknown from an expression',
		{
			field: 'Audience',
			parameters: send({
				audience: '={{ "everyone" }}',
				user: { __rl: true, mode: 'id', value: USER },
			}),
		},
	],
	[
		'user picker empty',
		{
			field: 'User',
			parameters: send({
				audience: 'user',
				user: { __rl: true, mode: 'id', value: '={{ "  " }}' },
			}),
		},
	],
	[
		'user picker an object',
		{
			field: 'User',
			parameters: send({
				audience: 'user',
				user: { __rl: true, mode: 'id', value: '={{ { id: 1 } }}' },
			}),
		},
	],

	// Additional fields.
	[
		'image URL over http',
		{
			field: 'Image URL',
			parameters: send({ additionalFields: { imageUrl: 'http://cdn.example.com/a.png' } }),
			says: /https/,
		},
	],
	[
		'image URL not a URL',
		{ field: 'Image URL', parameters: send({ additionalFields: { imageUrl: 'picture.png' } }) },
	],
	[
		'image URL a GIF',
		{
			field: 'Image URL',
			parameters: send({ additionalFields: { imageUrl: 'https://cdn.example.com/a.gif' } }),
			says: /\.png/,
		},
	],
	[
		'image URL a list',
		{
			field: 'Image URL',
			parameters: send({ additionalFields: { imageUrl: '={{ ["https://a.example/x.png"] }}' } }),
		},
	],
	[
		'custom deeplink with another scheme',
		{
			field: 'Custom Deeplink',
			parameters: send({
				additionalFields: { deeplink: 'custom', customDeeplink: 'https://example.com' },
			}),
		},
	],
	[
		'custom deeplink with a control character',
		{
			field: 'Custom Deeplink',
			parameters: send({
				additionalFields: { deeplink: 'custom', customDeeplink: 'companionapp://ch\u0007at' },
			}),
			says: /control character \(U\+0007/,
		},
	],
	[
		'deeplink picker given a value with a line break inside',
		{
			field: 'Deeplink',
			parameters: send({ additionalFields: { deeplink: '={{ "companionapp://home\\nx" }}' } }),
			says: /U\+000A.* at position 20/,
		},
	],
	[
		'custom deeplink empty',
		{ field: 'Custom Deeplink', parameters: send({ additionalFields: { deeplink: 'custom' } }) },
	],
	[
		'deeplink picker given a web address',
		{
			field: 'Deeplink',
			parameters: send({ additionalFields: { deeplink: '={{ "https://example.com/x" }}' } }),
		},
	],
	[
		'deeplink announcement without any ID',
		{
			field: 'Announcement to Open',
			parameters: send({ additionalFields: { deeplink: 'announcement' } }),
		},
	],
	[
		'announcement ID an object',
		{
			field: 'Linked Announcement ID',
			parameters: send({ additionalFields: { announcementId: '={{ { id: 7 } }}' } }),
		},
	],

	// Options.
	['batch size 0', { field: 'Batch Size', parameters: send({ options: { batchSize: 0 } }) }],
	[
		'batch size 1001 (above the spec batch)',
		{ field: 'Batch Size', parameters: send({ options: { batchSize: 1001 } }) },
	],
	['batch size 2.5', { field: 'Batch Size', parameters: send({ options: { batchSize: 2.5 } }) }],
	[
		'batch size text',
		{ field: 'Batch Size', parameters: send({ options: { batchSize: '={{ "lots" }}' } }) },
	],
	[
		'wait timeout 0',
		{
			field: 'Wait Timeout (Seconds)',
			parameters: send({ options: { waitForFinalStatus: true, waitTimeout: 0 } }),
		},
	],
	[
		'wait timeout negative',
		{
			field: 'Wait Timeout (Seconds)',
			parameters: send({ options: { waitForFinalStatus: true, waitTimeout: -5 } }),
		},
	],
	[
		'send mode in the wrong case',
		{ field: 'Send Mode', parameters: send({ sendMode: '={{ "Combined" }}' }) },
	],

	// Scheduled At: formats, zones, odd types, the past.
	[
		'scheduled at empty',
		{ field: 'Scheduled At', parameters: schedule('={{ "" }}'), says: /is empty/ },
	],
	[
		'scheduled at words',
		{ field: 'Scheduled At', parameters: schedule('tomorrow at 9'), says: /not a date/ },
	],
	[
		'scheduled at an impossible day',
		{ field: 'Scheduled At', parameters: schedule('2031-02-30T10:00:00') },
	],
	[
		'scheduled at an impossible offset',
		{ field: 'Scheduled At', parameters: schedule('2031-01-01T10:00:00+25:00'), says: /offset/ },
	],
	[
		'scheduled at an offset with 75 minutes',
		{ field: 'Scheduled At', parameters: schedule('2031-01-01T10:00:00+05:75'), says: /offset/ },
	],
	[
		'scheduled at a Luxon DateTime at +15:00',
		{
			field: 'Scheduled At',
			parameters: schedule('={{ $now.plus({ days: 1 }).setZone("UTC+15") }}'),
			says: /offset/,
		},
	],
	[
		'scheduled at an unknown zone name',
		{ field: 'Scheduled At', parameters: schedule('2031-01-01 10:00:00 Mars/Olympus_Mons') },
	],
	[
		'scheduled at a boolean',
		{ field: 'Scheduled At', parameters: schedule('={{ true }}'), says: /boolean/ },
	],
	[
		'scheduled at an object',
		{
			field: 'Scheduled At',
			items: secondItem('at', { when: 'soon' }, '2031-01-01T00:00:00Z'),
			parameters: schedule('={{ $json.at }}'),
			says: /object/,
		},
	],
	[
		'scheduled at a list',
		{ field: 'Scheduled At', parameters: schedule('={{ ["2031-01-01"] }}'), says: /list/ },
	],
	['scheduled at NaN', { field: 'Scheduled At', parameters: schedule('={{ NaN }}') }],
	[
		'scheduled at in seconds instead of milliseconds (1970)',
		{ field: 'Scheduled At', parameters: schedule('={{ 1900000000 }}'), says: /in the past/ },
	],
	[
		'scheduled at in the past, in another zone',
		{
			field: 'Scheduled At',
			timezone: 'Pacific/Kiritimati',
			parameters: schedule('2001-01-01T00:00:00'),
			says: /in the past/,
		},
	],

	// Cancel and Get.
	[
		'cancel: notification ID empty',
		{ field: 'Notification ID', parameters: byId('cancel', '={{ "" }}'), says: /is empty/ },
	],
	[
		'cancel: notification ID a path',
		{ field: 'Notification ID', parameters: byId('cancel', '../../user/list') },
	],
	[
		'cancel: notification ID with a query',
		{ field: 'Notification ID', parameters: byId('cancel', 'abc?skip=0') },
	],
	[
		'cancel: notification ID an object',
		{ field: 'Notification ID', parameters: byId('cancel', '={{ { id: "abc" } }}') },
	],
	[
		'cancel: notification ID a list of two',
		{ field: 'Notification ID', parameters: byId('cancel', '={{ ["a", "b"] }}') },
	],
	[
		'get: notification ID with spaces',
		{ field: 'Notification ID', parameters: byId('get', 'abc def') },
	],
	[
		'get: notification ID null',
		{ field: 'Notification ID', parameters: byId('get', '={{ null }}') },
	],
	[
		'get: notification ID an expression with broken syntax',
		{ field: 'Notification ID', parameters: byId('get', '={{ $json.id + }}') },
	],
	[
		'get: deliveries mode unknown',
		{ field: 'Deliveries', parameters: byId('get', 'abc', { deliveries: '={{ "all" }}' }) },
	],
	[
		'get: wait timeout 0',
		{
			field: 'Wait Timeout (Seconds)',
			parameters: byId('get', 'abc', { waitForFinalStatus: true, waitTimeout: 0 }),
		},
	],

	// Get Many.
	[
		'notifications: limit 0',
		{ field: 'Limit', parameters: { resource: 'notification', operation: 'getMany', limit: 0 } },
	],
	[
		'notifications: limit 2.5',
		{ field: 'Limit', parameters: { resource: 'notification', operation: 'getMany', limit: 2.5 } },
	],
	[
		'notifications: limit text',
		{
			field: 'Limit',
			parameters: { resource: 'notification', operation: 'getMany', limit: '={{ "ten" }}' },
		},
	],
	[
		'users: limit negative',
		{ field: 'Limit', parameters: { resource: 'user', operation: 'getMany', limit: -1 } },
	],
	[
		'users: limit an object',
		{ field: 'Limit', parameters: { resource: 'user', operation: 'getMany', limit: '={{ {} }}' } },
	],
];

describe('bad-input catalog', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 20, resetBeforeEach: true });

	test('holds at least 30 cases', () => {
		expect(catalog.length).toBeGreaterThanOrEqual(30);
	});

	test.each(catalog)('%s', async (_name, badCase) => {
		const items = badCase.items ?? [{}];
		const badItem = items.length - 1;
		const { items: output, error } = await runOn(sandbox, {
			items,
			parameters: badCase.parameters,
			timezone: badCase.timezone,
		});

		expect(output).toEqual([]);
		expect(error).toBeDefined();
		expect(error!.name).toBe('NodeOperationError');
		expect(error!.message).toContain(`"${badCase.field}"`);
		expect(error!.message).toContain(`[item ${badItem}]`);
		if (badCase.says) expect(error!.message).toMatch(badCase.says);
		expect(error!.description).toContain(badCase.field);
		// Send and Schedule say nothing was sent; the other operations send nothing, so they don't.
		const sends = ['send', 'schedule'].includes(String(badCase.parameters.operation));
		if (sends) expect(error!.description).toMatch(/^Nothing was sent( for this item)?\. /);
		else expect(error!.description).not.toMatch(/sent/i);
		// Nothing reached the sandbox: no send, and no request at all.
		expect(count(sandbox, SEND)).toBe(0);
		expect(sandbox.requestLog()).toEqual([]);
	});
});

describe('not bad input: odd but valid values go out as given', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 20, resetBeforeEach: true });

	test('a title of 1,000 characters and a body of 4,000 are taken (the spec only recommends 50 and 150): sent whole, with warnings', async () => {
		const title = 'Ω'.repeat(1_000);
		const body = '🚀'.repeat(4_000);
		const { items: output, error } = await runOn(sandbox, { parameters: send({ title, body }) });
		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)[0]).toMatchObject({ title, body });
		expect(output[0].json.warnings).toEqual([
			expect.stringContaining('1000 characters'),
			expect.stringContaining('4000 characters'),
		]);
	});

	test('Unusual User IDs "Warn": an e-mail and a name go out as given, two recipients (not three), with a warning on the item and a hint above the output', async () => {
		const {
			items: output,
			error,
			run,
		} = await runOn(sandbox, {
			parameters: send({
				userIds: 'john.smith@acme.com, Jane Doe',
				options: { unusualUserIds: 'warn' },
			}),
		});
		expect(error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => body.target_user_ids)).toEqual([
			['john.smith@acme.com', 'Jane Doe'],
		]);
		const warning =
			'User IDs sent as given although "john.smith@acme.com" looks like an e-mail, "Jane Doe" looks like a name';
		expect(output[0].json.warnings).toEqual([expect.stringContaining(warning)]);
		const hints = run.data.resultData.runData['Companion Push'][0].hints ?? [];
		expect(hints).toEqual([
			expect.objectContaining({
				type: 'warning',
				message: expect.stringContaining(`Item 0: ${warning}`),
			}),
		]);
	});

	test('unicode title, body and user IDs (emoji, right-to-left, CJK) are sent unchanged', async () => {
		const title = 'Équipe 🚀 مرحبا 你好';
		const body = 'Zürich · São Paulo · Ελληνικά · 👩‍👩‍👧';
		const { error } = await runOn(sandbox, {
			parameters: send({ title, body, userIds: 'ユーザー1, user-ß' }),
		});
		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)).toEqual([
			{ title, body, target_user_ids: ['ユーザー1', 'user-ß'] },
		]);
	});

	test('numbers and booleans from expressions are written as text', async () => {
		const { error } = await runOn(sandbox, {
			items: [{ n: 42, yes: true, id: 1001 }],
			parameters: send({
				title: '={{ $json.n }}',
				body: '={{ $json.yes }}',
				userIds: '={{ $json.id }}',
			}),
		});
		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)).toEqual([{ title: '42', body: 'true', target_user_ids: ['1001'] }]);
	});

	test('a notification ID with unicode is asked for, encoded, and answered 404 by the API', async () => {
		const { error } = await runOn(sandbox, { parameters: byId('get', '通知-1') });
		expect(error?.message).toMatch(/404|not found/i);
		expect(logOf(sandbox).map((entry) => entry.path)).toContain(
			`/push-notification/${encodeURIComponent('通知-1')}`,
		);
	});
});

describe('3 items, only item 1 bad', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 20, resetBeforeEach: true });
	let users: string[];
	beforeAll(async () => {
		users = sandbox.orgs.primary.usersOfKind('onePhone', 3);
	});

	const items = () => [
		{ title: 'First', to: users[0], at: '2999-01-01T09:00:00Z' },
		{ title: 'Second', to: { not: 'an id' }, at: 'the day after tomorrow' },
		{ title: 'Third', to: users[2], at: '2999-01-03T09:00:00Z' },
	];
	const operations: Array<[string, IDataObject, string]> = [
		[
			'Send',
			sendParameters({ title: '={{ $json.title }}', userIds: '={{ $json.to }}' }),
			'User IDs',
		],
		[
			'Schedule',
			sendParameters({
				operation: 'schedule',
				title: '={{ $json.title }}',
				userIds: '={{ $json.title === "Second" ? "ok-id" : $json.to }}',
				scheduledAt: '={{ $json.at }}',
			}),
			'Scheduled At',
		],
	];

	test.each(operations)(
		'%s without continue on fail: all items are checked first, nothing is sent',
		async (_op, parameters, field) => {
			const { items: output, error } = await runOn(sandbox, { items: items(), parameters });

			expect(output).toEqual([]);
			expect(error?.name).toBe('NodeOperationError');
			expect(error?.message).toContain(`"${field}"`);
			expect(error?.message).toContain('[item 1]');
			expect(sandbox.requestLog()).toEqual([]);
		},
	);

	test.each(operations)(
		'%s with continue on fail: items 0 and 2 are sent, item 1 is an error item',
		async (_op, parameters, field) => {
			const { items: output, error } = await runOn(sandbox, {
				items: items(),
				parameters,
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(sentBodies(sandbox).map((body) => [body.title, body.target_user_ids])).toEqual([
				['First', [users[0]]],
				['Third', [users[2]]],
			]);
			expect(pairedOf(output)).toEqual([[0], [1], [2]]);
			const [first, second, third] = jsonOf(output);
			expect(first).toMatchObject({ title: 'First', targetUserIds: [users[0]] });
			expect(second.id).toBeUndefined();
			expect(second.error).toContain(`"${field}"`);
			expect(second.error).toContain('[item 1]');
			expect(third).toMatchObject({ title: 'Third', targetUserIds: [users[2]] });
			expect(logOf(sandbox, SEND).every((entry) => entry.status === 202)).toBe(true);
		},
	);

	test('combined with continue on fail: one send for items 0 and 2, paired with both; item 1 an error item', async () => {
		const { items: output } = await runOn(sandbox, {
			items: items(),
			continueOnFail: true,
			parameters: sendParameters({ userIds: '={{ $json.to }}', sendMode: 'combined' }),
		});
		expect(sentBodies(sandbox).map((body) => body.target_user_ids)).toEqual([[users[0], users[2]]]);
		expect(pairedOf(output).sort()).toEqual([[0, 2], [1]]);
		expect(jsonOf(output).find((json) => json.error)?.error).toContain('[item 1]');
	});
});
