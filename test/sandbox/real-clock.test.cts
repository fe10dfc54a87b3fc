/**
 * The sandbox's real clock never goes back: a test that fakes `Date` and moves it ahead (the node's
 * run on the test clock) and then puts the real `Date` back must not see deliveries and sends the
 * sandbox made meanwhile move into its future.
 */
import { SandboxClock } from '../../sandbox/clock.cts';

describe("the sandbox's real clock", () => {
	afterEach(() => jest.useRealTimers());

	test('holds its latest time when the wall clock it reads steps back', () => {
		const clock = new SandboxClock('real');
		jest.useFakeTimers({ now: Date.now() + 5_000, doNotFake: ['nextTick', 'setImmediate'] });
		const ahead = clock.now();
		jest.useRealTimers();
		expect(clock.now()).toBeGreaterThanOrEqual(ahead);
	});

	test('still follows the wall clock forward, with its offset', () => {
		const clock = new SandboxClock('real');
		const before = Date.now();
		clock.advance(60_000);
		expect(clock.now()).toBeGreaterThanOrEqual(before + 60_000);
	});
});
