/**
 * The API clock's offsets a lookup widens its window by (listings.ts) are kept up to a bound. An API
 * whose Date headers step on every answer fills it; the offsets it forgot may have held while an
 * earlier attempt was out, so that attempt's window must span every offset, never only the kept ones
 * (a window too narrow lets the probe "prove" a send absent that was made).
 */
import { resetProcessState } from '../../devkit/processState.cts';
import type { CompanionPushContext } from '../../nodes/CompanionPush/transport/http';
import {
	apiClockSeenSince,
	CLOCK_SPANS_LIMIT,
	noteApiClock,
} from '../../nodes/CompanionPush/transport/safeSend/listings';

const context = {
	getNode: () => ({ credentials: { companionPushApi: { id: 'cred-clock' } } }),
} as unknown as CompanionPushContext;

/** An answer whose Date header is `aheadMs` ahead of n8n's clock. */
const answer = (aheadMs: number) => noteApiClock(context, Date.now() + aheadMs, Date.now());

describe("the API clock's offsets kept for a lookup's window", () => {
	beforeEach(() => resetProcessState());
	afterAll(() => resetProcessState());

	test('within the bound: the offsets seen since the attempt, none unbounded', () => {
		const attemptAt = Date.now() - 1;
		answer(0);
		answer(120_000);
		const spans = apiClockSeenSince(context, attemptAt);
		expect(spans.map((span) => span.aheadAtLeastMs).every(Number.isFinite)).toBe(true);
		expect(Math.max(...spans.map((span) => span.aheadAtMostMs))).toBeGreaterThanOrEqual(120_000);
	});

	test('past the bound (a header stepping on every answer): an attempt the forgotten offsets covered may have seen any', () => {
		const attemptAt = Date.now() - 1;
		answer(-600_000);
		for (let step = 0; step <= CLOCK_SPANS_LIMIT; step++) answer(step % 2 === 0 ? 60_000 : 0);
		const spans = apiClockSeenSince(context, attemptAt);
		expect(Math.min(...spans.map((span) => span.aheadAtLeastMs))).toBe(-Infinity);
		expect(Math.max(...spans.map((span) => span.aheadAtMostMs))).toBe(Infinity);
	});
});
