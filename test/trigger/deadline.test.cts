/**
 * A poll has a deadline for its whole work, and a poll still running makes the next one read
 * nothing: n8n starts a poll at every tick of the schedule without waiting for the last one. The
 * sandbox's trickle fault holds each detail read for 100 s (a byte every 10 ms after 10,000
 * spaces) while the request deadline stays at its 30 s: only the poll's deadline (400 ms here)
 * ends the poll in time. No assertion depends on how fast the machine is.
 */
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import { DETAIL, MINUTE, useTriggerFixtures, waitFor } from '../harness/index.cts';

describe('Companion Push Trigger: a poll that hangs', () => {
	const triggers = useTriggerFixtures();
	beforeEach(() => {
		resetProcessState();
		useTimings({ pollDeadlineMs: 400, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
	});
	afterAll(() => resetProcessState());

	test('a trickling poll ends at its deadline; a poll due meanwhile reads nothing; the next one catches up', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled'] });
		await fixture.poll();
		const id = await fixture.send([fixture.user('onePhone')]);
		await fixture.sandbox.clock.advance(MINUTE);
		fixture.sandbox.addFault({
			endpoint: DETAIL,
			kind: 'trickle',
			intervalMs: 10,
			padBytes: 10_000,
			share: 1,
		});

		const hung = fixture.poll();
		await waitFor('the detail read', () => fixture.callsSince(0)[DETAIL] === 1, 10_000, 5);
		const requestsBefore = fixture.sandbox.requestLog().length;
		const due = await fixture.poll();
		expect(due).toMatchObject({ emitted: false, error: undefined, items: [] });
		expect(fixture.sandbox.requestLog().length).toBe(requestsBefore);

		const ended = await hung;
		expect(ended.emitted).toBe(false);
		expect(ended.error?.message).toBe(
			`Reading notification ${id} failed: no complete answer from the API within the poll's deadline of 400 ms (ETIMEDOUT)`,
		);
		// One try: a second could not end by the deadline.
		expect(fixture.callsSince(0)[DETAIL]).toBe(1);

		fixture.sandbox.clearFaults();
		const next = await fixture.poll();
		expect(next.error).toBeUndefined();
		expect(next.items).toEqual([
			expect.objectContaining({ event: 'notificationSettled', notificationId: id }),
		]);
	});
});
