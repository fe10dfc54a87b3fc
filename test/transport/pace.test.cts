/**
 * The credential's pace (transport/retry.ts): one decrease and one pause per episode of 429s, an
 * in-flight limit that never falls below what the service was seen to admit, and, against the
 * sandbox's real limits (a token bucket, a cap on requests in flight), every item sent once.
 * The rules are pinned on the Pace itself with jest's clock; the runs count 429s and registered
 * sends from the sandbox's request log, and watch the pace's decisions without changing them.
 */
import { resetProcessState } from '../../devkit/processState.cts';
import { Pace } from '../../nodes/CompanionPush/transport/retry';
import type { Turn } from '../../nodes/CompanionPush/transport/retry';
import {
	jsonOf,
	logOf,
	NODE_SANDBOX,
	runOn,
	SEND,
	sendParameters,
	storeFor,
	useTestSandboxes,
} from '../harness/index.cts';
import type { Sandbox, SandboxOptions } from '../../sandbox/index.cts';

describe('the rules, on the clock of the test', () => {
	beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
	afterEach(() => jest.useRealTimers());

	const turns = async (pace: Pace, count: number): Promise<Turn[]> =>
		Promise.all(Array.from({ length: count }, async () => await pace.acquire()));
	/** The 429 of `turn` arrives: its request is out of flight, then the pace hears of it. */
	const refused = (pace: Pace, turn: Turn, retryAfterMs = 1000) => {
		pace.release();
		pace.rateLimited(turn, retryAfterMs);
	};
	const admitted = (pace: Pace, turn: Turn, status = 202) => {
		pace.release();
		pace.answered(turn, status);
	};
	/** A new request of the pace: whether it has started yet (the pause and the limit decide). */
	function nextRequest(pace: Pace): { started: boolean } {
		const request = { started: false };
		void pace.acquire().then(() => (request.started = true));
		return request;
	}

	/** 8 requests at once: `admittedCount` answered after 40 ms, then the rest refused 30 ms apart. */
	async function openingBurst(pace: Pace, admittedCount: number): Promise<void> {
		const burst = await turns(pace, 8);
		jest.advanceTimersByTime(40);
		for (const turn of burst.slice(0, admittedCount)) admitted(pace, turn);
		for (const turn of burst.slice(admittedCount)) {
			refused(pace, turn);
			jest.advanceTimersByTime(30);
		}
	}

	test('the first 429s: the limit becomes what the service admitted of the opening burst', async () => {
		const pace = new Pace();
		await openingBurst(pace, 3);
		expect(pace.limit).toBe(3);
	});

	test('the first 429s after earlier, finished bursts: only the current burst is evidence', async () => {
		const pace = new Pace();
		const earlier = await turns(pace, 8);
		jest.advanceTimersByTime(40);
		for (const turn of earlier) admitted(pace, turn);
		jest.advanceTimersByTime(60_000);
		await openingBurst(pace, 3);
		expect(pace.limit).toBe(3);
	});

	test('the first 429 after requests that left two at a time: the limit is 2, not all that were admitted', async () => {
		const pace = new Pace();
		// 8 turns taken at once (before the token came), whose requests leave two at a time.
		const burst = await turns(pace, 8);
		for (let pair = 0; pair < 3; pair++) {
			for (const turn of burst.slice(2 * pair, 2 * pair + 2)) pace.wentOut(turn);
			jest.advanceTimersByTime(40);
			for (const turn of burst.slice(2 * pair, 2 * pair + 2)) admitted(pace, turn);
		}
		// The next is refused as it arrives.
		pace.wentOut(burst[6]);
		refused(pace, burst[6]);
		// 6 admitted in the 120 ms since the first left, 40 ms each: 2 at once.
		expect(pace.limit).toBe(2);
	});

	test('a burst refused one 429 after another: the limit halves once, the pause runs from the first', async () => {
		const pace = new Pace();
		await openingBurst(pace, 4);
		await jest.advanceTimersByTimeAsync(1000);
		expect(pace.limit).toBe(4);
		// The 4 requests after the pause are refused 30 ms apart, each asking for 1 s.
		for (const turn of await turns(pace, 4)) {
			refused(pace, turn);
			jest.advanceTimersByTime(30);
		}
		// 4 in flight at the first of them: half of them, once.
		expect(pace.limit).toBe(2);
		// 120 ms have passed: the pause ends 1 s after the first 429, not after the last.
		const next = nextRequest(pace);
		await jest.advanceTimersByTimeAsync(879);
		expect(next.started).toBe(false);
		await jest.advanceTimersByTimeAsync(1);
		expect(next.started).toBe(true);
	});

	test('a longer Retry-After within the burst: every request waits that long from its start', async () => {
		const pace = new Pace();
		const [first, second] = await turns(pace, 2);
		refused(pace, first, 1000);
		jest.advanceTimersByTime(50);
		refused(pace, second, 3000);
		// 3 s from the first 429 of the burst.
		const next = nextRequest(pace);
		await jest.advanceTimersByTimeAsync(2949);
		expect(next.started).toBe(false);
		await jest.advanceTimersByTimeAsync(1);
		expect(next.started).toBe(true);
	});

	/**
	 * After an opening burst (limit 6, a pause until 1040 ms), the service admits 4 requests every
	 * 40 ms from 1100 ms to 1500 ms: each answered 40 ms after it went out. 20 ms into the next round
	 * a fifth request is refused; `status` is what the admitted ones answered.
	 */
	async function refusedAfterSteadyRounds(status: number): Promise<Pace> {
		const pace = new Pace();
		await openingBurst(pace, 6);
		await jest.advanceTimersByTimeAsync(1000);
		for (let round = 0; round < 10; round++) {
			const inFlight = await turns(pace, 4);
			jest.advanceTimersByTime(40);
			for (const turn of inFlight) admitted(pace, turn, status);
		}
		const [fifth] = (await turns(pace, 5)).slice(4);
		jest.advanceTimersByTime(20);
		refused(pace, fifth);
		return pace;
	}

	test('the limit does not fall below how many the service was seen to hold at once', async () => {
		const pace = await refusedAfterSteadyRounds(202);
		// Halving the 5 in flight would leave 2; 40 admitted in the 480 ms since the pause, 40 ms each,
		// show 3.3 in flight.
		expect(pace.limit).toBe(3);
	});

	test('5xx answers are no evidence of what the service admits: the limit halves', async () => {
		const pace = await refusedAfterSteadyRounds(503);
		expect(pace.limit).toBe(2);
	});
});

