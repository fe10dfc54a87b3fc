/**
 * The real-n8n and queue-mode suites (rows 11-17) without a real n8n: what they build (the chains,
 * the workflows n8n imports, the ERP example with the HTTP Request node), how they read a run
 * (n8n's run data, the sandbox's log, Postgres's statement log), the delayed link they send through,
 * and their report, from made-up results at a small scale. `npm run bench -- --only n8n,queue` runs
 * them for real. Never times.
 */
import { Agent, request as undiciRequest } from 'undici';

import { chainRunOf, chainsOf, FULL_N8N_SCALE, loggedStatements } from '../../bench/n8nSuite.cts';
import type { ChainRun, ExecutionRun, N8nResults, N8nScale } from '../../bench/n8nSuite.cts';
import {
	benchWorkflow,
	erpWithHttpRequest,
	sendNodeName,
	titleOf,
} from '../../bench/n8nWorkflows.cts';
import type { ChainSpec } from '../../bench/n8nWorkflows.cts';
import { startDelayedLink } from '../../bench/linkDelay.cts';
import { n8nFiguresOf } from '../../bench/n8nSuite.cts';
import { parsePgTime, FULL_QUEUE_SCALE, queueFiguresOf } from '../../bench/queueSuite.cts';
import type { QueuePass, QueueResults } from '../../bench/queueSuite.cts';
import { resultsMarkdown } from '../../bench/run.cts';
import type { LoggedRequest } from '../../sandbox/index.cts';
import {
	REFRESH,
	SEND,
	SEND_LIST,
	useTestSandboxes,
	RunResult,
	exampleWorkflows,
} from '../harness/index.cts';

/** The fast mode: every part of the suite, a few sends each. */
const SMALL: N8nScale = {
	...FULL_N8N_SCALE,
	users: 50,
	latencies: [0, 40],
	itemCounts: [4, 10],
	parallelVariants: [{ items: 10, maxParallelRequests: 20 }],
	warmUpItems: 2,
	waitSends: 3,
	reps: 2,
	postgresReps: 1,
	credentialReadItems: 10,
};
const users = Array.from({ length: 50 }, (_, index) => `user${index}`);
const target = {
	credentialId: 'credHttps',
	credentialName: 'Https',
	baseUrl: 'https://127.0.0.1:2',
	token: 'TOKEN-HTTPS',
};

