/**
 * The core suite (rows 1-4), on a sandbox in this process (100,000 users, a manual clock). The node
 * runs through n8n-core's own engine (devkit/engine.cts: WorkflowExecute; the trigger through
 * devkit/poll.cts, a PollContext run by TriggersAndPollers) with a fresh credential, so n8n's overhead
 * and the one token refresh are inside the figures; against it raw undici (bench/measure.cts) and
 * n8n's floor: a bare node making the same requests through n8n's HTTP helper. The sides of a case
 * are interleaved within each repetition, their order rotated; every measured run starts on a
 * freshly reset sandbox and reads its call counts.
 *
 * n8n-core must be loaded after N8N_USER_FOLDER is set: devkit/env first (jest loads it in its setup).
 */
import '../devkit/env.cts';

import type { IDataObject, IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { CompanionPush } from '../nodes/CompanionPush/CompanionPush.node';
import { CompanionPushTrigger } from '../nodes/CompanionPush/CompanionPushTrigger.node';
import type { Sandbox, SandboxSettings } from '../sandbox/index.cts';
import { REFRESH, USER_LIST } from '../devkit/endpoints.cts';
import { registerNodeType, runNode, runProbe } from '../devkit/engine.cts';
import type { CredentialStore } from '../devkit/engine.cts';
import { storeFor } from '../devkit/fixtures.cts';
import { createPollTarget, runPoll } from '../devkit/poll.cts';
import {
	batchesOf,
	BODY,
	countsSince,
	heapHeldBy,
	interleaved,
	mb,
	measured,
	measuredRaw,
	med,
	ms,
	rawClient,
	rawSends,
	ratio,
	sendBody,
	spread,
	TITLE,
	totalCalls,
} from './measure.cts';
import type { Counts, MemoryPeak, Timed } from './measure.cts';
import { constant, count, describeCalls, fmtK, sendCalls, verdictOf } from './report.cts';
import type { Figure, SuiteReport } from './report.cts';

const ACTION_TYPE = 'bench.companionPush';
const TRIGGER_TYPE = 'bench.companionPushTrigger';
registerNodeType(ACTION_TYPE, new CompanionPush());
registerNodeType(TRIGGER_TYPE, new CompanionPushTrigger());

export const FULL_SCALE = {
	/** Users of the sandbox's primary organization (the sandbox must be started with them). */
	users: 100_000,
	recipients: 100_000,
	batchSize: 1000,
	items: 1000,
	/** The trigger: sends settled before its activation, sends still moving, polls while they move and after. */
	pastSends: 10_000,
	moving: 5,
	movingPolls: 5,
	settledPolls: 5,
	reps: 7,
	triggerReps: 3,
};
export type Scale = typeof FULL_SCALE;

// ---- the node's sides (the latency suite runs them too) --------------------------------------------

export type NodeTimed = Timed & {
	/** The Companion Push node's own time as n8n records it (runData executionTime). */
	nodeMs: number;
	outputItems: number;
	error?: string;
};

const nodeTimed = ({
	value,
	memory: _memory,
	...timed
}: Timed & { value: Awaited<ReturnType<typeof runNode>>; memory?: MemoryPeak }): NodeTimed => ({
	...timed,
	nodeMs: value.run.data.resultData.runData['Companion Push']?.[0]?.executionTime ?? NaN,
	outputItems: value.items.length,
	error: value.error?.message,
});

/** A Send (One Send per Input Item) of `items`, the recipients read by the expression `userIds`, in one
 * workflow run; `options` are the node's Options; `credentialId`: see StoreOptions.id. */
export async function nodeSend(
	sandbox: Sandbox,
	items: IDataObject[],
	userIds: string,
	options: IDataObject = {},
	{ settings, credentialId }: { settings?: Partial<SandboxSettings>; credentialId?: string } = {},
): Promise<NodeTimed & { items: IDataObject[] }> {
	const credentials = storeFor(sandbox, { id: credentialId });
	const parameters = {
		resource: 'notification',
		operation: 'send',
		title: TITLE,
		body: BODY,
		audience: 'userIds',
		userIds,
		sendMode: 'perItem',
		options,
	};
	const timed = await measured(
		sandbox,
		() => runNode({ type: ACTION_TYPE, credentials, credentialId, items, parameters }),
		{ settings },
	);
	return { ...nodeTimed(timed), items: timed.value.items.map((item) => item.json) };
}

/** The node: one input item holding the ids, `userIds` = `{{ $json.ids }}`, batches of `batchSize`. */
export const nodeSendAudience = async (
	sandbox: Sandbox,
	userIds: string[],
	batchSize: number,
	settings?: Partial<SandboxSettings>,
): Promise<NodeTimed> =>
	withoutItems(
		await nodeSend(sandbox, [{ ids: userIds }], '={{ $json.ids }}', { batchSize }, { settings }),
	);

/** The node: one input item `{ id }` per user, `userIds` = `{{ $json.id }}`, one send each. */
export const nodeSendPerItem = async (
	sandbox: Sandbox,
	userIds: string[],
	settings?: Partial<SandboxSettings>,
): Promise<NodeTimed> =>
	withoutItems(
		await nodeSend(
			sandbox,
			userIds.map((id) => ({ id })),
			'={{ $json.id }}',
			{},
			{ settings },
		),
	);

const withoutItems = ({
	items: _items,
	...timed
}: NodeTimed & { items: IDataObject[] }): NodeTimed => timed;

/** A trigger (all three events) in an active workflow, polled the way n8n polls it (static data kept across polls). */
export function activeTrigger(store: CredentialStore): () => Promise<{ emitted: number }> {
	const target = createPollTarget({
		type: TRIGGER_TYPE,
		credentials: store,
		parameters: { events: ['notificationSettled', 'deliveryFailed', 'deliveryOpened'] },
	});
	return async () => {
		const outcome = await runPoll(target);
		if (outcome.error) throw outcome.error;
		return { emitted: outcome.items.length };
	};
}

/** Many sends at once (setup only), by raw undici over 4 connections. */
export async function makeRawSends(sandbox: Sandbox, bodies: string[]): Promise<void> {
	const client = rawClient(sandbox, 4);
	try {
		await client.sendAll(await client.token(), bodies, 4);
	} finally {
		await client.close();
	}
}

/** `count` sends of one recipient each (the org's users in turn), titled `<titlePrefix> <index>`. */
export const oneRecipientSends = (sandbox: Sandbox, count: number, titlePrefix: string) =>
	Array.from({ length: count }, (_, index) =>
		sendBody(
			[sandbox.orgs.primary.userIds[index % sandbox.orgs.primary.userIds.length]],
			`${titlePrefix} ${index}`,
		),
	);

// ---- n8n's floor -------------------------------------------------------------------------------------

type HelperRequest = (
	options: IHttpRequestOptions,
) => Promise<{ statusCode: number; body: IDataObject[] }>;

/**
 * n8n's floor: a bare node (the harness's probe, run by WorkflowExecute) whose `work` goes straight
 * through n8n's `httpRequestWithAuthentication`, the helper every verified community node must use,
 * with this package's credential (one renewal) and nothing else: no parameters, checks, retries or
 * output. Between the floor and raw undici is n8n's HTTP path; between the node and the floor, this
 * package (and the per-item work n8n does for it).
 */
async function floor(
	sandbox: Sandbox,
	work: (request: HelperRequest) => Promise<IDataObject[]>,
	sampleMemory = false,
): Promise<Timed & { items: number; memory?: MemoryPeak }> {
	const store = storeFor(sandbox);
	const probe = () =>
		runProbe(store, async function (this: IExecuteFunctions) {
			const request: HelperRequest = (options) =>
				this.helpers.httpRequestWithAuthentication.call(this, 'companionPushApi', {
					json: true,
					returnFullResponse: true,
					ignoreHttpStatusErrors: true,
					...options,
				});
			return [(await work(request)).map((json) => ({ json, pairedItem: { item: 0 } }))];
		});
	const { value, ...timed } = await measured(sandbox, probe, { sampleMemory });
	if (value.error) throw new Error(`the floor probe failed: ${value.error.message}`);
	return { ...timed, items: value.items.length };
}

const floorSend = (sandbox: Sandbox, batches: string[][]) =>
	floor(sandbox, async (request) => {
		for (const batch of batches) {
			const { statusCode } = await request({
				method: 'POST',
				url: `${sandbox.baseUrl}/push-notification/send`,
				body: { title: TITLE, body: BODY, target_user_ids: batch },
			});
			if (statusCode !== 202) throw new Error(`the send answered ${statusCode}`);
		}
		return [{ sends: batches.length }];
	});

/** Reads every page of the user list (1000 a page) until an empty one. */
async function allUsers(page: (skip: number) => Promise<IDataObject[]>): Promise<IDataObject[]> {
	const users: IDataObject[] = [];
	for (let next = await page(0); next.length > 0; next = await page(users.length))
		for (const user of next) users.push(user);
	return users;
}

const floorGetAllUsers = (sandbox: Sandbox) =>
	floor(
		sandbox,
		(request) =>
			allUsers(async (skip) => {
				const { statusCode, body } = await request({
					method: 'GET',
					url: `${sandbox.baseUrl}/user/list`,
					qs: { skip, limit: 1000 },
				});
				if (statusCode !== 200) throw new Error(`the user list answered ${statusCode}`);
				return body;
			}),
		true,
	);

// ---- the cases -----------------------------------------------------------------------------------------

/** Rows 1 and 2: the node, raw undici (one keep-alive connection, one POST after the other) and the floor. */
async function sendSides(
	sandbox: Sandbox,
	rep: number,
	node: () => Promise<NodeTimed>,
	batches: string[][],
) {
	return interleaved(rep, {
		node,
		raw: () => rawSends(sandbox, batches, 1),
		floor: () => floorSend(sandbox, batches),
	});
}

/** Row 3: User > Get Many with Return All, memory sampled while n8n runs it; the heap the same items
 * hold parsed from their JSON text alone (what V8 needs for the data itself), measured after the run. */
async function nodeGetAllUsers(sandbox: Sandbox) {
	const credentials = storeFor(sandbox);
	const run = () =>
		runNode({
			type: ACTION_TYPE,
			credentials,
			parameters: { resource: 'user', operation: 'getMany', returnAll: true },
		});
	const timed = await measured(sandbox, run, { sampleMemory: true });
	const text = JSON.stringify(timed.value.items.map((item) => item.json));
	return {
		...nodeTimed(timed),
		memory: timed.memory!,
		jsonBytes: Buffer.byteLength(text),
		parsedHeapBytes: heapHeldBy(() => JSON.parse(text)),
	};
}

/** Raw undici reading the same pages into one array, memory sampled the same way. */
const rawGetAllUsers = (sandbox: Sandbox) =>
	measuredRaw(
		sandbox,
		async (client) => {
			const token = await client.token();
			return allUsers(
				async (skip) =>
					(await client.get(`/user/list?skip=${skip}&limit=1000`, token)) as IDataObject[],
			);
		},
		1,
		{ sampleMemory: true },
	).then(({ value, ...timed }) => ({ ...timed, items: value.length }));

/**
 * Row 4: `pastSends` sends settle, two hours pass, the trigger is activated (first poll), then
 * `moving` sends go out that stay `sending` (first delivery round after 10 minutes) and the trigger
 * polls once a minute; before the last of these polls the credential is made due for renewal (as
 * after 55 minutes of real time: the transport renews by the real clock, the sandbox's is manual).
 * Half an hour later (all settled, the token still valid) it polls `settledPolls` more times.
 */
async function triggerPolls(sandbox: Sandbox, scale: Scale) {
	const MINUTE = 60_000;
	if (scale.movingPolls < 1 || scale.movingPolls > 8)
		throw new Error('polls while moving: 1 to 8 (the sends settle after 10 minutes)');
	await sandbox.reset();
	sandbox.configure({ deliveryMs: 1_000 });
	await makeRawSends(sandbox, oneRecipientSends(sandbox, scale.pastSends, 'Past'));
	await sandbox.clock.advance(2 * 60 * MINUTE);
	const store = storeFor(sandbox);
	const poll = activeTrigger(store);
	const pollCounted = async () => {
		const before = sandbox.counts();
		const { emitted } = await poll();
		return { calls: countsSince(before, sandbox.counts()), emitted };
	};
	const firstPoll = (await pollCounted()).calls;
	sandbox.configure({ deliveryMs: 10 * MINUTE });
	const recipients = batchesOf(sandbox.orgs.primary.userIds, 100);
	await makeRawSends(
		sandbox,
		Array.from({ length: scale.moving }, (_, index) =>
			sendBody(recipients[index % recipients.length], `Moving ${index}`),
		),
	);
	const everyMinute = async (polls: number, renewBeforeLast = false) => {
		const runs: Array<{ calls: Counts; emitted: number }> = [];
		for (let index = 0; index < polls; index++) {
			await sandbox.clock.advance(MINUTE);
			if (renewBeforeLast && index === polls - 1) store.get().data.accessTokenRenewAfter = 0;
			runs.push(await pollCounted());
		}
		return { perPoll: runs.map((run) => run.calls), emitted: runs.map((run) => run.emitted) };
	};
	const moving = await everyMinute(scale.movingPolls, true);
	await sandbox.clock.advance(30 * MINUTE);
	const settled = await everyMinute(scale.settledPolls);
	return { firstPoll, ...moving, settledPerPoll: settled.perPoll, settledEmitted: settled.emitted };
}

export type CoreResults = Awaited<ReturnType<typeof runCoreSuite>>;

export async function runCoreSuite(
	sandbox: Sandbox,
	scale: Scale,
	log: (line: string) => void = () => {},
) {
	const started = Date.now();
	const userIds = sandbox.orgs.primary.userIds;
	if (userIds.length < Math.max(scale.recipients, scale.items))
		throw new Error(
			`the sandbox has ${userIds.length} users; the scale needs ${Math.max(scale.recipients, scale.items)}`,
		);
	const audienceIds = userIds.slice(0, scale.recipients);
	const itemIds = userIds.slice(0, scale.items);

	// Warm-up (not counted): loads and JIT-compiles every path once, at a small size.
	const warm = userIds.slice(0, 2000);
	await sendSides(
		sandbox,
		0,
		() => nodeSendAudience(sandbox, warm, scale.batchSize),
		batchesOf(warm, scale.batchSize),
	);
	await sendSides(
		sandbox,
		0,
		() => nodeSendPerItem(sandbox, warm.slice(0, 20)),
		batchesOf(warm.slice(0, 20), 1),
	);

	const results = {
		scale,
		audience: [] as Array<Awaited<ReturnType<typeof sendSides>>>,
		perItem: [] as Array<Awaited<ReturnType<typeof sendSides>>>,
		users: [] as Array<{
			node: Awaited<ReturnType<typeof nodeGetAllUsers>>;
			raw: Awaited<ReturnType<typeof rawGetAllUsers>>;
			floor: Awaited<ReturnType<typeof floorGetAllUsers>>;
		}>,
		trigger: [] as Array<Awaited<ReturnType<typeof triggerPolls>>>,
		totalMs: 0,
	};
	for (let rep = 0; rep < scale.reps; rep++) {
		log(
			`rep ${rep + 1}/${scale.reps}: ${scale.recipients} recipients in one Send, ${scale.items} items one send each, get all ${scale.users} users`,
		);
		results.audience.push(
			await sendSides(
				sandbox,
				rep,
				() => nodeSendAudience(sandbox, audienceIds, scale.batchSize),
				batchesOf(audienceIds, scale.batchSize),
			),
		);
		results.perItem.push(
			await sendSides(sandbox, rep, () => nodeSendPerItem(sandbox, itemIds), batchesOf(itemIds, 1)),
		);
		results.users.push(
			await interleaved(rep, {
				node: () => nodeGetAllUsers(sandbox),
				raw: () => rawGetAllUsers(sandbox),
				floor: () => floorGetAllUsers(sandbox),
			}),
		);
	}
	// Last: it moves the sandbox clock forward (hours per run).
	for (let rep = 0; rep < scale.triggerReps; rep++) {
		log(
			`rep ${rep + 1}/${scale.triggerReps}: trigger, ${scale.pastSends} past sends, ${scale.moving} moving`,
		);
		results.trigger.push(await triggerPolls(sandbox, scale));
	}
	results.totalMs = Date.now() - started;
	return results;
}

// ---- the figures ---------------------------------------------------------------------------------------

const runsOf = (n: number) => `${n} run${n === 1 ? '' : 's'}`;

/** Rows 1 and 2: the node's calls (a goal), and its wall time against raw undici with n8n's floor
 * and CPU time (context: a verified node must send through n8n's HTTP helper, and the helper alone,
 * the floor, is already well above raw undici, so the package's own share is node / floor). */
function sendRows(
	figures: Figure[],
	row: string,
	runs: CoreResults['perItem'],
	sends: number,
	text: {
		calls: string;
		callsGoal: string;
		callsHow: string;
		wall: string;
		wallHow: string;
		contextHow: string;
	},
) {
	figures.push({
		row,
		figure: text.calls,
		...sendCalls(runs, sends),
		goal: text.callsGoal,
		how: `${text.callsHow} in each of ${runsOf(runs.length)}.`,
	});
	figures.push({
		row,
		figure: text.wall,
		measured: `${spread(
			runs.map((run) => run.node.ms / run.raw.ms),
			ratio,
		)}; node ${ms(med(runs, (run) => run.node.ms))}, raw ${ms(med(runs, (run) => run.raw.ms))}`,
		goal: '— (context)',
		verdict: '—',
		how: `${text.wallHow} Context, not a goal: a verified node must send through n8n's HTTP helper, which alone is above raw undici (the floor), so the package's own share is node / floor.`,
	});
	const connections = (['node', 'floor', 'raw'] as const)
		.map((side) => constant(runs.map((run) => run[side].connections)))
		.join('/');
	figures.push({
		row,
		figure: "context: n8n's HTTP helper floor / raw; node / floor; CPU time node / raw",
		measured: `floor ${spread(
			runs.map((run) => run.floor.ms / run.raw.ms),
			ratio,
		)}; node/floor ${spread(
			runs.map((run) => run.node.ms / run.floor.ms),
			ratio,
		)}; CPU ${spread(
			runs.map((run) => run.node.cpuMs / run.raw.cpuMs),
			ratio,
		)}; TCP connections node/floor/raw ${connections}`,
		goal: '—',
		verdict: '—',
		how: text.contextHow,
	});
}

export function coreFiguresOf(results: CoreResults): SuiteReport {
	const { scale } = results;
	const figures: Figure[] = [];
	const batches = Math.ceil(scale.recipients / scale.batchSize);
	sendRows(figures, '1', results.audience, batches, {
		calls: `${fmtK(scale.recipients)} recipients in one Send (batch ${scale.batchSize}): API calls of the node`,
		callsGoal: `exactly ${batches} sends, at most 1 refresh`,
		callsHow:
			'Sandbox request counts of one workflow run (Test Items -> Companion Push, userIds = {{ $json.ids }}), fresh credential without a token,',
		wall: `wall time, node / raw undici (same ${batches} POSTs, one token)`,
		wallHow:
			'performance.now() around the whole n8n workflow run (WorkflowExecute, both nodes) vs around a bare undici loop (one keep-alive connection: token, then one POST per batch, body JSON.stringify, answer parsed), run back to back in each repetition; ratio per repetition, median (min–max).',
		contextHow:
			'The floor is a bare probe node run by WorkflowExecute making the same POSTs through this.helpers.httpRequestWithAuthentication (the helper a verified node must use) with this credential, and nothing else; CPU time is process.cpuUsage() over the same runs (sandbox included, alike for both, and less disturbed by other work on the machine than wall time); connections are those the sandbox accepted (diagnostics channel net.server.socket).',
	});
	sendRows(figures, '2', results.perItem, scale.items, {
		calls: `${fmtK(scale.items)} input items, one send each: calls, refreshes`,
		callsGoal: `${scale.items} sends, refreshes <= 1`,
		callsHow: `Sandbox request counts of one workflow run with ${fmtK(scale.items)} items (userIds = {{ $json.id }}, One Send per Input Item),`,
		wall: `wall time, node / raw undici (${fmtK(scale.items)} sequential POSTs)`,
		wallHow:
			'As row 1: the whole workflow run vs a bare undici loop (token, then one POST per user), back to back; ratio per repetition, median (min–max).',
		contextHow: `As row 1: a bare probe node making the same ${fmtK(scale.items)} POSTs through httpRequestWithAuthentication in one loop.`,
	});

	// ---- 3: the spec's paging ends on an empty page (no total, no next-page marker): full pages + 1.
	const u = results.users.map((run) => run.node);
	const calls = Math.floor(scale.users / 1000) + 1;
	const uList = u.map((run) => count(run.counts, USER_LIST));
	figures.push({
		row: '3',
		figure: `Get all ${fmtK(scale.users)} users (Return All): calls`,
		measured: `${constant(uList)} user-list + ${constant(u.map((run) => count(run.counts, REFRESH)))} refresh; ${constant(u.map((run) => run.outputItems))} items`,
		goal: `${calls} user-list calls (the empty page ends the list)`,
		verdict: verdictOf(
			uList.every((n) => n === calls) && u.every((run) => run.outputItems === scale.users),
		),
		how: `Sandbox request counts of one workflow run of User > Get Many with Return All (pages of 1000), in each of ${runsOf(u.length)}. The spec's paging is "skip += page size until an empty array" and the list gives no total, so every full page is followed by one more call.`,
	});
	const jsonBytes = med(u, (run) => run.jsonBytes);
	const parsed = med(u, (run) => run.parsedHeapBytes);
	const of = (side: 'raw' | 'floor', key: keyof MemoryPeak) =>
		mb(med(results.users, (run) => run[side].memory?.[key] ?? NaN));
	const memory = (key: keyof MemoryPeak) =>
		`${spread(
			u.map((run) => run.memory[key]),
			mb,
		)} = ${ratio(med(u, (run) => run.memory[key]) / jsonBytes)}`;
	figures.push({
		row: '3',
		figure: 'peak memory above baseline vs JSON size of the items',
		measured: `JSON ${mb(jsonBytes)}; peak heapUsed ${memory('heapDelta')}; peak RSS ${memory('rssDelta')}; live after the run ${memory('retainedHeapDelta')}; references: the same items JSON.parse'd alone hold ${mb(parsed)} = ${ratio(parsed / jsonBytes)}; raw undici reading the same pages into one array peaks at heapUsed ${of('raw', 'heapDelta')}, RSS ${of('raw', 'rssDelta')}, live after ${of('raw', 'retainedHeapDelta')}; n8n's helper floor peaks at heapUsed ${of('floor', 'heapDelta')}, RSS ${of('floor', 'rssDelta')}; wall node ${ms(med(u, (run) => run.ms))}, floor ${ms(med(results.users, (run) => run.floor.ms))}, raw ${ms(med(results.users, (run) => run.raw.ms))}`,
		goal: '— (report)',
		verdict: '—',
		how: "process.memoryUsage() sampled every 5 ms during the workflow run, peak minus a baseline taken after a forced GC; JSON size = UTF-8 bytes of JSON.stringify of the output items' json; 'live after the run' is heapUsed above the baseline after a forced GC with the run's result still referenced; the references are the heap held by JSON.parse of that text alone (what V8 needs for the user objects themselves) a raw undici loop reading the same pages into one array, and n8n's floor (a bare probe node reading them through httpRequestWithAuthentication into output items, no checks), each sampled the same way and run back to back with the node (all include the in-process sandbox's share of the peak). The peak also counts garbage not yet collected: each page's answer text, its parsed and zod-checked copies, and the in-process sandbox's page answers.",
	});

	// ---- 4
	const t = results.trigger;
	const moving = t.flatMap((run) => run.perPoll);
	const settled = t.flatMap((run) => run.settledPerPoll);
	const maxCalls = Math.max(0, ...[...moving, ...settled].map(totalCalls));
	const shapes = new Map<string, number>();
	for (const calls of moving)
		shapes.set(describeCalls(calls), (shapes.get(describeCalls(calls)) ?? 0) + 1);
	const movingShapes = [...shapes].map(
		([shape, polls]) => `${shape} (${polls} poll${polls === 1 ? '' : 's'})`,
	);
	const settledCalls = [...new Set(settled.map(totalCalls))].sort((x, y) => x - y);
	figures.push({
		row: '4',
		figure: `Trigger, ${fmtK(scale.pastSends)} past sends and ${scale.moving} moving: calls per poll`,
		measured: `max ${maxCalls}. While moving: ${movingShapes.join('; ')}. After settling: ${settledCalls.join(' or ')} per poll (${constant(t.map((run) => run.settledEmitted.reduce((sum, n) => sum + n, 0)))} events emitted). Activation poll: ${describeCalls(t[0]?.firstPoll ?? {})}`,
		goal: '<= 7 per poll',
		verdict: verdictOf(moving.length + settled.length > 0 && maxCalls <= 7),
		how: `Sandbox counts around each poll, run as an active n8n workflow runs it (devkit/poll.cts: n8n-core's TriggersAndPollers.runPollFunction in a PollContext, 'trigger' mode, static data kept on the Workflow between polls), ${runsOf(t.length)}. The ${fmtK(scale.pastSends)} past sends were made and settled 2 h before the trigger's activation poll; then ${scale.moving} sends stay 'sending' (first delivery round after 10 min) for ${scale.movingPolls} polls a minute apart, the last one due to renew the hourly token (the credential's renew-after time set to now, as 55 min of real time would); ${scale.settledPolls} more polls run from 30 min later, when all have settled. Bound beyond this scenario: sends settled within the watch window (24 h) are re-read with back-off (1, 2, 4 ... 60 min), at most "Max Reads per Poll" (default 50) per poll.`,
	});

	const setup = [
		`- Sandbox (rows 1-4): in the same process (startSandbox, 127.0.0.1, ${fmtK(scale.users)} users, manual clock), reset before every measured run. Server time is inside every wall time alike.`,
		`- Repetitions (rows 1-4): ${scale.reps} per timed case (sides interleaved, order rotated), ${scale.triggerReps} for the trigger; after one warm-up of every path. ${(results.totalMs / 1000).toFixed(0)} s.`,
	];
	return { figures, misses: [], setup };
}
