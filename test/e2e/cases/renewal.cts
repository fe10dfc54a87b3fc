/**
 * Token renewal in n8n's REAL credential pipeline (2.41.1 in renewal.e2e.ts, 1.123.81 in
 * n8n-1x.e2e.ts; runs through a running n8n's REST API, the credential stored encrypted in n8n's
 * database and read from it on every use): the sandbox issues tokens that live 10 s, so one workflow
 * run spans three token lives. Exactly one refresh per token life, renewed before it expires (never
 * a 401 for it); the renewed token is saved with the credential and reused by the next run; a 401 on
 * a valid token renews once and retries once; a run after the token expired renews first.
 */
import {
	brief,
	code,
	manualWorkflow,
	N8nHome,
	N8nServer,
	push,
	REFRESH,
	type RunResult,
	type RuntimeLine,
	wait,
	waitFor,
} from '../support/index.cts';
import { startSandbox, type Sandbox } from '../../../sandbox/index.cts';
import type { LoggedRequest } from '../../../sandbox/index.cts';

const TOKEN_LIFE_SECONDS = 10;
const ACTIVE = 'GET /user-device/users';

const activeUsers = (name: string) =>
	push(name, { resource: 'user', operation: 'getActive', options: { idsOnly: true } });

/** The cases, in a describe block of their own, against the runtime of `line`. */
export const describeRenewal = (line: RuntimeLine) =>
	describe(`token renewal in a real n8n ${line}`, () => {
		let sandbox: Sandbox;
		let home: N8nHome;
		let server: N8nServer;
		const runs: Array<{ result: RunResult; requests: LoggedRequest[] }> = [];

		/** Runs a workflow and keeps the requests the sandbox logged during it. */
		async function run(workflowId: string) {
			const before = sandbox.requestLog().length;
			const result = await server.execute(workflowId);
			const entry = { result, requests: sandbox.requestLog().slice(before) };
			runs.push(entry);
			return entry;
		}

		beforeAll(async () => {
			sandbox = await startSandbox({
				port: 0,
				tokenLifetimeSeconds: TOKEN_LIFE_SECONDS,
				deliveryMs: 500,
			});
			home = await N8nHome.create({ line });
			await home.useSandbox(sandbox);
			server = await N8nServer.start(home, {
				workflows: [
					manualWorkflow('e2eRenewal', 'e2e: three token lives in one run', [
						[
							code('Five Items', 'return [1, 2, 3, 4, 5].map((n) => ({ json: { n } }));'),
							activeUsers('Read 1'),
							wait('Wait 1', TOKEN_LIFE_SECONDS + 1),
							activeUsers('Read 2'),
							wait('Wait 2', TOKEN_LIFE_SECONDS + 1),
							activeUsers('Read 3'),
						],
					]),
					manualWorkflow('e2eOneRead', 'e2e: one read', [[activeUsers('Read')]]),
				],
			});
		});

		afterAll(async () => {
			await server?.stop();
			await sandbox?.stop();
			home?.remove();
		});

		test('one run over three token lives: one refresh per life, each before the first call of that life, no 401', async () => {
			const { result, requests } = await run('e2eRenewal');
			expect(result.error).toBeUndefined();
			expect(result.status).toBe('success');
			for (const node of ['Read 1', 'Read 2', 'Read 3']) {
				expect(result.items(node)).toHaveLength(5);
			}
			// 5 items per read node; one refresh opens each token life.
			const group = [`${REFRESH} 200`, ...Array(5).fill(`${ACTIVE} 200`)];
			expect(requests.map(brief)).toEqual([...group, ...group, ...group]);
			const refreshes = requests.filter((request) => request.endpoint === REFRESH);
			for (let i = 1; i < refreshes.length; i++) {
				expect(refreshes[i].time - refreshes[i - 1].time).toBeGreaterThanOrEqual(
					TOKEN_LIFE_SECONDS * 1000,
				);
			}
			expect(
				requests
					.filter((request) => request.endpoint === ACTIVE)
					.every((request) => request.authorization === 'valid'),
			).toBe(true);
		});

		test('the renewed token is saved with the credential: the next run, within its life, makes no refresh; a 401 on it renews once and retries once', async () => {
			sandbox.addFault({ endpoint: ACTIVE, kind: 'unauthorized', times: 1 });
			const { result, requests } = await run('e2eOneRead');
			expect(result.status).toBe('success');
			expect(result.items('Read')[0].count).toBeGreaterThan(0);
			expect(requests.map(brief)).toEqual([`${ACTIVE} 401`, `${REFRESH} 200`, `${ACTIVE} 200`]);
			// The token n8n read from its database was still valid: the 401 came from the fault.
			expect(requests[0]).toMatchObject({ authorization: 'valid', fault: 'unauthorized' });
			expect(requests[2].authorization).toBe('valid');
		});

		test('a run after the stored token expired renews it first (no 401)', async () => {
			// The token n8n saved is the one its last refresh got: wait until it has expired on the sandbox's clock.
			const lastRefresh = sandbox
				.requestLog()
				.filter((request) => request.endpoint === REFRESH)
				.pop()!;
			const expiresAt = lastRefresh.time + TOKEN_LIFE_SECONDS * 1000;
			await waitFor(
				'the stored token to expire',
				() => sandbox.clock.now() >= expiresAt,
				(TOKEN_LIFE_SECONDS + 5) * 1000,
				100,
			);
			const { result, requests } = await run('e2eOneRead');
			expect(result.status).toBe('success');
			expect(requests.map(brief)).toEqual([`${REFRESH} 200`, `${ACTIVE} 200`]);
		});

		test('in all: the refresh token was never refused and no secret was logged', () => {
			const all = runs.flatMap((entry) => entry.requests);
			const refreshes = all.filter((request) => request.endpoint === REFRESH);
			expect(refreshes).toHaveLength(5);
			expect(refreshes.every((request) => request.status === 200)).toBe(true);
			for (const refresh of refreshes) {
				expect(refresh.body).toMatchObject({
					client_secret: '[redacted]',
					refresh_token: '[redacted]',
				});
			}
			expect(JSON.stringify(runs.map((entry) => entry.result.output))).not.toContain(
				sandbox.orgs.primary.clientSecret,
			);
			expect(JSON.stringify(runs.map((entry) => entry.result.output))).not.toContain(
				sandbox.orgs.primary.refreshToken,
			);
		});
	});