describe('the real-n8n suite: chains and workflows', () => {
	test('warm-ups first, then each case as a pair (order swapped every other repetition), the variants and the waits', () => {
		const even = chainsOf(SMALL, users, users.slice(10), 0);
		const odd = chainsOf(SMALL, users, users.slice(10), 1);
		expect(even.slice(0, 2).map((chain) => chain.name)).toEqual([
			'warm-up node',
			'warm-up httpRequest',
		]);
		expect(even.filter((chain) => chain.warmUp)).toHaveLength(2);
		const cases = (chains: ChainSpec[]) =>
			chains
				.filter((chain) => !chain.warmUp && !chain.maxParallelRequests && !chain.waitForFinalStatus)
				.map((chain) => chain.name);
		expect(cases(even)).toEqual(['node 4', 'httpRequest 4', 'node 10', 'httpRequest 10']);
		expect(cases(odd)).toEqual(['httpRequest 4', 'node 4', 'httpRequest 10', 'node 10']);
		expect(even.find((chain) => chain.name === 'node 10 at 20')).toMatchObject({
			side: 'node',
			maxParallelRequests: 20,
		});
		expect(even.find((chain) => chain.name === 'wait 3')).toMatchObject({
			waitForFinalStatus: true,
			userIds: users.slice(10, 13),
		});
		expect(even.filter((chain) => chain.waitForFinalStatus).map((chain) => chain.name)).toEqual([
			'wait 1',
			'wait 3',
		]);
		// On Postgres: the cases only.
		expect(cases(chainsOf(SMALL, users, users, 0, false))).toHaveLength(4);
		expect(chainsOf(SMALL, users, users, 0, false)).toHaveLength(6);
	});

	test('the workflow: each chain a Code node of its items into the Companion Push node or the HTTP Request node', () => {
		const chains = chainsOf(SMALL, users, users.slice(10), 0);
		const workflow = benchWorkflow('wf', chains, target);
		const node = (name: string) =>
			workflow.nodes.find((candidate: { name: string }) => candidate.name === name);
		const push = node(sendNodeName({ name: 'node 10 at 20' }));
		expect(push.type).toBe('n8n-nodes-companion-push.companionPush');
		expect(push.credentials).toEqual({ companionPushApi: { id: 'credHttps', name: 'Https' } });
		expect(push.parameters).toMatchObject({
			operation: 'send',
			sendMode: 'perItem',
			userIds: '={{ $json.to }}',
			title: 'Bench node 10 at 20',
			options: { maxParallelRequests: 20 },
		});
		expect(node(sendNodeName({ name: 'node 4' })).parameters.options).toEqual({});
		expect(node(sendNodeName({ name: 'wait 3' })).parameters.options).toEqual({
			waitForFinalStatus: true,
		});
		const http = node(sendNodeName({ name: 'httpRequest 4' }));
		expect(http.type).toBe('n8n-nodes-base.httpRequest');
		expect(http.parameters).toMatchObject({
			method: 'POST',
			url: 'https://127.0.0.1:2/push-notification/send',
			sendBody: true,
			specifyBody: 'json',
			options: {},
		});
		expect(http.parameters.headerParameters.parameters).toEqual([
			{ name: 'Authorization', value: 'Bearer TOKEN-HTTPS' },
		]);
		expect(http.parameters.jsonBody).toContain('"title": "Bench httpRequest 4"');
		expect(http.parameters.jsonBody).toContain(
			'"target_user_ids": [{{ JSON.stringify($json.to) }}]',
		);
		expect(node('Items httpRequest 4').parameters.jsCode).toBe(
			`return ${JSON.stringify(users.slice(0, 4).map((to) => ({ json: { to } })))};`,
		);
		expect(workflow.connections['Items httpRequest 4'].main[0][0].node).toBe(
			sendNodeName({ name: 'httpRequest 4' }),
		);
	});

	test('the ERP example with the HTTP Request node sends the message the example sends, with its retries', () => {
		const example = exampleWorkflows().find(
			(entry) => entry.workflow.id === 'cpExampleErpEvent',
		)!.workflow;
		const workflow = erpWithHttpRequest(
			example,
			'erpHttp',
			'erp-http',
			'https://127.0.0.1:3/push-notification/send',
			'TOKEN',
		);
		const byType = (type: string) =>
			workflow.nodes.find((node: { type: string }) => node.type === type);
		const webhook = byType('n8n-nodes-base.webhook');
		const http = byType('n8n-nodes-base.httpRequest');
		expect(webhook).toMatchObject({
			type: 'n8n-nodes-base.webhook',
			parameters: { httpMethod: 'POST', path: 'erp-http' },
		});
		expect(http).toMatchObject({
			type: 'n8n-nodes-base.httpRequest',
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 2000,
		});
		// The example's path to its Send (the check of the event, the answer to the ERP) leads to it.
		expect(http.name).toBe('Notify the User');
		expect(workflow.connections).toEqual(example.connections);
		// The body is an n8n expression: evaluate it as n8n would for an event.
		const expression = /^=\{\{([\s\S]*)\}\}$/.exec(http.parameters.jsonBody)![1];
		const evaluate = new Function('$json', `return ${expression};`) as (json: unknown) => string;
		expect(
			JSON.parse(evaluate({ body: { orderId: 'A-1', status: 'shipped', userId: 'u1' } })),
		).toEqual({
			title: 'Order A-1: shipped',
			body: 'Your order A-1 is now shipped. Tap to see the details.',
			target_user_ids: ['u1'],
			deeplink: 'companionapp://home',
		});
	});
});

