/**
 * Sandboxes for tests: one for a describe block (useSandbox), or ones a test starts for itself
 * (useTestSandboxes). Each is stopped when its block or its test ends, also when a test failed, so
 * no test file starts or stops a sandbox by hand.
 */
import { startSandbox } from '../../sandbox/index.cts';
import type { Sandbox, SandboxOptions } from '../../sandbox/index.cts';

/** A fixed start keeps timestamps readable in failures. */
export const START = '2026-03-02T09:00:00.000Z';

/** The manual clock, from START: time moves only when a test moves it, so tests never wait. */
export const MANUAL_CLOCK: SandboxOptions = { clock: 'manual', startTime: START };

/** What the action node's tests run against: the real clock (the node compares times with
 * Date.now()), 60 users, deliveries settled within 20 ms. */
export const NODE_SANDBOX: SandboxOptions = { clock: 'real', seedUsers: 60, deliveryMs: 20 };

/** What the transport's tests run against: the manual clock, 60 users, deliveries settled at once. */
export const TRANSPORT_SANDBOX: SandboxOptions = { ...MANUAL_CLOCK, seedUsers: 60, deliveryMs: 0 };

export interface UseSandboxOptions extends SandboxOptions {
	/** Reset the sandbox (its sends, log, faults and settings) before each test of the block. */
	resetBeforeEach?: boolean;
}

/**
 * One sandbox for the describe block this is called in: started before its first test, stopped
 * after its last, reset before each test when asked. The object returned stands for that sandbox
 * in the block's tests and hooks (hooks declared after this call see it started); reading it
 * outside them is a mistake and throws.
 */
export function useSandbox(options: UseSandboxOptions = {}): Sandbox {
	const { resetBeforeEach, ...sandboxOptions } = options;
	let running: Sandbox | undefined;
	beforeAll(async () => {
		running = await startSandbox(sandboxOptions);
	});
	afterAll(async () => {
		await running?.stop();
	});
	if (resetBeforeEach) beforeEach(() => running?.reset());
	return standInFor(() => running);
}

/** Forwards every read to the sandbox `current` returns, methods bound to it. */
function standInFor(current: () => Sandbox | undefined): Sandbox {
	return new Proxy({} as Sandbox, {
		get(_target, key) {
			const sandbox = current();
			if (!sandbox)
				throw new Error(
					`The sandbox of useSandbox() was read (${String(key)}) before its describe block started it`,
				);
			const value = Reflect.get(sandbox, key);
			return typeof value === 'function' ? value.bind(sandbox) : value;
		},
		has: (_target, key) => key in (current() ?? {}),
	});
}

/** Something a test starts and the harness stops (a sandbox, a trigger fixture). */
export interface Stoppable {
	stop(): Promise<void>;
}

/**
 * Keeps what the tests of this describe block start (through the function returned) and stops it
 * once each test ends, also when the test failed. Stopping twice must be harmless (a test may stop
 * what it started itself).
 */
export function stoppedAfterEachTest<T extends Stoppable>(): (started: T) => T {
	const running: T[] = [];
	afterEach(async () => {
		const stopping = await Promise.allSettled(running.splice(0).map((started) => started.stop()));
		const failed = stopping.find(
			(outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
		);
		if (failed) throw failed.reason;
	});
	return (started) => {
		running.push(started);
		return started;
	};
}

/** Sandboxes the tests of this describe block start for themselves, each with its own options:
 * each one is stopped once its test ends, also when the test failed. */
export function useTestSandboxes(): { start(options?: SandboxOptions): Promise<Sandbox> } {
	const keep = stoppedAfterEachTest<Sandbox>();
	return { start: async (options = {}) => keep(await startSandbox(options)) };
}
