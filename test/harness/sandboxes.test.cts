/**
 * The harness's own promise: a sandbox it started is stopped when its describe block or its test
 * ends, so no test leaves a server behind. Each check reads, after the fact, whether a base URL
 * still answers.
 */
import { MANUAL_CLOCK, useSandbox, useTestSandboxes } from './sandboxes.cts';

/** Whether anything still answers at `baseUrl`. */
async function answers(baseUrl: string): Promise<boolean> {
	try {
		await fetch(`${baseUrl}/user-device/users`);
		return true;
	} catch {
		return false;
	}
}

const urls: Record<string, string> = {};

describe('useSandbox', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 5, resetBeforeEach: true });

	test('stands for the started sandbox in tests', async () => {
		urls.block = sandbox.baseUrl;
		expect(await answers(sandbox.baseUrl)).toBe(true);
		expect(sandbox.requestLog()).toHaveLength(1);
	});

	test('resets it before each test when asked', () => {
		expect(sandbox.requestLog()).toEqual([]);
	});
});

describe('useTestSandboxes', () => {
	const sandboxes = useTestSandboxes();

	test('starts a sandbox with the options given', async () => {
		const started = await sandboxes.start({ ...MANUAL_CLOCK, seedUsers: 3 });
		urls.test = started.baseUrl;
		expect(started.orgs.primary.userIds).toHaveLength(3);
		expect(await answers(started.baseUrl)).toBe(true);
	});

	test('stopped it once that test ended', async () => {
		expect(await answers(urls.test)).toBe(false);
	});
});

describe('after a describe block', () => {
	test('its sandbox is stopped', async () => {
		expect(await answers(urls.block)).toBe(false);
	});
});

describe('a stand-in read while its describe block is collected (before any hook ran)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 1 });
	let readTooEarly: unknown;
	try {
		readTooEarly = sandbox.baseUrl;
	} catch (error) {
		readTooEarly = error;
	}

	test('fails with a message saying so', () => {
		expect(String(readTooEarly)).toMatch(/before its describe block started it/);
	});
});