describe('the real-n8n suite: reading a run', () => {
	test("a chain's figures come from n8n's run data, its sends by title, the calls within its window, the link and the CPU timeline", () => {
		const chain: ChainSpec = {
			name: 'wait 2',
			side: 'node',
			userIds: ['u1', 'u2'],
			waitForFinalStatus: true,
		};
		const run = {
			status: 'success',
			data: {
				resultData: {
					runData: {
						[sendNodeName(chain)]: [
							{
								startTime: 1000,
								executionTime: 500,
								data: {
									main: [
										[
											{ json: { finalStatusReached: true } },
											{ json: { finalStatusReached: false } },
										],
									],
								},
							},
						],
					},
				},
			},
		};
		const entry = (endpoint: string, time: number, title?: string, status = 202) =>
			({ endpoint, time, status, body: title ? { title } : undefined }) as unknown as LoggedRequest;
		const log = [
			entry(SEND, 900, 'Bench earlier'),
			entry(REFRESH, 1001, undefined, 200),
			entry(SEND, 1010, titleOf(chain)),
			entry(SEND, 1011, titleOf(chain), 429),
			entry(SEND, 1012, titleOf(chain)),
			entry(SEND_LIST, 1400, undefined, 200),
			entry(SEND_LIST, 1600, undefined, 200),
		];
		const link = {
			connectionsWithin: (from?: number, to?: number) => ({
				accepted: from === 1000 && to === 1500 ? 5 : -1,
				peakOpen: 2,
			}),
		};
		const cpu = { within: (from: number, to: number) => to - from };
		const site = { sandbox: { requestLog: () => log }, link };
		expect(chainRunOf(new RunResult(0, run, '', 9000), chain, site, cpu)).toMatchObject({
			ms: 500,
			items: 2,
			finalReached: 1,
			sends: 3,
			accepted: 2,
			refreshes: 1,
			listReads: 1,
			detailReads: 0,
			otherCalls: 0,
			connections: 5,
			peakOpen: 2,
			n8nCpuMs: 500,
		});
	});

	test('a chain the workflow never reached (an earlier node failed) has no figures and says why', () => {
		const chain: ChainSpec = {
			name: 'node 10 at 200',
			side: 'node',
			userIds: ['u1'],
			maxParallelRequests: 200,
		};
		const run = {
			status: 'error',
			data: {
				resultData: {
					error: { message: 'Max Parallel Requests must be a whole number from 1 to 100' },
					runData: {},
				},
			},
		};
		const none = { connectionsWithin: () => ({ accepted: 0, peakOpen: 0 }) };
		const chainRun = chainRunOf(
			new RunResult(1, run, '', 9000),
			chain,
			{ sandbox: { requestLog: () => [] }, link: none },
			{ within: () => 0 },
		);
		expect(chainRun).toMatchObject({
			name: 'node 10 at 200',
			maxParallelRequests: 200,
			sends: 0,
			error: 'did not run: Max Parallel Requests must be a whole number from 1 to 100',
		});
		expect(chainRun.ms).toBeNaN();
	});

	test("Postgres's statement log lines, and psql's timestamps", () => {
		const text = [
			'2026-11-23 21:30:01.123 UTC [1234] LOG:  execute <unnamed>: SELECT "CredentialsEntity"."id" FROM "credentials_entity" WHERE id = $1',
			"2026-11-23 21:30:01.123 UTC [1234] DETAIL:  parameters: $1 = 'x'",
			'2026-11-23 21:30:02.500 UTC [1235] LOG:  statement: BEGIN',
			'  a continuation line',
		].join('\n');
		expect(loggedStatements(text)).toEqual([
			{
				at: Date.parse('2026-11-23T21:30:01.123Z'),
				statement: 'SELECT "CredentialsEntity"."id" FROM "credentials_entity" WHERE id = $1',
			},
			{ at: Date.parse('2026-11-23T21:30:02.500Z'), statement: 'BEGIN' },
		]);
		expect(parsePgTime('2026-11-23 21:30:01.123+00')).toBe(Date.parse('2026-11-23T21:30:01.123Z'));
		expect(parsePgTime('2026-11-23 23:30:01.123+02')).toBe(Date.parse('2026-11-23T21:30:01.123Z'));
	});
});

describe('the delayed link', () => {
	const sandboxes = useTestSandboxes();

	test.each(['http', 'https'] as const)(
		'relays %s both ways untouched, and counts the connections and how many were open at once',
		async (scheme) => {
			// Answers held 300 ms: the three requests below overlap.
			const sandbox = await sandboxes.start({
				seedUsers: 2,
				latencyMs: 300,
				...(scheme === 'https' ? { tls: true as const } : {}),
			});
			const link = await startDelayedLink(sandbox.baseUrl, 0);
			const agent = new Agent({
				pipelining: 0,
				connect: sandbox.caCertificate ? { ca: sandbox.caCertificate } : {},
			});
			try {
				expect(link.baseUrl).toBe(`${scheme}://127.0.0.1:${link.port}`);
				link.setRoundTripMs(2);
				expect(link.roundTripMs).toBe(2);
				const from = Date.now();
				const answers = await Promise.all(
					[1, 2, 3].map(async () => {
						const answer = await undiciRequest(`${link.baseUrl}/user/list`, {
							dispatcher: agent,
							reset: true,
						});
						return { status: answer.statusCode, body: await answer.body.json() };
					}),
				);
				expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401]); // no token: the API's own answer came back
				expect(answers[0].body).toMatchObject({ ok: false });
				expect(sandbox.requestLog()).toHaveLength(3);
				expect(link.connectionsWithin(from, Date.now())).toEqual({ accepted: 3, peakOpen: 3 });
			} finally {
				await agent.close();
				await link.close();
			}
		},
	);

	test('a connection the sandbox closes without an answer fails at the client too', async () => {
		const sandbox = await sandboxes.start({ seedUsers: 2 });
		const link = await startDelayedLink(sandbox.baseUrl, 2);
		try {
			sandbox.addFault({ endpoint: REFRESH, kind: 'resetBefore' });
			const error = await undiciRequest(`${link.baseUrl}/auth/oauth/v2/refresh`, {
				method: 'POST',
				body: '{}',
			}).catch((caught: unknown) => caught);
			expect((error as { code?: string }).code).toBe('UND_ERR_SOCKET');
		} finally {
			await link.close();
		}
	});
});

