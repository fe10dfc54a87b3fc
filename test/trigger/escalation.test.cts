/**
 * Escalation events through n8n's engine on the sandbox's manual clock: No Device (a person with
 * no active app on any phone) and Not Opened in Time (a person reached who opened on none of their
 * phones by a deadline after the send went out). One event per person, each once: across polls,
 * across a failed poll, and across a restart of the trigger (a new activation over the stored state).
 */
import { NodeApiError } from 'n8n-workflow';
import type { IDataObject } from 'n8n-workflow';

import { MINUTE, useTriggerFixtures } from '../harness/index.cts';
import type { TriggerFixture } from '../harness/index.cts';

const DEADLINE_MINUTES = 20;
const ESCALATION = { events: ['noDevice', 'notOpenedInTime'], openDeadline: DEADLINE_MINUTES };

const brief = (items: IDataObject[]) => items.map((item) => [item.event, item.userId]);

describe('Companion Push Trigger: No Device and Not Opened in Time', () => {
	const triggers = useTriggerFixtures();
	let fixture: TriggerFixture;

	/** A new activation of the same workflow over the state it stored, as after an n8n restart. */
	function restart(): void {
		const stored = fixture.staticData();
		fixture.activate(ESCALATION, { [`node:${fixture.target.node.name}`]: stored });
	}

	test('two phones opening on one; one opening a minute after the deadline; one never; no device; a failed poll and restarts in between', async () => {
		fixture = await triggers.start(ESCALATION);
		fixture.hostClockFollowsSandbox();
		await fixture.poll();
		const twoPhones = fixture.user('twoPhones');
		const opensLate = fixture.user('onePhone', 0);
		const neverOpens = fixture.user('onePhone', 1);
		const noPhone = fixture.user('noPhone');
		const uninstalled = fixture.user('uninstalled');
		const id = await fixture.send([twoPhones, opensLate, neverOpens, noPhone, uninstalled], {
			title: 'Safety alert',
		});
		const sentAt = fixture.sandbox.clock.now();
		const deadline = sentAt + DEADLINE_MINUTES * MINUTE;
		await fixture.sandbox.clock.advance(5_000);

		// Settled: the person without a phone at once, nobody else yet.
		const settled = await fixture.poll();
		expect(brief(settled.items)).toEqual([['noDevice', noPhone]]);
		expect(settled.items[0]).toEqual({
			event: 'noDevice',
			eventKey: `${id}:${noPhone}:noDevice`,
			notificationId: id,
			title: 'Safety alert',
			body: 'Your shift starts at 9:00 tomorrow.',
			userId: noPhone,
			sentAt: new Date(sentAt).toISOString(),
		});

		fixture.sandbox.tap(id, twoPhones, 1); // their second phone only
		const logStart = fixture.sandbox.requestLog().length;
		const beforeDeadline = await fixture.pollEvery(MINUTE, 10);
		restart();
		beforeDeadline.push(...(await fixture.pollEvery(MINUTE, DEADLINE_MINUTES - 11)));
		expect(beforeDeadline).toEqual([]);
		expect(fixture.sandbox.clock.now()).toBeLessThan(deadline);

		// The first poll after the deadline fails (the API answers 503 to every try of the read).
		await fixture.sandbox.clock.advance(deadline + 5_000 - fixture.sandbox.clock.now());
		const before = fixture.staticData();
		fixture.sandbox.addFault({
			endpoint: 'GET /push-notification/:id',
			kind: 'status5xx',
			status: 503,
			times: 4,
		});
		const failed = await fixture.poll();
		expect(failed.error).toBeInstanceOf(NodeApiError);
		expect(failed.items).toEqual([]);
		expect(fixture.staticData()).toEqual(before);
		fixture.sandbox.clearFaults();

		// One minute after the deadline the late one opens; the next poll still reports them both.
		await fixture.sandbox.clock.advance(MINUTE);
		const openedLateAt = fixture.sandbox.clock.now();
		fixture.sandbox.tap(id, opensLate);
		await fixture.sandbox.clock.advance(MINUTE);
		const escalated = await fixture.poll();
		expect(escalated.error).toBeUndefined();
		expect(brief(escalated.items)).toEqual([
			['notOpenedInTime', opensLate],
			['notOpenedInTime', neverOpens],
		]);
		expect(escalated.items[0]).toEqual({
			event: 'notOpenedInTime',
			eventKey: `${id}:${opensLate}:notOpened`,
			notificationId: id,
			title: 'Safety alert',
			body: 'Your shift starts at 9:00 tomorrow.',
			userId: opensLate,
			sentAt: new Date(sentAt).toISOString(),
			level: 1,
			deadline: new Date(deadline).toISOString(),
			phonesReached: 1,
			openedAt: new Date(openedLateAt).toISOString(),
		});
		expect(escalated.items[1]).toMatchObject({ phonesReached: 1, openedAt: null });

		// Never again: more polls, a restart, more polls.
		const later = await fixture.pollEvery(MINUTE, 5);
		restart();
		later.push(...(await fixture.pollEvery(10 * MINUTE, 12)));
		expect(later).toEqual([]);

		// Settled sends are read on the back-off (1, 2, 4, 8, 16 ... minutes); the deadline added one
		// read right after it (the back-off alone would have read next at about 31 minutes).
		const reads = fixture.sandbox
			.requestLog()
			.slice(logStart)
			.filter(
				(entry) =>
					entry.endpoint === 'GET /push-notification/:id' && entry.time < deadline + 3 * MINUTE,
			);
		expect(reads.map((entry) => entry.status)).toEqual([
			200, 200, 200, 200, 503, 503, 503, 503, 200,
		]);
	});

	test('a scheduled send: the deadline runs from when it went out (sent_at), not from its scheduled time', async () => {
		// Dispatch comes 5 minutes after the scheduled time (the spec allows a couple of minutes).
		fixture = await triggers.start(
			{ ...ESCALATION, events: ['notOpenedInTime'] },
			{ scheduleLatenessMs: 5 * MINUTE },
		);
		fixture.hostClockFollowsSandbox();
		await fixture.poll();
		const user = fixture.user('onePhone');
		const scheduledAt = fixture.sandbox.clock.now() + 10 * MINUTE;
		const id = await fixture.send([user], { scheduled_at: new Date(scheduledAt).toISOString() });
		const wentOutAt = scheduledAt + 5 * MINUTE;

		const polls: Array<{ at: number; items: IDataObject[] }> = [];
		for (let poll = 0; poll < 40; poll++) {
			await fixture.sandbox.clock.advance(MINUTE);
			const outcome = await fixture.poll();
			expect(outcome.error).toBeUndefined();
			polls.push({ at: fixture.sandbox.clock.now(), items: outcome.items });
		}
		const emitting = polls.filter((poll) => poll.items.length > 0);
		expect(emitting).toHaveLength(1);
		// The first poll at or after sent_at + 20 minutes, not scheduled_at + 20 minutes.
		expect(emitting[0].at).toBe(
			polls.find((poll) => poll.at >= wentOutAt + DEADLINE_MINUTES * MINUTE)!.at,
		);
		expect(emitting[0].items).toEqual([
			expect.objectContaining({
				event: 'notOpenedInTime',
				notificationId: id,
				userId: user,
				sentAt: new Date(wentOutAt).toISOString(),
				deadline: new Date(wentOutAt + DEADLINE_MINUTES * MINUTE).toISOString(),
			}),
		]);
	});

	test('users without an active app for different reasons: one No Device each, a person with several phones counted once', async () => {
		fixture = await triggers.start({ events: ['noDevice', 'notOpenedInTime'], openDeadline: 1 });
		await fixture.poll();
		const noApp = [
			fixture.user('noPhone'),
			fixture.user('loggedOut'),
			fixture.user('noPermission'),
		];
		const threePhones = fixture.user('threePhones');
		const oneLoggedOutOfTwo = fixture.user('oneLoggedOutOfTwo');
		const id = await fixture.send([...noApp, threePhones, oneLoggedOutOfTwo]);
		const items = await fixture.pollEvery(MINUTE, 5);
		expect(items.filter((item) => item.event === 'noDevice').map((item) => item.userId)).toEqual(
			noApp,
		);
		// The others were reached (on one phone or three) and did not open: one event per person.
		expect(brief(items.filter((item) => item.event === 'notOpenedInTime'))).toEqual([
			['notOpenedInTime', threePhones],
			['notOpenedInTime', oneLoggedOutOfTwo],
		]);
		expect(items.find((item) => item.userId === threePhones)).toMatchObject({
			notificationId: id,
			phonesReached: 3,
		});
	});

	test('Not Opened Within must be a positive number of minutes shorter than the Watch Window', async () => {
		fixture = await triggers.start({ events: ['notOpenedInTime'], openDeadline: 0 });
		expect((await fixture.poll()).error?.message).toMatch(
			/Not Opened Within must be a positive number of minutes \(got 0\)/,
		);
		fixture.activate({
			events: ['notOpenedInTime'],
			openDeadline: 24 * 60,
			options: { watchWindow: 24 },
		});
		const tooLong = await fixture.poll();
		expect(tooLong.error?.message).toBe(
			'Not Opened Within (1440 minutes) must be shorter than the Watch Window (24 hours)',
		);
		expect(fixture.sandbox.requestLog()).toEqual([]); // checked before any call
	});
});
