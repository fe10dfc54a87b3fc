/**
 * Notification > Send through n8n's engine against the sandbox: audiences, per-item and combined
 * sends, batches, additional fields exactly as they reach the API, warnings, waiting for the
 * final status, one token renewal per run, and continue-on-fail for API errors.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	ACTIVE_USERS,
	count,
	DETAIL,
	expectNoTenantId,
	jsonOf,
	logOf,
	NODE_SANDBOX,
	onTestClock,
	pairedOf,
	REFRESH,
	runOn,
	SEND,
	SEND_LIST,
	sendParameters,
	sentBodies,
	storeFor,
	USER_LIST,
	useSandbox,
} from '../harness/index.cts';

describe('Send (60 users)', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let users: string[];
	beforeAll(async () => {
		users = sandbox.orgs.primary.usersOfKind('onePhone', 8);
	});
	afterEach(() => {
		expectNoTenantId(sandbox);
	});

	test('per item (default): one send per input item, each output item paired with its input', async () => {
		const items = [{ to: users[0] }, { to: users[1] }, { to: users[2] }];
		const { items: output, error } = await runOn(sandbox, {
			items,
			parameters: sendParameters({ userIds: '={{ $json.to }}' }),
		});

		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)).toEqual(
			items.map((item) => ({
				title: 'Shift change',
				body: 'Your shift starts at 9:00.',
				target_user_ids: [item.to],
			})),
		);
		expect(pairedOf(output)).toEqual([[0], [1], [2]]);
		const sendIds = logOf(sandbox, SEND).map((entry) => entry.notificationId);
		expect(
			jsonOf(output).map((json) => [json.id, json.status, json.recipients, json.targetUserIds]),
		).toEqual(items.map((item, index) => [sendIds[index], 'sending', 1, [item.to]]));
		expect(
			output.every((item) => item.json.batch === undefined && item.json.warnings === undefined),
		).toBe(true);
	});

	test('combined: the recipients of all items merged and de-duplicated into one send, paired with every item', async () => {
		const items = [
			{ ids: `${users[0]}, ${users[1]}` },
			{ ids: `${users[1]}\n${users[2]}` },
			{ ids: [users[2], users[3], users[0]] },
		];
		const { items: output, error } = await runOn(sandbox, {
			items,
			parameters: sendParameters({ userIds: '={{ $json.ids }}', sendMode: 'combined' }),
		});

		expect(error).toBeUndefined();
		expect(count(sandbox, SEND)).toBe(1);
		expect(sentBodies(sandbox)[0].target_user_ids).toEqual(users.slice(0, 4));
		expect(output).toHaveLength(1);
		expect(pairedOf(output)).toEqual([[0, 1, 2]]);
		expect(output[0].json).toMatchObject({
			id: logOf(sandbox, SEND)[0].notificationId,
			recipients: 4,
			targetUserIds: users.slice(0, 4),
		});
	});

	test('combined with different audiences on the items: an error naming Audience and the item, nothing sent', async () => {
		const items = [{ audience: 'allUsers' }, { audience: 'userIds', ids: users[0] }];
		const { error } = await runOn(sandbox, {
			items,
			parameters: sendParameters({
				audience: '={{ $json.audience }}',
				userIds: '={{ $json.ids }}',
				user: { mode: 'id', value: users[1] },
				sendMode: 'combined',
			}),
		});

		expect(error?.message).toContain('"Audience" must be the same on every item');
		expect(error?.message).toContain('[item 1]');
		expect(sandbox.requestLog()).toHaveLength(0);
	});

	test('User IDs as text: commas, semicolons, new lines and repeats give clean unique IDs; spaces and tabs around an ID are trimmed', async () => {
		const text = ` ${users[0]},${users[1]} ;\t${users[2]}\r\n${users[3]},,\n\n${users[0]}\n ${users[4]} `;
		const { items: output } = await runOn(sandbox, {
			parameters: sendParameters({ userIds: text }),
		});

		expect(sentBodies(sandbox).map((body) => body.target_user_ids)).toEqual([users.slice(0, 5)]);
		expect(output[0].json.recipients).toBe(5);
	});

	test('User IDs as text are not split on spaces: "a b" is one ID that looks like a name, refused, nothing sent', async () => {
		const { error } = await runOn(sandbox, {
			parameters: sendParameters({ userIds: `${users[0]} ${users[1]}` }),
		});

		expect(error?.message).toContain(`"${users[0]} ${users[1]}" looks like a name`);
		expect(sandbox.requestLog()).toHaveLength(0);
	});

	test('User IDs as an array from an expression, numbers written as text', async () => {
		const { items: output } = await runOn(sandbox, {
			items: [{ list: [users[0], users[1], users[0]] }, { list: [1001, 1002, '1003'] }],
			parameters: sendParameters({ userIds: '={{ $json.list }}' }),
		});

		expect(sentBodies(sandbox).map((body) => body.target_user_ids)).toEqual([
			[users[0], users[1]],
			['1001', '1002', '1003'],
		]);
		expect(output).toHaveLength(2);
	});

	test('User IDs as whole user records (mapped from Get Many Users): their ids are used', async () => {
		await runOn(sandbox, {
			items: [
				{
					records: [
						{ id: users[0], name: 'A' },
						{ id: users[1], name: 'B' },
					],
				},
			],
			parameters: sendParameters({ userIds: '={{ $json.records }}' }),
		});
		expect(sentBodies(sandbox)[0].target_user_ids).toEqual([users[0], users[1]]);
	});

	test.each([
		['by ID', { __rl: true, mode: 'id', value: 'USER' }],
		['from the list', { __rl: true, mode: 'list', value: 'USER', cachedResultName: 'Someone' }],
		['by ID from an expression', { __rl: true, mode: 'id', value: '={{ $json.userId }}' }],
	])('audience "A User From the List" (%s): exactly that user', async (_label, locator) => {
		const user = { ...locator, value: locator.value === 'USER' ? users[5] : locator.value };
		const { items: output, error } = await runOn(sandbox, {
			items: [{ userId: users[5] }],
			parameters: sendParameters({ audience: 'user', user }),
		});
		expect(error).toBeUndefined();
		expect(sentBodies(sandbox).map((body) => body.target_user_ids)).toEqual([[users[5]]]);
		expect(output[0].json.targetUserIds).toEqual([users[5]]);
	});

	test('audience "Users With an Active App": read once at run time for all items, then sent', async () => {
		const { items: output, error } = await runOn(sandbox, {
			items: [{}, {}],
			parameters: sendParameters({ audience: 'activeUsers' }),
		});
		expect(error).toBeUndefined();

		const inactive = new Set(['noPhone', 'loggedOut', 'noPermission']);
		const active = sandbox.orgs.primary.userIds.filter(
			(id) => !inactive.has(sandbox.orgs.primary.kindOf(id)!),
		);
		expect(count(sandbox, ACTIVE_USERS)).toBe(1);
		expect(count(sandbox, USER_LIST)).toBe(0);
		expect(
			sentBodies(sandbox).map((body) => [...(body.target_user_ids as string[])].sort()),
		).toEqual([[...active].sort(), [...active].sort()]);
		expect(pairedOf(output)).toEqual([[0], [1]]);
		// The active-user list is read before the first send, never between sends.
		expect(logOf(sandbox).map((entry) => entry.endpoint)).toEqual([
			REFRESH,
			ACTIVE_USERS,
			SEND,
			SEND,
		]);
	});

	test('Batch Size splits a list of User IDs: 7 users, batches of 3 -> sends of 3, 3 and 1', async () => {
		const seven = sandbox.orgs.primary.userIds.slice(0, 7);
		const { items: output } = await runOn(sandbox, {
			parameters: sendParameters({ userIds: seven.join(','), options: { batchSize: 3 } }),
		});

		expect(sentBodies(sandbox).map((body) => body.target_user_ids)).toEqual([
			seven.slice(0, 3),
			seven.slice(3, 6),
			seven.slice(6),
		]);
		expect(jsonOf(output).map((json) => [json.batch, json.batchCount, json.recipients])).toEqual([
			[1, 3, 3],
			[2, 3, 3],
			[3, 3, 1],
		]);
		expect(new Set(jsonOf(output).map((json) => json.id)).size).toBe(3);
		expect(pairedOf(output)).toEqual([[0], [0], [0]]);
	});

	const announcement = 'ann-2026-03';
	test.each<[string, IDataObject, IDataObject]>([
		[
			'image URL',
			{ imageUrl: ' https://cdn.example.com/pics/shift.PNG ' },
			{ image_url: 'https://cdn.example.com/pics/shift.PNG' },
		],
		[
			'image URL .jpeg',
			{ imageUrl: 'https://cdn.example.com/a.jpeg?v=2' },
			{ image_url: 'https://cdn.example.com/a.jpeg?v=2' },
		],
		['deeplink home', { deeplink: 'home' }, { deeplink: 'companionapp://home' }],
		['deeplink chat', { deeplink: 'chat' }, { deeplink: 'companionapp://chat' }],
		['deeplink coach', { deeplink: 'coach' }, { deeplink: 'companionapp://coach' }],
		['deeplink none', { deeplink: 'none' }, {}],
		[
			'deeplink announcement with its own id',
			{ deeplink: 'announcement', deeplinkAnnouncementId: announcement },
			{ deeplink: `companionapp://announcement/${announcement}` },
		],
		[
			'deeplink announcement taking the Announcement ID, which is also sent',
			{ deeplink: 'announcement', announcementId: announcement },
			{ deeplink: `companionapp://announcement/${announcement}`, announcement_id: announcement },
		],
		[
			'deeplink custom',
			{ deeplink: 'custom', customDeeplink: 'companionapp://coach' },
			{ deeplink: 'companionapp://coach' },
		],
		[
			'announcement ID alone',
			{ announcementId: ` ${announcement} ` },
			{ announcement_id: announcement },
		],
		[
			'everything together',
			{ imageUrl: 'https://cdn.example.com/a.jpg', deeplink: 'chat', announcementId: announcement },
			{
				image_url: 'https://cdn.example.com/a.jpg',
				deeplink: 'companionapp://chat',
				announcement_id: announcement,
			},
		],
	])('additional field: %s, exactly as sent', async (_label, additionalFields, expected) => {
		const { items: output, error } = await runOn(sandbox, {
			parameters: sendParameters({ userIds: users[0], additionalFields }),
		});
		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)).toEqual([
			{
				title: 'Shift change',
				body: 'Your shift starts at 9:00.',
				target_user_ids: [users[0]],
				...expected,
			},
		]);
		expect(output[0].json.warnings).toBeUndefined();
	});

	test('a custom deeplink outside the app destinations goes out with a warning (the spec: no error, only opens the app)', async () => {
		const { items: output } = await runOn(sandbox, {
			parameters: sendParameters({
				userIds: users[0],
				additionalFields: { deeplink: 'custom', customDeeplink: 'companionapp://settings' },
			}),
		});
		expect(sentBodies(sandbox)[0].deeplink).toBe('companionapp://settings');
		expect(output[0].json.warnings).toEqual([expect.stringContaining('companionapp://settings')]);
	});

	test('a tenant_id in the input item never reaches the API', async () => {
		const { error } = await runOn(sandbox, {
			items: [{ tenant_id: 'org-secondary', to: users[0], title: 'Hello' }],
			parameters: sendParameters({ userIds: '={{ $json.to }}', title: '={{ $json.title }}' }),
		});
		expect(error).toBeUndefined();
		expect(count(sandbox, SEND)).toBe(1);
		expect(Object.keys(sentBodies(sandbox)[0]).sort()).toEqual([
			'body',
			'target_user_ids',
			'title',
		]);
	});

	test('a title over 50 and a body over 150 characters are sent as they are, with warnings', async () => {
		const title = 'T'.repeat(51);
		const body = 'B'.repeat(151);
		const { items: output, error } = await runOn(sandbox, {
			parameters: sendParameters({ userIds: users[0], title, body }),
		});

		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)).toEqual([{ title, body, target_user_ids: [users[0]] }]);
		expect(output[0].json.warnings).toEqual([
			expect.stringMatching(/Title has 51 characters/),
			expect.stringMatching(/Body has 151 characters/),
		]);
	});

	test('exactly 50 and 150 characters: no warning', async () => {
		const { items: output } = await runOn(sandbox, {
			parameters: sendParameters({
				userIds: users[0],
				title: 'T'.repeat(50),
				body: 'B'.repeat(150),
			}),
		});
		expect(output[0].json.warnings).toBeUndefined();
	});

	test('lengths count characters, not UTF-16 units: 30 emoji and accented text are within the recommendation', async () => {
		const title = '🎉'.repeat(30);
		const body = 'Réunion à 9 h 30 : café offert ☕ — '.repeat(4).slice(0, 140);
		const { items: output } = await runOn(sandbox, {
			parameters: sendParameters({ userIds: users[0], title, body }),
		});
		expect(sentBodies(sandbox)[0]).toMatchObject({ title, body });
		expect(output[0].json.warnings).toBeUndefined();
	});

	test('Wait for Final Status: the item carries the final status and the counters', async () => {
		const { items: output, error } = await onTestClock(() =>
			runOn(sandbox, {
				parameters: sendParameters({
					userIds: users.slice(0, 2).join(','),
					options: { waitForFinalStatus: true, waitTimeout: 10 },
				}),
			}),
		);

		expect(error).toBeUndefined();
		expect(output[0].json).toMatchObject({
			status: 'sent',
			finalStatusReached: true,
			stats: { targeted_users: 2, devices: 2, sent: 2, failed: 0, no_device: 0 },
		});
		expect(output[0].json.waitNote).toBeUndefined();
		expect(output[0].json.recipientsCountedByApi).toBeUndefined();
		expect(count(sandbox, SEND)).toBe(1);
		// Followed in the list of sends, which carries status and counters: no detail read.
		expect(count(sandbox, SEND_LIST)).toBeGreaterThanOrEqual(1);
		expect(count(sandbox, DETAIL)).toBe(0);
	});

	test('Wait for Final Status: when the API counts fewer recipients than asked (IDs it does not know, another organization), the item says so, from the reads the wait makes anyway', async () => {
		const otherOrg = sandbox.orgs.secondary.userIds[0];
		const { items: output, error } = await onTestClock(() =>
			runOn(sandbox, {
				parameters: sendParameters({
					userIds: `${users[0]}, ${users[1]}, not-a-user-id, ${otherOrg}`,
					options: { waitForFinalStatus: true, waitTimeout: 10 },
				}),
			}),
		);

		expect(error).toBeUndefined();
		expect(output[0].json).toMatchObject({
			recipients: 4,
			finalStatusReached: true,
			stats: { targeted_users: 2 },
			recipientsCountedByApi: 2,
			recipientsNote: expect.stringContaining('The API counts 2 of the 4 recipients'),
		});
		expect(count(sandbox, SEND)).toBe(1);
		// The counter comes with the list reads the wait makes: no request was added for it.
		expect(count(sandbox, DETAIL)).toBe(0);
	});

	test('50 input items: 50 sends, one token renewal for the whole run', async () => {
		const store = storeFor(sandbox);
		const items = Array.from({ length: 50 }, (_, index) => ({
			to: sandbox.orgs.primary.userIds[index],
		}));
		const { items: output, error } = await runOn(sandbox, {
			credentials: store,
			items,
			parameters: sendParameters({ userIds: '={{ $json.to }}' }),
		});

		expect(error).toBeUndefined();
		expect(output).toHaveLength(50);
		expect(count(sandbox, REFRESH)).toBe(1);
		expect(count(sandbox, SEND)).toBe(50);
		expect(store.get().writes).toBe(1);
		expect([...sandbox.deliveriesByUser().values()].every((times) => times === 1)).toBe(true);
	});

	describe('API errors', () => {
		afterEach(async () => {
			await sandbox.reset();
		});

		test('continue on fail: a send the API refuses becomes an error item paired with its item; the others are sent', async () => {
			sandbox.configure({ maxTitleLength: 60 });
			const items = [
				{ title: 'First', to: users[0] },
				{ title: 'X'.repeat(70), to: users[1] },
				{ title: 'Third', to: users[2] },
			];
			const { items: output, error } = await runOn(sandbox, {
				items,
				continueOnFail: true,
				parameters: sendParameters({ title: '={{ $json.title }}', userIds: '={{ $json.to }}' }),
			});

			expect(error).toBeUndefined();
			expect(logOf(sandbox, SEND).map((entry) => entry.status)).toEqual([202, 400, 202]);
			expect(pairedOf(output)).toEqual([[0], [1], [2]]);
			expect(output[0].json).toMatchObject({ status: 'sending', targetUserIds: [users[0]] });
			expect(output[1].json.error).toMatch(/title/i);
			expect(output[1].json.id).toBeUndefined();
			expect(output[2].json).toMatchObject({ status: 'sending', targetUserIds: [users[2]] });
			expect(sandbox.deliveriesByUser().get(users[1])).toBeUndefined();
		});

		test('a credential of a non-admin user: 403 error items (continue on fail), each paired, with the fix in the text', async () => {
			const { items: output, error } = await runOn(sandbox, {
				credentials: storeFor(sandbox, { credential: sandbox.nonAdminCredential }),
				items: [{ to: users[0] }, { to: users[1] }],
				continueOnFail: true,
				parameters: sendParameters({ userIds: '={{ $json.to }}' }),
			});

			expect(error).toBeUndefined();
			expect(logOf(sandbox, SEND).map((entry) => entry.status)).toEqual([403, 403]);
			expect(pairedOf(output)).toEqual([[0], [1]]);
			for (const item of output) {
				expect(`${item.json.error} ${item.json.errorDescription}`).toMatch(/admin/i);
			}
		});

		test('without continue on fail the run stops with the API error, naming the item (one at a time: nothing after it starts)', async () => {
			const { items: output, error } = await runOn(sandbox, {
				credentials: storeFor(sandbox, { credential: sandbox.nonAdminCredential }),
				items: [{ to: users[0] }, { to: users[1] }],
				parameters: sendParameters({
					userIds: '={{ $json.to }}',
					options: { maxParallelRequests: 1 },
				}),
			});
			expect(output).toEqual([]);
			expect(error?.message).toMatch(/403|permission|forbidden/i);
			expect(error?.description).toContain('Not sent: item 1.');
			expect(count(sandbox, SEND)).toBe(1);
		});

		test("without continue on fail, in parallel: what was in flight finishes, and the error names every item's fate", async () => {
			const { items: output, error } = await runOn(sandbox, {
				credentials: storeFor(sandbox, { credential: sandbox.nonAdminCredential }),
				items: [{ to: users[0] }, { to: users[1] }],
				parameters: sendParameters({ userIds: '={{ $json.to }}' }),
			});
			expect(output).toEqual([]);
			expect(error?.message).toMatch(/403|permission|forbidden/i);
			// Both sends were in flight together: both were refused, and the second is named too.
			expect(count(sandbox, SEND)).toBe(2);
			expect(error?.description).toMatch(
				/Also failed: item 1 \(Sending the notification failed with HTTP 403/,
			);
		});

		test('the stop error of a large run stays a few KB: how many were sent, then the first of them', async () => {
			const items = Array.from({ length: 300 }, (_, index) => ({
				to: users[index % users.length],
			}));
			sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 299, times: 1 });
			const { error } = await runOn(sandbox, {
				items,
				parameters: sendParameters({
					userIds: '={{ $json.to }}',
					options: { maxParallelRequests: 1 },
				}),
			});
			expect(count(sandbox, SEND)).toBe(300);
			expect(error?.description).toContain(
				'Already sent for earlier items (not repeated): 299 sends: item 0: ',
			);
			expect(error?.description).toContain(' and 279 more.');
			expect(error!.description!.length).toBeLessThan(4_000);
		});
	});
});

describe('Send to large audiences (2500 users)', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 2500, resetBeforeEach: true });

	test('All Users: the user list read page by page (3 pages + 1 empty), then sent in batches of 1000, 1000 and 500', async () => {
		const { items: output, error } = await runOn(sandbox, {
			parameters: sendParameters({ audience: 'allUsers' }),
		});
		expect(error).toBeUndefined();

		expect(logOf(sandbox, USER_LIST).map((entry) => [entry.query.skip, entry.query.limit])).toEqual(
			[
				['0', '1000'],
				['1000', '1000'],
				['2000', '1000'],
				['2500', '1000'],
			],
		);
		const batches = sentBodies(sandbox).map((body) => body.target_user_ids as string[]);
		expect(batches.map((batch) => batch.length)).toEqual([1000, 1000, 500]);
		expect(batches.flat().sort()).toEqual([...sandbox.orgs.primary.userIds].sort());
		expect(new Set(batches.flat()).size).toBe(2500);

		expect(jsonOf(output).map((json) => [json.batch, json.batchCount, json.recipients])).toEqual([
			[1, 3, 1000],
			[2, 3, 1000],
			[3, 3, 500],
		]);
		expect(jsonOf(output).map((json) => json.targetUserIds)).toEqual(batches);
		expect(jsonOf(output).map((json) => json.id)).toEqual(
			logOf(sandbox, SEND).map((entry) => entry.notificationId),
		);
		expect(pairedOf(output)).toEqual([[0], [0], [0]]);
		expect([...sandbox.deliveriesByUser().values()].every((times) => times === 1)).toBe(true);
		expect(count(sandbox, REFRESH)).toBe(1);
		expectNoTenantId(sandbox);
	});

	test('All Users with Batch Size 600: 5 sends (4 x 600 + 100), nobody in two batches', async () => {
		const { items: output } = await runOn(sandbox, {
			parameters: sendParameters({ audience: 'allUsers', options: { batchSize: 600 } }),
		});
		const batches = sentBodies(sandbox).map((body) => body.target_user_ids as string[]);
		expect(batches.map((batch) => batch.length)).toEqual([600, 600, 600, 600, 100]);
		expect(new Set(batches.flat()).size).toBe(2500);
		expect(jsonOf(output).map((json) => `${json.batch}/${json.batchCount}`)).toEqual([
			'1/5',
			'2/5',
			'3/5',
			'4/5',
			'5/5',
		]);
	});

	test('combined, 3 items of 1000 overlapping IDs: 1500 unique users in 2 sends, each paired with all items', async () => {
		const all = sandbox.orgs.primary.userIds;
		const items = [
			{ ids: all.slice(0, 1000) },
			{ ids: all.slice(500, 1500) },
			{ ids: all.slice(0, 1500).join('\n') },
		];
		const { items: output } = await runOn(sandbox, {
			items,
			parameters: sendParameters({ userIds: '={{ $json.ids }}', sendMode: 'combined' }),
		});
		const batches = sentBodies(sandbox).map((body) => body.target_user_ids as string[]);
		expect(batches.map((batch) => batch.length)).toEqual([1000, 500]);
		expect(batches.flat()).toEqual(all.slice(0, 1500));
		expect(pairedOf(output)).toEqual([
			[0, 1, 2],
			[0, 1, 2],
		]);
	});
});

describe('Send: waiting runs out (deliveries take a minute)', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, deliveryMs: 60_000 });

	test('Wait Timeout reached: the send is reported with finalStatusReached false and a note, not as an error', async () => {
		const user = sandbox.orgs.primary.usersOfKind('onePhone', 1);
		const { items: output, error } = await onTestClock(() =>
			runOn(sandbox, {
				parameters: sendParameters({
					userIds: user[0],
					options: { waitForFinalStatus: true, waitTimeout: 4.5 },
				}),
			}),
		);

		expect(error).toBeUndefined();
		expect(output[0].json).toMatchObject({
			status: 'sending',
			finalStatusReached: false,
			waitNote: expect.stringContaining('sending'),
		});
		expect(output[0].json.waitedSeconds).toBeGreaterThanOrEqual(4.5);
		expect(output[0].json.id).toBe(logOf(sandbox, SEND)[0].notificationId);
		expect(count(sandbox, SEND)).toBe(1);
		// Reads of the list at 0, 1 and 3 s on the test's clock (the wait doubles: 1 s, then 2 s), then
		// one last at the timeout, 4.5 s (1.5 s past the third read, less than the 4 s the doubling
		// would wait). The clock moves by the waits; the code's own run time only adds to them.
		const readTimes = logOf(sandbox, SEND_LIST).map((entry) => entry.time);
		expect(readTimes).toHaveLength(4);
		const intervals = readTimes.slice(1).map((time, index) => time - readTimes[index]);
		expect(intervals[0]).toBeGreaterThanOrEqual(1_000);
		expect(intervals[1]).toBeGreaterThanOrEqual(2_000);
		expect(intervals[2]).toBeLessThan(intervals[1]);
		expect(readTimes[3] - readTimes[0]).toBeGreaterThanOrEqual(4_400);
	});
});
