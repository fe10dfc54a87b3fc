/**
 * Not Reached through n8n's engine on the sandbox's manual clock: a person no phone reached, whether
 * they have no active app (`no_device`) or every phone of theirs failed (an uninstalled app is a
 * `failed` delivery, not `no_device`). One item per person and send: across polls and restarts, and
 * not once more as Not Opened in Time when the service's own retry reaches them later.
 */
import type { IDataObject } from 'n8n-workflow';

import { call, MINUTE, useTriggerFixtures } from '../harness/index.cts';
import type { TriggerFixture } from '../harness/index.cts';

const DEADLINE_MINUTES = 10;
const ESCALATION = { events: ['notReached', 'notOpenedInTime'], openDeadline: DEADLINE_MINUTES };
/** The sandbox's delivery rounds: the first attempts settle this long after dispatch, retries follow. */
const ROUND_MS = 1_500;

const brief = (items: IDataObject[]) => items.map((item) => [item.event, item.userId]);

describe('Companion Push Trigger: Not Reached', () => {
	const triggers = useTriggerFixtures();
	let fixture: TriggerFixture;

	function restart(): void {
		const stored = fixture.staticData();
		fixture.activate(ESCALATION, { [`node:${fixture.target.node.name}`]: stored });
	}

	test('the app uninstalled, no phone, a failure that persists, one retried later: each once; a person with one healthy phone is reached', async () => {
		fixture = await triggers.start(ESCALATION, { deliveryMs: ROUND_MS });
		await fixture.poll();
		const uninstalled = fixture.user('uninstalled');
		const noPhone = fixture.user('noPhone');
		const unreachable = fixture.user('unreachable');
		const flaky = fixture.user('flaky');
		const partlyUninstalled = fixture.user('partlyUninstalled');
		const onePhone = fixture.user('onePhone');
		const id = await fixture.send(
			[uninstalled, noPhone, unreachable, flaky, partlyUninstalled, onePhone],
			{ title: 'Safety alert' },
		);
		const sentAt = fixture.sandbox.clock.now();

		// After the first round of attempts (the send shows partially_failed): every person whose
		// phones all failed so far, and the one without an active app.
		await fixture.sandbox.clock.advance(ROUND_MS + 100);
		const firstRound = await fixture.poll();
		expect(firstRound.error).toBeUndefined();
		expect(brief(firstRound.items)).toEqual([
			['notReached', uninstalled],
			['notReached', noPhone],
			['notReached', unreachable],
			['notReached', flaky],
		]);
		expect(firstRound.items[0]).toEqual({
			event: 'notReached',
			eventKey: `${id}:${uninstalled}:notReached`,
			notificationId: id,
			title: 'Safety alert',
			body: 'Your shift starts at 9:00 tomorrow.',
			userId: uninstalled,
			sentAt: new Date(sentAt).toISOString(),
			reason: 'deliveryFailed',
			phonesFailed: 1,
		});
		expect(firstRound.items[1]).toMatchObject({ reason: 'noDevice', phonesFailed: 0 });

		// The retries run (the flaky phone is reached at round 2), polls and a restart: nothing again.
		const beforeDeadline = await fixture.pollEvery(MINUTE, 3);
		restart();
		beforeDeadline.push(...(await fixture.pollEvery(MINUTE, DEADLINE_MINUTES - 5)));
		expect(beforeDeadline).toEqual([]);
		// The API now shows the flaky person's phone reached.
		const detail = await call(fixture.sandbox, 'GET', `/push-notification/${id}`, {
			token: await fixture.apiToken(),
		});
		const deliveries = (detail.body as { data: { deliveries: IDataObject[] } }).data.deliveries;
		expect(deliveries.filter((entry) => entry.user_id === flaky)).toEqual([
			expect.objectContaining({ status: 'sent' }),
		]);

		// Past the deadline, nobody opened: Not Opened in Time for the people reached, but not for
		// the flaky one the retry reached, already reported as not reached: one escalation each.
		const afterDeadline = await fixture.pollEvery(MINUTE, 3);
		expect(brief(afterDeadline)).toEqual([
			['notOpenedInTime', partlyUninstalled],
			['notOpenedInTime', onePhone],
		]);
		restart();
		expect(await fixture.pollEvery(10 * MINUTE, 6)).toEqual([]);
	});

	test('chosen alone, with No Device: the person without an app is in both, the uninstalled app only in Not Reached', async () => {
		fixture = await triggers.start({ events: ['noDevice', 'notReached'] });
		await fixture.poll();
		const uninstalled = fixture.user('uninstalled');
		const loggedOut = fixture.user('loggedOut');
		await fixture.send([uninstalled, loggedOut, fixture.user('twoPhones')]);
		const items = await fixture.pollEvery(MINUTE, 3);
		expect(brief(items)).toEqual([
			['notReached', uninstalled],
			['noDevice', loggedOut],
			['notReached', loggedOut],
		]);
	});
});
