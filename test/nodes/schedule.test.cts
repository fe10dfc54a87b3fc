/**
 * Notification > Schedule: what reaches the API always carries an explicit offset, a time without
 * a zone is read in the workflow's time zone, and a past time never goes out silently. The node
 * compares with the real Date.now(), so the sandbox runs on the real clock.
 */
import { DateTime } from 'luxon';
import type { IDataObject } from 'n8n-workflow';

import {
	count,
	expectNoTenantId,
	logOf,
	NODE_SANDBOX,
	REFRESH,
	runOn,
	SEND,
	sendParameters,
	sentBodies,
	useSandbox,
} from '../harness/index.cts';

const OFFSET = /(Z|[+-]\d\d:\d\d)$/;

function scheduleParameters(scheduledAt: string, extra: IDataObject = {}) {
	return sendParameters({ operation: 'schedule', scheduledAt, ...extra });
}

describe('Schedule', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	let user: string;
	const nextYear = DateTime.now().year + 1;
	beforeAll(async () => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	afterEach(() => {
		expectNoTenantId(sandbox);
	});

	test.each([
		[
			'America/New_York',
			`${nextYear}-01-15T09:30:00`,
			`${nextYear}-01-15T09:30:00-05:00`,
			`${nextYear}-01-15T14:30:00.000Z`,
		],
		[
			'America/New_York',
			`${nextYear}-07-15T09:30:00`,
			`${nextYear}-07-15T09:30:00-04:00`,
			`${nextYear}-07-15T13:30:00.000Z`,
		],
		[
			'Asia/Kolkata',
			`${nextYear}-03-01 18:00`,
			`${nextYear}-03-01T18:00:00+05:30`,
			`${nextYear}-03-01T12:30:00.000Z`,
		],
		[
			'UTC',
			`${nextYear}-03-01T18:00:00`,
			`${nextYear}-03-01T18:00:00Z`,
			`${nextYear}-03-01T18:00:00.000Z`,
		],
	])(
		'a time without zone is read in the workflow time zone (%s: %s)',
		async (timezone, scheduledAt, sentAs, utc) => {
			const { items: output, error } = await runOn(sandbox, {
				timezone,
				parameters: scheduleParameters(scheduledAt, { userIds: user }),
			});

			expect(error).toBeUndefined();
			expect(sentBodies(sandbox)).toEqual([
				{
					title: 'Shift change',
					body: 'Your shift starts at 9:00.',
					target_user_ids: [user],
					scheduled_at: sentAs,
				},
			]);
			expect(output[0].json).toMatchObject({
				status: 'scheduled',
				scheduledAt: sentAs,
				id: logOf(sandbox, SEND)[0].notificationId,
			});
			// The sandbox read the same instant.
			expect(sandbox.notifications()[0].scheduled_at).toBe(utc);
		},
	);

	test.each([
		[`${nextYear}-01-15T09:30:00+02:00`, `${nextYear}-01-15T09:30:00+02:00`],
		[`${nextYear}-01-15T09:30:00Z`, `${nextYear}-01-15T09:30:00Z`],
		[`${nextYear}-01-15T09:30:00.250-08:00`, `${nextYear}-01-15T09:30:00.250-08:00`],
	])(
		'an explicit offset is kept as given, whatever the workflow time zone (%s)',
		async (scheduledAt, sentAs) => {
			await runOn(sandbox, {
				timezone: 'America/New_York',
				parameters: scheduleParameters(scheduledAt, { userIds: user }),
			});
			expect(sentBodies(sandbox).map((body) => body.scheduled_at)).toEqual([sentAs]);
		},
	);

	test('a Luxon DateTime from an expression ($now.plus): its instant, with the workflow offset', async () => {
		const before = Date.now();
		const { items: output, error } = await runOn(sandbox, {
			timezone: 'Europe/Paris',
			parameters: scheduleParameters('={{ $now.plus({ hours: 2 }) }}', { userIds: user }),
		});
		expect(error).toBeUndefined();

		const sent = sentBodies(sandbox)[0].scheduled_at as string;
		expect(sent).toMatch(OFFSET);
		expect(sent.slice(-6)).toBe(
			DateTime.now().setZone('Europe/Paris').plus({ hours: 2 }).toFormat('ZZ'),
		);
		const instant = Date.parse(sent);
		expect(instant).toBeGreaterThanOrEqual(before + 2 * 3600_000 - 1_000);
		expect(instant).toBeLessThanOrEqual(Date.now() + 2 * 3600_000);
		expect(output[0].json.status).toBe('scheduled');
	});

	test('a JS Date from an expression is sent with the workflow offset', async () => {
		const { error } = await runOn(sandbox, {
			timezone: 'Asia/Tokyo',
			items: [{ at: DateTime.now().plus({ days: 1 }).toMillis() }],
			parameters: scheduleParameters('={{ new Date($json.at) }}', { userIds: user }),
		});
		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)[0].scheduled_at).toMatch(/\+09:00$/);
	});

	test('a time in the past fails with an error naming "Scheduled At" and the item; nothing is sent', async () => {
		const { items: output, error } = await runOn(sandbox, {
			parameters: scheduleParameters('2020-01-01T08:00:00', { userIds: user }),
		});

		expect(output).toEqual([]);
		expect(error?.message).toMatch(/"Scheduled At" is in the past .*\[item 0\]/);
		expect(error?.message).toContain('Send If Time Is Past');
		expect(sandbox.requestLog()).toEqual([]);
	});

	test('"Send If Time Is Past": sent at once, without scheduled_at, and the item says so', async () => {
		const { items: output, error } = await runOn(sandbox, {
			parameters: scheduleParameters('2020-01-01T08:00:00', {
				userIds: user,
				options: { sendIfPast: true },
			}),
		});

		expect(error).toBeUndefined();
		expect(sentBodies(sandbox)).toEqual([
			{ title: 'Shift change', body: 'Your shift starts at 9:00.', target_user_ids: [user] },
		]);
		expect(output[0].json).toMatchObject({ status: 'sending', sentImmediately: true });
		expect(output[0].json.scheduledAt).toBeUndefined();
	});

	test('"Send If Time Is Past" leaves a future time scheduled', async () => {
		await runOn(sandbox, {
			timezone: 'UTC',
			parameters: scheduleParameters(`${nextYear}-05-05T05:05:05`, {
				userIds: user,
				options: { sendIfPast: true },
			}),
		});
		expect(sentBodies(sandbox)[0].scheduled_at).toBe(`${nextYear}-05-05T05:05:05Z`);
	});

	test('per item, each item its own time; the past one stops the run before anything is sent', async () => {
		const items = [{ at: `${nextYear}-02-01T10:00:00` }, { at: '2021-02-01T10:00:00' }];
		const { error } = await runOn(sandbox, {
			items,
			parameters: scheduleParameters('={{ $json.at }}', { userIds: user }),
		});
		expect(error?.message).toMatch(/"Scheduled At" is in the past .*\[item 1\]/);
		expect(count(sandbox, SEND)).toBe(0);
		expect(count(sandbox, REFRESH)).toBe(0);
	});

	test('combined with batches: every batch carries the same scheduled_at', async () => {
		const ids = sandbox.orgs.primary.userIds.slice(0, 5);
		const { items: output } = await runOn(sandbox, {
			timezone: 'UTC',
			items: [{ ids: ids.slice(0, 3) }, { ids: ids.slice(2) }],
			parameters: scheduleParameters(`${nextYear}-09-09T09:00:00`, {
				userIds: '={{ $json.ids }}',
				sendMode: 'combined',
				options: { batchSize: 2 },
			}),
		});
		expect(sentBodies(sandbox).map((body) => [body.target_user_ids, body.scheduled_at])).toEqual([
			[ids.slice(0, 2), `${nextYear}-09-09T09:00:00Z`],
			[ids.slice(2, 4), `${nextYear}-09-09T09:00:00Z`],
			[ids.slice(4), `${nextYear}-09-09T09:00:00Z`],
		]);
		expect(output.map((item) => item.json.status)).toEqual(['scheduled', 'scheduled', 'scheduled']);
	});
});
