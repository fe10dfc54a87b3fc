/**
 * The Companion Push node in a real n8n (2.41.1 in actions.e2e.ts, 1.123.81 in n8n-1x.e2e.ts): the
 * packed package installed as a community package, workflows run in a running n8n through its REST
 * API (devkit/n8n/server.cts), checked in the runs n8n saved and in the sandbox's request log. Several checks
 * share one workflow.
 */
import {
	brief,
	code,
	manualWorkflow,
	N8nHome,
	N8nServer,
	push,
	REFRESH,
	requestsDuring,
	type RunResult,
	type RuntimeLine,
} from '../support/index.cts';
import { startSandbox, type Sandbox } from '../../../sandbox/index.cts';

const SEND = 'POST /push-notification/send';

/** The cases, in a describe block of their own, against the runtime of `line`. */
export const describeActions = (line: RuntimeLine) =>
	describe(`Companion Push node in a real n8n ${line} (runs through its REST API)`, () => {
		let sandbox: Sandbox;
		let home: N8nHome;
		let server: N8nServer;
		let users: Record<string, string>;
		let notifications: RunResult;
		let audiences: RunResult;
		let stopOnFail: RunResult;

		beforeAll(async () => {
			sandbox = await startSandbox({ port: 0, seedUsers: 2500, deliveryMs: 1500 });
			const { primary } = sandbox.orgs;
			users = {
				onePhone: primary.usersOfKind('onePhone', 1)[0],
				twoPhones: primary.usersOfKind('twoPhones', 1)[0],
				noPhone: primary.usersOfKind('noPhone', 1)[0],
				uninstalled: primary.usersOfKind('uninstalled', 1)[0],
			};
			home = await N8nHome.create({ line });
			await home.useSandbox(sandbox);

			const fourUsers = [users.onePhone, users.twoPhones, users.noPhone, users.uninstalled].join(
				', ',
			);
			server = await N8nServer.start(home, {
				workflows: [
					manualWorkflow('e2eNotifications', 'e2e: send, get, schedule, cancel', [
						[
							push('Send', {
								resource: 'notification',
								operation: 'send',
								title: 'Your order has shipped',
								body: 'Order 1042 is on its way',
								audience: 'userIds',
								userIds: fourUsers,
								additionalFields: { deeplink: 'chat', imageUrl: 'https://example.com/parcel.png' },
								options: {},
							}),
							push('Get and Wait', {
								resource: 'notification',
								operation: 'get',
								notificationId: '={{ $json.id }}',
								options: { waitForFinalStatus: true, waitTimeout: 60, deliveries: 'include' },
							}),
							push('Cancel a Sent One', {
								resource: 'notification',
								operation: 'cancel',
								notificationId: '={{ $json.id }}',
								options: { ignoreIfNotScheduled: true },
							}),
						],
						[
							push('Schedule', {
								resource: 'notification',
								operation: 'schedule',
								title: 'Team meeting',
								body: 'Starts in two hours',
								audience: 'userIds',
								userIds: users.twoPhones,
								scheduledAt: '={{ $now.plus({ hours: 2 }).toISO() }}',
								additionalFields: {},
								options: {},
							}),
							push('Cancel', {
								resource: 'notification',
								operation: 'cancel',
								notificationId: '={{ $json.id }}',
								options: {},
							}),
							push('Get Canceled', {
								resource: 'notification',
								operation: 'get',
								notificationId: "={{ $('Schedule').item.json.id }}",
								options: { deliveries: 'omit' },
							}),
						],
						[
							push('Get Many', {
								resource: 'notification',
								operation: 'getMany',
								returnAll: false,
								limit: 10,
							}),
						],
					]),
					manualWorkflow(
						'e2eAudiences',
						'e2e: users, active users, a large audience, continue on fail',
						[
							[push('All Users', { resource: 'user', operation: 'getMany', returnAll: true })],
							[
								push('Active Users', {
									resource: 'user',
									operation: 'getActive',
									options: { idsOnly: true },
								}),
							],
							[
								push('Send to Everyone', {
									resource: 'notification',
									operation: 'send',
									title: 'Office closed on Friday',
									body: 'The office is closed this Friday.',
									audience: 'allUsers',
									additionalFields: {},
									options: { batchSize: 1000 },
								}),
							],
							[
								code(
									'Three Orders',
									`return [
									{ json: { userId: '${users.onePhone}', order: 'A-1', image: 'https://example.com/a.png' } },
									{ json: { userId: '${users.twoPhones}', order: 'A-2', image: 'http://example.com/not-https.png' } },
									{ json: { userId: '${users.noPhone}', order: 'A-3', image: 'https://example.com/c.png' } },
								];`,
								),
								push(
									'Send Each, Continue On Fail',
									{
										resource: 'notification',
										operation: 'send',
										title: '=Order {{ $json.order }}',
										body: 'Your order is ready',
										audience: 'userIds',
										userIds: '={{ $json.userId }}',
										additionalFields: { imageUrl: '={{ $json.image }}' },
										options: {},
									},
									{ onError: 'continueRegularOutput' },
								),
							],
						],
					),
					manualWorkflow('e2eStopOnFail', 'e2e: one bad item stops the run before any send', [
						[
							code(
								'Three Orders',
								`return [
									{ json: { userId: '${users.onePhone}', title: 'Order B-1' } },
									{ json: { userId: '${users.twoPhones}', title: '   ' } },
									{ json: { userId: '${users.noPhone}', title: 'Order B-3' } },
								];`,
							),
							push('Send Each', {
								resource: 'notification',
								operation: 'send',
								title: '={{ $json.title }}',
								body: 'Your order is ready',
								audience: 'userIds',
								userIds: '={{ $json.userId }}',
								additionalFields: {},
								options: {},
							}),
						],
					]),
				],
			});
			notifications = await server.execute('e2eNotifications');
			audiences = await server.execute('e2eAudiences');
			stopOnFail = await server.execute('e2eStopOnFail');
		});

		afterAll(async () => {
			await server?.stop();
			await sandbox?.stop();
			home?.remove();
		});

		describe('send, get with waiting, schedule and cancel', () => {
			test('the run succeeds', () => {
				expect(notifications.error).toBeUndefined();
				expect(notifications.status).toBe('success');
			});

			test('Send: one send, accepted (sending), with the deduplicated recipients and optional fields', () => {
				const [sent] = notifications.items('Send');
				expect(sent).toMatchObject({ status: 'sending', recipients: 4 });
				expect(sent.targetUserIds).toEqual([
					users.onePhone,
					users.twoPhones,
					users.noPhone,
					users.uninstalled,
				]);
				const sends = requestsDuring(sandbox, notifications, 'Send').filter(
					(request) => request.endpoint === SEND,
				);
				expect(sends.map(brief)).toEqual([`${SEND} 202`]);
				expect(sends[0].body).toEqual({
					title: 'Your order has shipped',
					body: 'Order 1042 is on its way',
					target_user_ids: [users.onePhone, users.twoPhones, users.noPhone, users.uninstalled],
					deeplink: 'companionapp://chat',
					image_url: 'https://example.com/parcel.png',
				});
				expect(sends[0].notificationId).toBe(sent.id);
			});

			test('Get with Wait for Final Status: reads until the send settles, with counters and one delivery per phone', () => {
				const [got] = notifications.items('Get and Wait');
				expect(got).toMatchObject({ status: 'partially_failed', finalStatusReached: true });
				expect(got.stats).toEqual({
					targeted_users: 4,
					devices: 4,
					sent: 3,
					failed: 1,
					opened: 0,
					no_device: 1,
				});
				expect(got.deliveries).toHaveLength(5);
				// Followed in the list of sends while it was still sending, then its detail read once, for the deliveries.
				const reads = requestsDuring(sandbox, notifications, 'Get and Wait').map(brief);
				expect(new Set(reads)).toEqual(
					new Set(['GET /push-notification/list 200', `GET /push-notification/${got.id} 200`]),
				);
				expect(
					reads.filter((read) => read === 'GET /push-notification/list 200').length,
				).toBeGreaterThanOrEqual(2);
				expect(
					reads.filter((read) => read === `GET /push-notification/${got.id} 200`),
				).toHaveLength(1);
				expect(got.waitedSeconds).toBeGreaterThan(0);
			});

			test('Cancel of a send that already left, with Ignore If Not Scheduled: an item, not an error (409 seen)', () => {
				const [canceled] = notifications.items('Cancel a Sent One');
				expect(canceled).toMatchObject({ canceled: false, status: 'partially_failed' });
				// The refused cancel, then one read for the send's current status (given in the item).
				expect(requestsDuring(sandbox, notifications, 'Cancel a Sent One').map(brief)).toEqual([
					`POST /push-notification/${canceled.id}/cancel 409`,
					`GET /push-notification/${canceled.id} 200`,
				]);
			});

			test('Schedule: scheduled_at carries an explicit offset; Cancel cancels it; Get shows it canceled', () => {
				const [scheduled] = notifications.items('Schedule');
				expect(scheduled.status).toBe('scheduled');
				const [request] = requestsDuring(sandbox, notifications, 'Schedule').filter(
					(entry) => entry.endpoint === SEND,
				);
				const scheduledAt = (request.body as { scheduled_at: string }).scheduled_at;
				expect(scheduledAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
				const inMs = Date.parse(scheduledAt) - request.time;
				expect(inMs).toBeGreaterThan(2 * 3600_000 - 60_000);
				expect(inMs).toBeLessThan(2 * 3600_000 + 60_000);

				expect(notifications.items('Cancel')).toEqual([
					expect.objectContaining({ id: scheduled.id, canceled: true, status: 'canceled' }),
				]);
				// Found by the scheduled send's id (no other node cancels it), not by the Cancel node's time
				// window: on n8n 1.x, once in six runs, its request fell outside the window n8n recorded.
				const cancels = sandbox
					.requestLog()
					.filter((entry) => entry.path === `/push-notification/${scheduled.id}/cancel`);
				expect(cancels.map(brief)).toEqual([`POST /push-notification/${scheduled.id}/cancel 200`]);
				const [got] = notifications.items('Get Canceled');
				expect(got).toMatchObject({ id: scheduled.id, status: 'canceled' });
				expect(got.deliveries).toBeUndefined();
				expect(sandbox.notifications().find((record) => record.id === scheduled.id)?.status).toBe(
					'canceled',
				);
			});

			test('Get Many: the sends, newest first', () => {
				const listed = notifications.items('Get Many').map((item) => item.id);
				const [sent] = notifications.items('Send');
				const [scheduled] = notifications.items('Schedule');
				expect(listed.slice(0, 2)).toEqual([scheduled.id, sent.id]);
			});

			test('one token for the whole run: exactly one refresh, first', () => {
				const log = sandbox
					.requestLog()
					.filter((request) => request.time <= notifications.window('Get Many')[1] + 2);
				expect(log.filter((request) => request.endpoint === REFRESH)).toHaveLength(1);
				expect(log[0].endpoint).toBe(REFRESH);
				expect(log.filter((request) => request.status === 401)).toHaveLength(0);
			});
		});

		describe('users, active users, a large audience, continue on fail', () => {
			test('the run succeeds', () => {
				expect(audiences.error).toBeUndefined();
				expect(audiences.status).toBe('success');
			});

			test('User > Get Many, Return All: 2,500 users read in 3 pages of 1000 and one empty page', () => {
				const items = audiences.items('All Users');
				expect(items).toHaveLength(2500);
				expect(new Set(items.map((item) => item.id)).size).toBe(2500);
				expect(Object.keys(items[0]).sort()).toEqual([
					'email',
					'id',
					'lastname',
					'name',
					'username',
				]);
				const pages = requestsDuring(sandbox, audiences, 'All Users').filter(
					(request) => request.path === '/user/list',
				);
				expect(pages.map((page) => [page.query.skip, page.query.limit, page.status])).toEqual([
					['0', '1000', 200],
					['1000', '1000', 200],
					['2000', '1000', 200],
					['2500', '1000', 200],
				]);
			});

			test('User > Get With Active App (IDs Only): exactly the users with an active phone', () => {
				const { primary } = sandbox.orgs;
				const expected = primary.userIds.filter((id) =>
					primary.devicesOf(id).some((device) => device.session === 'active'),
				);
				const [item] = audiences.items('Active Users');
				expect(item.count).toBe(expected.length);
				expect([...item.userIds].sort()).toEqual([...expected].sort());
				expect(requestsDuring(sandbox, audiences, 'Active Users').map(brief)).toEqual([
					'GET /user-device/users 200',
				]);
			});

			test('All Users with Batch Size 1000: 3 sends of 1000, 1000 and 500; everyone exactly once', () => {
				const items = audiences.items('Send to Everyone');
				expect(items.map((item) => [item.batch, item.batchCount, item.recipients])).toEqual([
					[1, 3, 1000],
					[2, 3, 1000],
					[3, 3, 500],
				]);
				const sends = requestsDuring(sandbox, audiences, 'Send to Everyone').filter(
					(request) => request.endpoint === SEND,
				);
				expect(sends.map((send) => send.status)).toEqual([202, 202, 202]);
				const targets = sends.flatMap(
					(send) => (send.body as { target_user_ids: string[] }).target_user_ids,
				);
				expect(targets).toHaveLength(2500);
				expect(new Set(targets)).toEqual(new Set(sandbox.orgs.primary.userIds));
				// The batches go out in parallel, in whichever order they arrive; each output item (in batch
				// order) carries the id of the send made with its recipients.
				const idOfRecipients = new Map(
					sends.map((send) => [
						JSON.stringify((send.body as { target_user_ids: string[] }).target_user_ids),
						send.notificationId,
					]),
				);
				expect(items.map((item) => idOfRecipients.get(JSON.stringify(item.targetUserIds)))).toEqual(
					items.map((item) => item.id),
				);
				expect(new Set(items.map((item) => item.id)).size).toBe(3);
			});

			test('Continue On Fail: the bad item becomes an error item naming the field, the two others are sent', () => {
				const items = audiences.items('Send Each, Continue On Fail');
				expect(items).toHaveLength(3);
				expect(items[0]).toMatchObject({ status: 'sending', targetUserIds: [users.onePhone] });
				expect(items[1].error).toMatch(
					/^"Image URL" must be a public https:\/\/ address.*\[item 1\]$/,
				);
				expect(items[2]).toMatchObject({ status: 'sending', targetUserIds: [users.noPhone] });
				const sends = requestsDuring(sandbox, audiences, 'Send Each, Continue On Fail').filter(
					(request) => request.endpoint === SEND,
				);
				// Sent in parallel: in whichever order they arrived.
				expect(sends.map((send) => (send.body as { title: string }).title).sort()).toEqual([
					'Order A-1',
					'Order A-3',
				]);
			});
		});

		describe('without Continue On Fail', () => {
			test('one bad item fails the run before the first send, naming the field and the item', () => {
				expect(stopOnFail.status).toBe('error');
				const nodeError = stopOnFail.nodeRuns('Send Each')[0].error;
				expect(nodeError?.message).toMatch(/^"Title" .*\[item 1\]$/);
				const requests = requestsDuring(sandbox, stopOnFail, 'Send Each');
				expect(requests.filter((request) => request.endpoint === SEND)).toEqual([]);
			});
		});
	});