/** A chain's run with figures that make the ratios below. */
function chainRun(name: string, fields: Partial<ChainRun>): ChainRun {
	const [side, items] = name.split(' ');
	return {
		name,
		side: side === 'httpRequest' ? 'httpRequest' : 'node',
		items: Number(items) || 0,
		ms: 100,
		sends: Number(items) || 0,
		accepted: Number(items) || 0,
		refreshes: 0,
		listReads: 0,
		detailReads: 0,
		otherCalls: 0,
		connections: Number(items) || 0,
		peakOpen: 1,
		n8nCpuMs: 10,
		maxParallelRequests: undefined,
		waitForFinalStatus: undefined,
		finalReached: undefined,
		error: undefined,
		...fields,
	};
}

function madeUpResults({ statementsLogged = 40 } = {}): N8nResults {
	const executions: ExecutionRun[] = [0, 40].flatMap((latencyMs) =>
		[0, 1].map((rep) => ({
			db: 'sqlite' as const,
			latencyMs,
			rep,
			cliMs: 9000,
			status: 'success',
			error: undefined,
			chains: [
				chainRun('node 4', { ms: 60 }),
				chainRun('httpRequest 4', { ms: 100 }),
				chainRun('node 10', { ms: 120, accepted: 9 }), // one send refused: the calls goal fails
				chainRun('httpRequest 10', { ms: 100 }),
				chainRun('node 10 at 20', { ms: 90, maxParallelRequests: 20 }),
				chainRun('wait 1', {
					ms: 3000,
					items: 1,
					accepted: 1,
					listReads: 3,
					finalReached: 1,
					waitForFinalStatus: true,
				}),
				chainRun('wait 3', {
					ms: 3300,
					items: 3,
					accepted: 3,
					listReads: 3,
					finalReached: 3,
					waitForFinalStatus: true,
				}),
			],
		})),
	);
	const reads = (items: number, selects: number, renewals: number) => ({
		items,
		renewals,
		selects,
		updates: renewals,
		tokenSaveSelects: 2 * renewals,
		statements: items === 1 ? 6 : statementsLogged,
		credentialStatements: { 'SELECT … FROM credentials_entity': selects },
		ms: 300,
		sends: items,
		error: undefined,
	});
	return {
		scale: SMALL,
		parallel: 50,
		executions,
		credentialReads: [reads(10, 3, 1), reads(1, 1, 0)],
		postgresSkipped: undefined,
		totalMs: 1000,
	};
}

