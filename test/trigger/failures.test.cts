/**
 * A poll that fails emits nothing and moves nothing: the static data is exactly as before, the
 * error reaches n8n as a NodeApiError, and the next poll emits what the failed one missed.
 */
import { NodeApiError } from 'n8n-workflow';

import type { FaultSpec } from '../../sandbox/index.cts';
import { MINUTE, useTriggerFixtures } from '../harness/index.cts';

describe('Companion Push Trigger: a failing poll', () => {
	const triggers = useTriggerFixtures();

	// The poll reads the two details due in parallel: a fault on "every try" of the detail reads
	// is there for the tries of both.
	const cases: Array<{ name: string; faults: FaultSpec[]; httpCode?: string; message: RegExp }> = [
		{
			name: '5xx on the detail read, after the transport retries',
			faults: [
				{ endpoint: 'GET /push-notification/:id', kind: 'status5xx', status: 503, times: 8 },
			],
			httpCode: '503',
			message: /HTTP 503/,
		},
		{
			name: '5xx on the list read, after the transport retries',
			faults: [
				{ endpoint: 'GET /push-notification/list', kind: 'status5xx', status: 502, times: 4 },
			],
			httpCode: '502',
			message: /HTTP 502/,
		},
		{
			// Every try of both detail reads (each call tries up to 5 tokens: saved by the other read, or renewed).
			name: '401 on every try (each read renews twice at most, then fails)',
			faults: [{ endpoint: 'GET /push-notification/:id', kind: 'unauthorized', times: 20 }],
			httpCode: '401',
			message: /HTTP 401/,
		},
		{
			name: 'malformed JSON on the detail read, every try',
			faults: [{ endpoint: 'GET /push-notification/:id', kind: 'malformedJson', times: 8 }],
			message: /unexpected body/,
		},
	];

	test.each(cases)(
		'$name: nothing emitted, state untouched, the next poll catches up',
		async ({ faults, httpCode, message }) => {
			const fixture = await triggers.start({ events: ['notificationSettled', 'deliveryFailed'] });
			await fixture.poll();
			// One send already watched and settled (its events emitted), one new: the failing poll
			// must neither lose the new one nor repeat the old one.
			const old = await fixture.send([fixture.user('onePhone')], { title: 'Old' });
			await fixture.sandbox.clock.advance(5_000);
			expect((await fixture.poll()).items.map((item) => item.notificationId)).toEqual([old]);

			const fresh = await fixture.send([fixture.user('onePhone'), fixture.user('uninstalled')], {
				title: 'Fresh',
			});
			await fixture.sandbox.clock.advance(5 * MINUTE);
			const before = fixture.staticData();
			for (const fault of faults) fixture.sandbox.addFault(fault);

			const failed = await fixture.poll();
			expect(failed.emitted).toBe(false);
			expect(failed.items).toEqual([]);
			expect(failed.error).toBeInstanceOf(NodeApiError);
			expect(failed.error!.message).toMatch(message);
			if (httpCode) expect(failed.error!.httpCode).toBe(httpCode);
			expect(fixture.staticData()).toEqual(before);

			// The outage ends.
			fixture.sandbox.clearFaults();
			await fixture.sandbox.clock.advance(MINUTE);
			const next = await fixture.poll();
			expect(next.error).toBeUndefined();
			expect(next.items.map((item) => [item.event, item.notificationId])).toEqual([
				['notificationSettled', fresh],
				['deliveryFailed', fresh],
			]);
			expect(await fixture.pollEvery(MINUTE, 5)).toEqual([]);
		},
	);

	test('a failure partway through the reads leaves the earlier reads unremembered too', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled'] });
		await fixture.poll();
		const first = await fixture.send([fixture.user('onePhone')], { title: 'A' });
		const second = await fixture.send([fixture.user('onePhone')], { title: 'B' });
		await fixture.sandbox.clock.advance(5_000);
		const before = fixture.staticData();
		// Faults apply oldest first: a zero delay lets the first detail read through unharmed, then
		// every try of the second read fails.
		fixture.sandbox.addFault({
			endpoint: 'GET /push-notification/:id',
			kind: 'delay',
			delayMs: 0,
			times: 1,
		});
		fixture.sandbox.addFault({
			endpoint: 'GET /push-notification/:id',
			kind: 'status5xx',
			status: 500,
			times: 4,
		});
		const logStart = fixture.sandbox.requestLog().length;

		const failed = await fixture.poll();
		const detailAnswers = fixture.sandbox
			.requestLog()
			.slice(logStart)
			.filter((entry) => entry.endpoint === 'GET /push-notification/:id')
			.map((entry) => entry.status);
		expect(detailAnswers).toEqual([200, 500, 500, 500, 500]);
		expect(failed.error).toBeInstanceOf(NodeApiError);
		expect(failed.items).toEqual([]);
		expect(fixture.staticData()).toEqual(before);

		const next = await fixture.poll();
		expect(next.items.map((item) => item.notificationId).sort()).toEqual([first, second].sort());
	});

	test('the poll n8n runs while activating the workflow does not fail during an outage: it logs, keeps the state, and the next poll catches up', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled'] });
		await fixture.poll();
		const sent = await fixture.send([fixture.user('onePhone')], { title: 'During the outage' });
		await fixture.sandbox.clock.advance(5_000);
		// n8n restarts: a new activation (a new poll context) over the same static data.
		const stored = fixture.staticData();
		fixture.activate(
			{ events: ['notificationSettled'] },
			{ [`node:${fixture.target.node.name}`]: stored },
		);
		fixture.sandbox.addFault({
			endpoint: 'GET /push-notification/list',
			kind: 'status5xx',
			status: 503,
			times: 4,
		});

		const activation = await fixture.poll();
		expect(activation.error).toBeUndefined();
		expect(activation.emitted).toBe(false);
		expect(fixture.staticData()).toEqual(stored);

		const next = await fixture.poll();
		expect(next.items.map((item) => item.notificationId)).toEqual([sent]);
		// Later polls report their errors to n8n as usual.
		fixture.sandbox.addFault({
			endpoint: 'GET /push-notification/list',
			kind: 'status5xx',
			status: 503,
			times: 4,
		});
		expect((await fixture.poll()).error).toBeInstanceOf(NodeApiError);
	});

	test('a watched send the API no longer knows (404) is forgotten instead of failing every poll, and the workflow told', async () => {
		const fixture = await triggers.start({ events: ['notificationSettled'] });
		await fixture.poll();
		const gone = await fixture.send([fixture.user('onePhone')], { title: 'Gone' });
		await fixture.poll();
		expect(Object.keys((fixture.staticData().watch as { sends: object }).sends)).toContain(gone);
		// The sandbox forgets every send (as a restarted sandbox would): the watched one answers 404.
		await fixture.sandbox.reset();
		await fixture.sandbox.clock.advance(30 * MINUTE);

		const outcome = await fixture.poll();
		expect(outcome.error).toBeUndefined();
		expect(Object.keys((fixture.staticData().watch as { sends: object }).sends)).not.toContain(
			gone,
		);
		// Not in silence: the workflow is told which send is no longer watched, and why.
		expect(outcome.items).toEqual([
			expect.objectContaining({
				event: 'stoppedWatching',
				notificationId: gone,
				status: 'sending', // as last read
				reason: 'notFound',
			}),
		]);
		const detailReads = fixture.sandbox
			.requestLog()
			.filter((entry) => entry.endpoint === 'GET /push-notification/:id');
		expect(detailReads.map((entry) => entry.status)).toEqual([404]);
	});
});
