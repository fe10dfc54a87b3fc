import type { Sandbox, SandboxOptions } from '../../sandbox/index.cts';
import {
	call,
	MANUAL_CLOCK,
	REFRESH,
	sendBody,
	tokenFor,
	useTestSandboxes,
} from '../harness/index.cts';

describe('sandbox latency (latencyMs + latencyJitterMs, real time, every public call)', () => {
	const sandboxes = useTestSandboxes();
	const start = (options: SandboxOptions = {}) =>
		sandboxes.start({ ...MANUAL_CLOCK, seedUsers: 5, ...options });

	test('off by default: no latencyMs in the log', async () => {
		const sandbox = await start();
		expect(sandbox.settings()).toMatchObject({ latencyMs: 0, latencyJitterMs: 0 });
		const token = await tokenFor(sandbox);
		await call(sandbox, 'GET', '/user/list', { token });
		expect(sandbox.requestLog().map((entry) => entry.latencyMs)).toEqual([undefined, undefined]);
	});

	test('a fixed 200 ms holds every answer, the token refresh included, at least 200 ms', async () => {
		const sandbox = await start({ latencyMs: 200 });
		let begun = Date.now();
		const token = await tokenFor(sandbox);
		expect(Date.now() - begun).toBeGreaterThanOrEqual(200);
		begun = Date.now();
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		expect(Date.now() - begun).toBeGreaterThanOrEqual(200);
		expect(sandbox.requestLog().map((entry) => [entry.endpoint, entry.latencyMs])).toEqual([
			[REFRESH, 200],
			['GET /user/list', 200],
		]);
	});

	test('the request takes effect when it arrives; only its answer waits', async () => {
		const sandbox = await start();
		const token = await tokenFor(sandbox);
		sandbox.configure({ latencyMs: 2000 });
		let answered = false;
		const pending = call(sandbox, 'POST', '/push-notification/send', {
			token,
			body: sendBody(sandbox.orgs.primary.usersOfKind('onePhone', 1)),
		}).then((answer) => {
			answered = true;
			return answer;
		});
		while (sandbox.requestLog().length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
		expect(sandbox.notifications()).toHaveLength(1);
		expect(sandbox.requestLog()[1]).toMatchObject({
			status: 202,
			latencyMs: 2000,
			notificationId: sandbox.notifications()[0].id,
		});
		expect(answered).toBe(false);
		expect((await pending).status).toBe(202);
	});

	test('jitter is seeded: same seed and order, same delays within latencyMs..latencyMs+jitter; reset replays them', async () => {
		const delays = async (sandbox: Sandbox) => {
			for (let i = 0; i < 12; i++) await call(sandbox, 'GET', '/user/list');
			return sandbox.requestLog().map((entry) => entry.latencyMs as number);
		};
		const first = await start({ seed: 7, latencyMs: 5, latencyJitterMs: 20 });
		const twin = await start({ seed: 7, latencyMs: 5, latencyJitterMs: 20 });
		const other = await start({ seed: 8, latencyMs: 5, latencyJitterMs: 20 });
		const sequence = await delays(first);
		expect(await delays(twin)).toEqual(sequence);
		expect(await delays(other)).not.toEqual(sequence);
		for (const delay of sequence) {
			expect(Number.isInteger(delay)).toBe(true);
			expect(delay).toBeGreaterThanOrEqual(5);
			expect(delay).toBeLessThanOrEqual(25);
		}
		expect(new Set(sequence).size).toBeGreaterThan(3);
		await first.reset();
		expect(await delays(first)).toEqual(sequence);
	});

	test('switchable at run time over the admin API (validated); admin calls are never delayed nor logged', async () => {
		const sandbox = await start();
		const changed = await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { latencyMs: 150, latencyJitterMs: 10 },
		});
		expect(changed.body.settings).toMatchObject({ latencyMs: 150, latencyJitterMs: 10 });
		const begun = Date.now();
		await call(sandbox, 'GET', '/user-device/users');
		expect(Date.now() - begun).toBeGreaterThanOrEqual(150);
		const [entry] = sandbox.requestLog();
		expect(entry.status).toBe(401);
		expect(entry.latencyMs).toBeGreaterThanOrEqual(150);
		expect(entry.latencyMs).toBeLessThanOrEqual(160);
		expect(
			(await call(sandbox, 'POST', '/__sandbox/settings', { body: { latencyMs: -1 } })).status,
		).toBe(400);
		expect(sandbox.requestLog()).toHaveLength(1);
	});

	test('latency adds to a delay fault, and a reset fault comes after the latency too', async () => {
		const sandbox = await start({ latencyMs: 100 });
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'delay', delayMs: 150 });
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'resetBefore', skip: 1 });
		let begun = Date.now();
		expect((await call(sandbox, 'GET', '/user/list')).status).toBe(401);
		expect(Date.now() - begun).toBeGreaterThanOrEqual(250);
		begun = Date.now();
		await expect(call(sandbox, 'GET', '/user/list')).rejects.toThrow();
		expect(Date.now() - begun).toBeGreaterThanOrEqual(100);
		expect(
			sandbox.requestLog().map((entry) => [entry.fault, entry.status, entry.latencyMs]),
		).toEqual([
			['delay', 401, 100],
			['resetBefore', 0, 100],
		]);
	});
});
