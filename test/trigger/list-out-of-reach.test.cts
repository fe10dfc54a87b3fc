/**
 * A reading of the list that could not reach the sends it had to, through n8n's engine: 150 sends
 * between two polls and a list that ignores `skip` (it answers its newest 100 whatever page is
 * asked), also when all it shows is known. Such a reading is never taken as complete:
 * the poll fails with an error naming what it could not read (n8n records it in the executions
 * list) and changes nothing, so the next poll catches up when the list can be read again; when it
 * cannot either, the trigger goes on from the newest send it read, and the sends it never read
 * stay unreported, as the error said. The list's other oddities still give every event once.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject } from 'n8n-workflow';

import type { SandboxSettings } from '../../sandbox/index.cts';
import { MINUTE, SEND, useTriggerFixtures } from '../harness/index.cts';
import type { TriggerFixture } from '../harness/index.cts';

const SENDS = 150;
const SETTLED = { events: ['notificationSettled'] };

/** `SENDS` sends to one person, oldest first, a millisecond apart; their ids. */
async function sendMany(fixture: TriggerFixture): Promise<string[]> {
	const ids: string[] = [];
	for (let i = 0; i < SENDS; i++) {
		ids.push(await fixture.send([fixture.user('onePhone')], { title: `Report ${i}` }));
		await fixture.sandbox.clock.advance(1);
	}
	return ids;
}

/** How many times each send was emitted. */
function timesEmitted(items: IDataObject[]): Map<string, number> {
	const times = new Map<string, number>();
	for (const item of items) {
		const id = item.notificationId as string;
		times.set(id, (times.get(id) ?? 0) + 1);
	}
	return times;
}

describe('Companion Push Trigger: a list it cannot read to the end', () => {
	const triggers = useTriggerFixtures();

	test('150 sends between two polls, `skip` ignored for good: the poll says what it could not read; the next goes on with the 100 it read, each once', async () => {
		const fixture = await triggers.start(SETTLED, { listIgnoresSkip: true });
		await fixture.poll();
		const firstSendAt = fixture.sandbox.clock.now();
		const ids = await sendMany(fixture);
		await fixture.sandbox.clock.advance(5_000);
		const before = fixture.staticData();

		const reported = await fixture.poll();
		expect(reported.items).toEqual([]);
		expect(reported.error).toBeInstanceOf(NodeOperationError);
		expect(reported.error!.message).toBe(
			'The list of notifications could not be read as far as needed: it answered a later page with notifications already read (it seems to ignore "skip"), so only the newest 100 of the 150 it counts could be read',
		);
		// The 50 oldest sends lie between the floor (the first poll's time) and the oldest one read.
		const oldestRead = firstSendAt + (SENDS - 100);
		expect(reported.error!.description).toContain(
			`created between ${new Date(firstSendAt).toISOString()} and ${new Date(oldestRead).toISOString()}`,
		);
		expect(fixture.staticData()).toEqual(before);

		// Still out of reach: the trigger goes on with what it read, and keeps going.
		const items = await fixture.pollEvery(MINUTE, 4);
		const newest = ids.slice(SENDS - 100);
		expect(timesEmitted(items)).toEqual(new Map(newest.map((id) => [id, 1])));

		const later = await fixture.send([fixture.user('onePhone')], { title: 'Later' });
		const next = await fixture.pollEvery(MINUTE, 3);
		expect(next.map((item) => item.notificationId)).toEqual([later]);
	});

	test('the list reads to the end again at the next poll: every one of the 150 sends is reported once', async () => {
		const fixture = await triggers.start(SETTLED, { listIgnoresSkip: true });
		await fixture.poll();
		const ids = await sendMany(fixture);
		await fixture.sandbox.clock.advance(5_000);
		expect((await fixture.poll()).error).toBeInstanceOf(NodeOperationError);

		fixture.sandbox.configure({ listIgnoresSkip: false });
		const items = await fixture.pollEvery(MINUTE, 5);
		expect(timesEmitted(items)).toEqual(new Map(ids.map((id) => [id, 1])));
	});

	test('the poll n8n runs while activating the workflow does not fail (n8n would disable the trigger): the next one reports', async () => {
		const fixture = await triggers.start(SETTLED, { listIgnoresSkip: true });
		await fixture.poll();
		await sendMany(fixture);
		await fixture.sandbox.clock.advance(5_000);
		// A restart: a new activation over the stored state.
		fixture.activate(SETTLED, { [`node:${fixture.target.node.name}`]: fixture.staticData() });
		const activation = await fixture.poll();
		expect(activation.error).toBeUndefined();
		expect(activation.items).toEqual([]);
		await fixture.sandbox.clock.advance(MINUTE);
		expect((await fixture.poll()).error?.message).toMatch(/only the newest 100 of the 150/);
	});

	test('a reading that finds nothing new is not complete either: 50 sends listed late below 100 known ones, `skip` ignored', async () => {
		const fixture = await triggers.start(SETTLED);
		await fixture.poll();
		// 50 sends the list shows 4 minutes late, then 100 it shows at once.
		const late: string[] = [];
		for (let i = 0; i < 50; i++) {
			fixture.sandbox.addFault({ endpoint: SEND, kind: 'listLag', listDelayMs: 4 * MINUTE });
			late.push(await fixture.send([fixture.user('onePhone')], { title: `Late ${i}` }));
			await fixture.sandbox.clock.advance(1);
		}
		const shown: string[] = [];
		for (let i = 0; i < 100; i++) {
			shown.push(await fixture.send([fixture.user('onePhone')], { title: `Shown ${i}` }));
			await fixture.sandbox.clock.advance(1);
		}
		const first = await fixture.pollEvery(MINUTE, 2);
		expect(timesEmitted(first)).toEqual(new Map(shown.map((id) => [id, 1])));

		// The late ones are listed now, below the 100 known ones; the list stops honouring `skip`.
		fixture.sandbox.configure({ listIgnoresSkip: true });
		await fixture.sandbox.clock.advance(2.5 * MINUTE);
		const nothingNew = await fixture.poll();
		expect(nothingNew.items).toEqual([]);
		expect(nothingNew.error?.message).toMatch(/only the newest 100 of the 150 it counts/);

		fixture.sandbox.configure({ listIgnoresSkip: false });
		const caughtUp = await fixture.pollEvery(MINUTE, 3);
		expect(timesEmitted(caughtUp)).toEqual(new Map(late.map((id) => [id, 1])));
	});

	const oddities: Array<{ name: string; settings: Partial<SandboxSettings> }> = [
		{
			name: 'pages silently smaller than asked (listMaxPageSize 20)',
			settings: { listMaxPageSize: 20 },
		},
		{ name: 'a default page size of 10 (listDefaultLimit)', settings: { listDefaultLimit: 10 } },
		{ name: 'every send listed 90 s late (listLagMs)', settings: { listLagMs: 90_000 } },
	];
	test.each(oddities)(
		'$name: 150 sends between two polls, every one reported once, no error',
		async ({ settings }) => {
			const fixture = await triggers.start(SETTLED, settings);
			await fixture.poll();
			const ids = await sendMany(fixture);
			await fixture.sandbox.clock.advance(5_000);
			const items = await fixture.pollEvery(MINUTE, 6);
			expect(timesEmitted(items)).toEqual(new Map(ids.map((id) => [id, 1])));
		},
	);
});
