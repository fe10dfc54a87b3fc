/**
 * The static data stays bounded over a simulated week of daily sends, polled every 10 minutes:
 * sends age out after the watch window, and every event is still emitted exactly once. Its size is
 * bounded in characters too, whatever the length of the user ids in its keys.
 */
import {
	ageOut,
	initialState,
	MAX_REMEMBERED_KEYS,
	MAX_WATCHED_CHARS,
	MAX_WATCHED_SENDS,
	watchSend,
} from '../../nodes/CompanionPush/trigger/state';
import { DAY, MINUTE, useTriggerFixtures } from '../harness/index.cts';

const SENDS_PER_DAY = 12;
const POLL_EVERY = 10 * MINUTE;

describe('Companion Push Trigger: bounded state', () => {
	const triggers = useTriggerFixtures();

	test('over a week the static data stays small and watches only the last window of sends', async () => {
		// A third of the delivered phones are tapped 20 minutes after delivery.
		const fixture = await triggers.start({}, { autoTapShare: 0.34, autoTapAfterMs: 20 * MINUTE });
		fixture.hostClockFollowsSandbox();
		await fixture.poll();
		const audience = [
			fixture.user('onePhone'),
			fixture.user('twoPhones'),
			fixture.user('uninstalled'),
			fixture.user('flaky'),
			fixture.user('onePhone', 1),
		];

		const sizes: number[] = [];
		const watchedCounts: number[] = [];
		const keys: string[] = [];
		const sendIds: string[] = [];
		const pollsPerDay = DAY / POLL_EVERY;
		for (let day = 0; day < 7; day++) {
			for (let poll = 0; poll < pollsPerDay; poll++) {
				// Sends spread over the working day, one every 40 minutes from 9:00.
				if (poll >= 54 && poll < 54 + SENDS_PER_DAY * 4 && (poll - 54) % 4 === 0) {
					sendIds.push(
						await fixture.send(audience, { title: `Day ${day + 1} #${sendIds.length + 1}` }),
					);
				}
				await fixture.sandbox.clock.advance(POLL_EVERY);
				const outcome = await fixture.poll();
				if (outcome.error) throw outcome.error;
				keys.push(...outcome.items.map((item) => item.eventKey as string));
				const stored = fixture.staticData();
				sizes.push(JSON.stringify(stored).length);
				watchedCounts.push(Object.keys((stored.watch as { sends: object }).sends).length);
			}
		}
		await fixture.pollEvery(POLL_EVERY, 6 * 24); // one more day: everything ages out

		expect(sendIds).toHaveLength(7 * SENDS_PER_DAY);
		// Exactly once: no key twice, and every send's settlement emitted.
		expect(new Set(keys).size).toBe(keys.length);
		const settledSends = new Set(
			keys.filter((key) => key.includes(':status:')).map((key) => key.split(':')[0]),
		);
		expect(settledSends).toEqual(new Set(sendIds));
		// Every open and every failure the API shows was emitted, none missed.
		const deliveries = fixture.sandbox.notifications('primary').flatMap((send) => send.deliveries);
		const opened = deliveries.filter((delivery) => delivery.status === 'opened').length;
		expect(opened).toBeGreaterThan(50);
		expect(keys.filter((key) => key.endsWith(':opened'))).toHaveLength(opened);
		expect(keys.filter((key) => key.endsWith(':failed'))).toHaveLength(7 * SENDS_PER_DAY); // the uninstalled phone

		// Bounded: never more than one window (24 h) of sends, and the size does not grow day by day.
		expect(Math.max(...watchedCounts)).toBeLessThanOrEqual(SENDS_PER_DAY + 1);
		const maxOfDay = (day: number) =>
			Math.max(...sizes.slice(day * pollsPerDay, (day + 1) * pollsPerDay));
		expect(maxOfDay(6)).toBeLessThanOrEqual(maxOfDay(1) * 1.2);
		expect(Math.max(...sizes)).toBeLessThan(8_000);
		expect(JSON.stringify(fixture.staticData()).length).toBeLessThan(1_000); // all aged out
		console.log(
			`static data over a week: max ${Math.max(...sizes)} chars, at most ${Math.max(...watchedCounts)} sends watched`,
		);
	}, 300_000); // 16 s alone; several times that beside the other suites of a CI run

	test('a send is watched for the window after it went out, then forgotten and never read again', async () => {
		const fixture = await triggers.start({
			events: ['deliveryOpened'],
			options: { watchWindow: 2 },
		});
		fixture.hostClockFollowsSandbox();
		await fixture.poll();
		const user = fixture.user('onePhone');
		const id = await fixture.send([user]);
		await fixture.pollEvery(MINUTE, 3);
		expect(Object.keys((fixture.staticData().watch as { sends: object }).sends)).toEqual([id]);

		await fixture.pollEvery(10 * MINUTE, 12); // 2 h later
		expect((fixture.staticData().watch as { sends: object }).sends).toEqual({});
		fixture.sandbox.tap(id, user); // too late: the window has passed
		const logStart = fixture.sandbox.requestLog().length;
		expect(await fixture.pollEvery(10 * MINUTE, 6)).toEqual([]);
		expect(fixture.callsSince(logStart)['GET /push-notification/:id'] ?? 0).toBe(0);
	});

	test("beyond the hard bounds the oldest sends are dropped before their window ends, and n8n's log says which", async () => {
		const fixture = await triggers.start({ events: ['notificationSettled'] });
		fixture.hostClockFollowsSandbox();
		await fixture.poll();
		const oldest = await fixture.send([fixture.user('onePhone')], { title: 'Oldest' });
		await fixture.sandbox.clock.advance(1_000);
		await fixture.sendMany(MAX_WATCHED_SENDS, [fixture.user('onePhone')], { title: 'Later' });
		await fixture.sandbox.clock.advance(1_000);
		const warn = jest
			.spyOn(fixture.target.context!.logger, 'warn')
			.mockImplementation(() => undefined);
		try {
			const outcome = await fixture.poll();
			expect(outcome.error).toBeUndefined();
			const sends = (fixture.staticData().watch as { sends: object }).sends;
			expect(Object.keys(sends)).toHaveLength(MAX_WATCHED_SENDS);
			expect(Object.keys(sends)).not.toContain(oldest);
			expect(warn).toHaveBeenCalledTimes(1);
			expect(warn.mock.calls[0][0]).toMatch(
				new RegExp(`stopped watching 1 before their watch window ended: ${oldest}\\.`),
			);
		} finally {
			warn.mockRestore();
		}
	});
});

