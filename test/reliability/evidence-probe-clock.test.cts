/**
 * A probe proves the list current, never where a send of long ago stands in it. The randomized run
 * (seed 72026) found the sequence: an event's keyed send registered, its answer lost and the list
 * unreadable, so the item ended "unknown" and its key stayed claimed; the API's clock was then
 * stepped; the event came again in a quiet organization. Its lookup placed the claim's time on the
 * API's clock by the new offset, so the send of the first run lay before the window and was passed
 * over, and the probe, listed, "proved" it absent: the event was sent twice. Runs go through n8n's
 * engine against the sandbox; who was notified is counted from its request log.
 */
import { forgetProbes } from '../../nodes/CompanionPush/transport/safeSend/probe';
import {
	jsonOf,
	keyedRun,
	probeRequests,
	registeredSends,
	runOnce,
	SEND,
	SEND_LIST,
	useKeyedRuns,
} from '../harness/index.cts';

describe("a claim left unknown, the API's clock stepped since: the probe proves nothing about it", () => {
	const keyedRuns = useKeyedRuns();
	const { sandbox } = keyedRuns;
	beforeEach(() => forgetProbes());

	test.each([
		['ahead', 90_000],
		['back', -90_000],
	])(
		'the clock stepped %s 90 s between the runs: the event is not sent again',
		async (_, stepMs) => {
			const [user] = keyedRuns.users;
			const run = keyedRun(sandbox, [{ userId: user, key: 'order-1:shipped' }]);
			// The send registered, its answer lost, and no reading of the list answers: "unknown".
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 500, afterProcessing: true });
			sandbox.addFault({ endpoint: SEND_LIST, kind: 'status5xx', status: 503, times: 1_000 });
			const [first] = jsonOf((await runOnce(run)).items);
			expect(first.error).toMatch(/the outcome is unknown/);
			expect(registeredSends(sandbox)).toHaveLength(1);

			sandbox.clearFaults();
			sandbox.configure({ clockOffsetMs: stepMs });
			const [again] = jsonOf((await runOnce(run)).items);

			expect(registeredSends(sandbox)).toHaveLength(1);
			// Found, or "unknown": never sent again.
			if (again.error === undefined) expect(again.id).toBe(registeredSends(sandbox)[0].id);
			else expect(again.error).toMatch(/the outcome is unknown/);
			expect(probeRequests(sandbox, SEND).length).toBeLessThanOrEqual(3);
		},
	);
});