describe('the reports of rows 11-17', () => {
	test('the node against the HTTP Request node is context; the calls, the waits and the credential reads are goals', () => {
		const { figures, misses } = n8nFiguresOf(madeUpResults());
		const find = (row: string, start: string) =>
			figures.find((f) => f.row === row && f.figure.startsWith(start));
		expect(find('11', '4 one-recipient sends, 40 ms round trip: node / n8n')).toMatchObject({
			measured: expect.stringMatching(
				/^0\.60x \(0\.60x–0\.60x\); node 60 ms, HTTP Request node 100 ms\. n8n CPU per request: node 2\.50 ms/,
			),
			goal: '— (context)',
			verdict: '—',
		});
		// The waiting the node's design imposes, in the context of the figure: 1 round of 3 round trips.
		expect(find('11', '4 one-recipient sends, 40 ms round trip: node / n8n')?.measured).toContain(
			'waiting alone: node 1 x 3 round trips = 120 ms (up to 50 at a time), HTTP Request node 3 = 120 ms (all at once)',
		);
		expect(find('11', '4 one-recipient sends, 40 ms round trip: API calls')?.verdict).toBe('pass');
		expect(find('11', '10 one-recipient sends, 0 ms round trip: API calls')).toMatchObject({
			measured: 'node 9 sends accepted + 0 refresh; HTTP Request node 10 sends accepted',
			verdict: 'FAIL',
		});
		expect(
			find('12', '10 sends, 40 ms round trip: the node at Max Parallel Requests 20')?.measured,
		).toMatch(
			/^90 ms: 0\.75x \(0\.75x–0\.75x\) of the node at its defaults \(up to 50 at once\), 0\.90x \(0\.90x–0\.90x\) of the HTTP Request node/,
		);
		expect(
			find('14', 'Wait for Final Status on 3 sends (one Send run), 40 ms round trip: reads'),
		).toMatchObject({
			measured: expect.stringMatching(/^1\.00 \(1\.00–1\.00\): 3 list page/),
			verdict: 'FAIL',
		});
		expect(
			find('14', 'Wait for Final Status on 3 sends (one Send run), 40 ms round trip: its time'),
		).toMatchObject({ measured: expect.stringMatching(/^2\.20x/), verdict: 'pass' });
		expect(find('15', 'Credential reads')).toMatchObject({
			measured: expect.stringMatching(/^1 with 1 renewal/),
			verdict: 'pass',
		});
		expect(misses.filter((miss) => miss.startsWith('Row 14'))).toHaveLength(2);
		expect(misses.some((miss) => miss.startsWith('Row 11'))).toBe(false);
	});

	test('credential reads prove nothing when no statement of the run was logged', () => {
		const { figures, misses } = n8nFiguresOf(madeUpResults({ statementsLogged: 0 }));
		expect(figures.find((f) => f.row === '15')?.verdict).toBe('FAIL');
		expect(misses.some((miss) => miss.startsWith('Row 15'))).toBe(true);
	});

	test('queue mode: executions per second, the ERP example over the HTTP Request workflow', () => {
		const pass = (
			side: QueuePass['side'],
			rep: number,
			executionsPerSecond: number,
			eventsSentTwice = 0,
		): QueuePass => ({
			side,
			rep,
			events: 300,
			postAnswers: { 200: 300 },
			ms: 30_000,
			executionsPerSecond,
			executions: { success: 300 },
			eventsSent: 300,
			eventsSentTwice,
			clusterCpuMs: 30_000,
			postgresCpuMs: 6000,
		});
		const results = (nodeRate: number, twice = 0): QueueResults => ({
			scale: FULL_QUEUE_SCALE,
			passes: [
				pass('node', 0, nodeRate, twice),
				pass('nodeWithoutKey', 0, 9.8),
				pass('httpRequest', 0, 10),
				pass('httpRequest', 1, 10),
				pass('nodeWithoutKey', 1, 9.8),
				pass('node', 1, nodeRate),
			],
			rssMb: { main: 500 },
			clusterStartMs: 20_000,
			totalMs: 300_000,
			cores: 2,
		});
		expect(queueFiguresOf(results(9.5)).figures[0]).toMatchObject({
			row: '17',
			measured: expect.stringMatching(
				/^0\.95x: 9\.5 \(9\.5–9\.5\) vs 10\.0 \(10\.0–10\.0\) executions\/s/,
			),
			verdict: 'pass',
		});
		const slower = queueFiguresOf(results(8));
		expect(slower.figures[0].verdict).toBe('FAIL');
		expect(slower.misses[0]).toMatch(/^Row 17 \(0\.80x\)/);
		expect(slower.misses[0]).toContain(
			'Without its key the example runs 0.98x of the HTTP Request workflow',
		);
		// 1.2 of 2 cores busy: the cause named is waiting, not CPU.
		expect(slower.misses[0]).toContain('its executions waited rather than worked');
		const busier = queueFiguresOf({
			...results(8),
			passes: results(8).passes.map((pass) => ({ ...pass, clusterCpuMs: 48_000 })),
		});
		expect(busier.misses[0]).toContain('so the rate follows the CPU per execution');
		// Fast enough, but an event sent twice: the goal is missed.
		const twice = queueFiguresOf(results(9.5, 1));
		expect(twice.figures[0]).toMatchObject({ verdict: 'FAIL' });
		expect(twice.misses[0]).toMatch(/^Row 17 \(0\.95x, not every event sent once\)/);
		expect(slower.figures[1].measured).toMatch(
			/^the ERP example without its Idempotency Key: 9\.8/,
		);
		const markdown = resultsMarkdown(
			{ n8n: madeUpResults(), queue: results(9.5) },
			{ date: 'today', node: process.version, machine: 'test', versions: {} },
		);
		expect(markdown).toContain('- Real n8n (rows 11-15)');
		expect(markdown).toContain('- Queue mode (row 17)');
		expect(markdown).toContain('| 17 |');
	});
});