describe('Companion Push Trigger state: bounded in characters, not only in counts', () => {
	test('40 sends with 250 keys of 2 KB user ids each (20 MB by count alone): the oldest are forgotten until it fits', () => {
		const now = Date.UTC(2026, 2, 2, 9);
		const state = initialState([], now);
		const userId = 'u'.repeat(2048);
		const ids = Array.from({ length: 40 }, (_, index) => `send-${index}`);
		for (const [index, id] of ids.entries()) {
			watchSend(
				state,
				id,
				{ status: 'sent', created_at: new Date(now + index * 1_000).toISOString() },
				now,
			);
			state.sends[id].keys = Array.from({ length: 250 }, () => `${id}:noDevice:${userId}`);
		}
		expect(ids.length * 250).toBeLessThan(MAX_REMEMBERED_KEYS);

		const forgotten = ageOut(state, now + 40_000, 24 * 3_600_000);

		const size = JSON.stringify(state).length;
		expect(size).toBeLessThanOrEqual(MAX_WATCHED_CHARS);
		const kept = Object.keys(state.sends);
		expect(kept.length).toBeGreaterThan(1);
		// The newest are kept, the oldest forgotten (and reported, for n8n's log), nothing in between.
		expect([...kept].sort()).toEqual(ids.slice(ids.length - kept.length).sort());
		expect([...forgotten].sort()).toEqual(ids.slice(0, ids.length - kept.length).sort());
		console.log(`2 KB user ids: ${kept.length} of 40 sends kept, static data ${size} chars`);
	});

	test('one send whose keys alone pass the bound is forgotten and reported, rather than kept half', () => {
		const now = Date.UTC(2026, 2, 2, 9);
		const state = initialState([], now);
		watchSend(state, 'huge', { status: 'sent', created_at: new Date(now).toISOString() }, now);
		state.sends.huge.keys = Array.from(
			{ length: 1000 },
			(_, index) => `huge:noDevice:${'u'.repeat(2048)}${index}`,
		);
		expect(ageOut(state, now, 24 * 3_600_000)).toEqual(['huge']);
		expect(state.sends).toEqual({});
	});
});