/** Watches the pace's decisions in a run: the time and the limit after every decrease. */
function watchDecreases(): { decreases: Array<{ at: number; limit: number }>; limits: number[] } {
	const decreases: Array<{ at: number; limit: number }> = [];
	const limits: number[] = [];
	const rateLimited = Pace.prototype.rateLimited;
	jest.spyOn(Pace.prototype, 'rateLimited').mockImplementation(function (this: Pace, ...args) {
		const before = this.limit;
		rateLimited.apply(this, args);
		limits.push(this.limit);
		if (this.limit < before) decreases.push({ at: Date.now(), limit: this.limit });
	});
	return { decreases, limits };
}

/** `users.length` items, one send each, all started at once (the node at its defaults). */
async function sendEach(sandbox: Sandbox, users: string[]) {
	return await runOn(sandbox, {
		credentials: storeFor(sandbox),
		items: users.map((userId) => ({ userId })),
		parameters: sendParameters({ userIds: '={{ $json.userId }}' }),
	});
}

/** The recipients of the sends the sandbox registered, sorted (one per send). */
const registeredRecipients = (sandbox: Sandbox) =>
	logOf(sandbox, SEND)
		.filter((entry) => entry.notificationId !== undefined)
		.map((entry) => (entry.body as { target_user_ids: string[] }).target_user_ids[0])
		.sort();

const refusedBy = (sandbox: Sandbox, limit: 'rateLimitPerSecond' | 'maxInFlight') =>
	logOf(sandbox, SEND).filter((entry) => entry.limitedBy === limit);

describe("against the sandbox's limits: every item once, the pace learns", () => {
	const sandboxes = useTestSandboxes();
	afterEach(() => {
		jest.restoreAllMocks();
		resetProcessState();
	});

	/** 60 items, one send each to one person, all started at once against a sandbox under `limits`
	 * (answers held `latencyMs`): every item sent, each person once. */
	const sendSixtyUnder = async (limits: SandboxOptions) => {
		const sandbox = await sandboxes.start({ ...NODE_SANDBOX, seedUsers: 200, ...limits });
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 60);
		const run = await sendEach(sandbox, users);
		expect(run.error).toBeUndefined();
		expect(jsonOf(run.items).filter((json) => typeof json.id === 'string')).toHaveLength(60);
		expect(registeredRecipients(sandbox)).toEqual([...users].sort());
		return sandbox;
	};

	test('a rate limit (20/s, answers held 100 ms): one decrease per pause, never below what it admits', async () => {
		const { decreases, limits } = watchDecreases();
		const sandbox = await sendSixtyUnder({ latencyMs: 100, rateLimitPerSecond: 20 });

		expect(refusedBy(sandbox, 'rateLimitPerSecond').length).toBeGreaterThan(0);
		// Retry-After is 1 s: a request that can bring news starts after the pause, so two decreases
		// are at least that far apart (one per episode, however many 429s it had).
		for (let index = 1; index < decreases.length; index++)
			expect(decreases[index].at - decreases[index - 1].at).toBeGreaterThanOrEqual(1000);
		// The bucket refills 20 per second and every answer takes 100 ms or more: the service admits
		// 2 in flight at the least, and after every pause it admitted at least its rate.
		expect(Math.min(...limits)).toBeGreaterThanOrEqual(2);
	});

	test('a cap of 4 in flight (answers held 30 ms): 60 sends converge, none failed, none twice', async () => {
		const sandbox = await sendSixtyUnder({ latencyMs: 30, maxInFlight: 4 });

		const refusals = refusedBy(sandbox, 'maxInFlight');
		expect(refusals.length).toBeGreaterThan(0);
		// The opening burst (60 at once) meets about 56 refusals; after its pause (Retry-After: 1) the
		// pace keeps near the cap: a 429 now and then as it probes for one more, not one per send.
		const afterOpening = refusals.filter((entry) => entry.time >= refusals[0].time + 1000);
		expect(afterOpening.length).toBeLessThan(60 / 4);
	});
});
