/**
 * The core suite (rows 1-4): what the node asks of the API at scale, on a sandbox in this process
 * (100,000 users, a manual clock). The node runs through n8n-core's own engine (devkit/engine.cts:
 * WorkflowExecute; the trigger through devkit/poll.cts, a PollContext run by TriggersAndPollers)
 * with a fresh credential, so its one token refresh is inside the counts. Every measured run starts
 * on a freshly reset sandbox and reads its call counts. Times against other clients are measured in
 * a real n8n (bench/n8nSuite.cts), where both sides run alike.
 *
 * n8n-core must be loaded after N8N_USER_FOLDER is set: devkit/env first (jest loads it in its setup).
 */
import '../devkit/env.cts';

import type { IDataObject } from 'n8n-workflow';

import { CompanionPush } from '../nodes/CompanionPush/CompanionPush.node';
import { CompanionPushTrigger } from '../nodes/CompanionPush/CompanionPushTrigger.node';
import type { Sandbox, SandboxSettings } from '../sandbox/index.cts';
import { REFRESH, USER_LIST } from '../devkit/endpoints.cts';
import { registerNodeType, runNode } from '../devkit/engine.cts';
import type { CredentialStore } from '../devkit/engine.cts';
import { storeFor } from '../devkit/fixtures.cts';
import { createPollTarget, runPoll } from '../devkit/poll.cts';
import {
	countsSince,
	mb,
	measured,
	med,
	rawClient,
	ratio,
	sendBody,
	sendParameters,
	spread,
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
	reps: 3,
	triggerReps: 3,
};
export type Scale = typeof FULL_SCALE;

// ---- the node (the latency suite sends with it too) ---------------------------------------------------------

export type NodeTimed = Timed & { outputItems: number; error?: string };

/** A Send of `items`, the recipients read by the expression `userIds`, in one workflow run; `options`
 * are the node's Options; `credentialId`: see StoreOptions.id. */
export async function nodeSend(
	sandbox: Sandbox,
	items: IDataObject[],
	userIds: string,
	options: IDataObject = {},
	{ settings, credentialId }: { settings?: Partial<SandboxSettings>; credentialId?: string } = {},
): Promise<NodeTimed & { items: IDataObject[] }> {
	const credentials = storeFor(sandbox, { id: credentialId });
	const parameters = sendParameters(userIds, options);
	const { value, ...timed } = await measured(
		sandbox,
		() => runNode({ type: ACTION_TYPE, credentials, credentialId, items, parameters }),
		{ settings },
	);
	const json = value.items.map((item) => item.json);
	return { ...timed, outputItems: json.length, error: value.error?.message, items: json };
}

/** A trigger (all three events) in an active workflow, polled the way n8n polls it (static data kept across polls). */
function activeTrigger(store: CredentialStore): () => Promise<{ emitted: number }> {
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

/** Sends of one recipient each (the org's users in turn), titled `<titlePrefix> <index>`, made by raw
 * undici over 4 connections: setup, not a figure. */
async function makeRawSends(sandbox: Sandbox, sends: number, titlePrefix: string) {
	const { userIds } = sandbox.orgs.primary;
	const client = rawClient(sandbox, 4);
	try {
		const bodies = Array.from({ length: sends }, (_, index) =>
			sendBody([userIds[index % userIds.length]], `${titlePrefix} ${index}`),
		);
		await client.sendAll(await client.token(), bodies, 4);
	} finally {
		await client.close();
	}
}

// ---- the cases -----------------------------------------------------------------------------------------

/** Row 1: one input item holding the ids, `userIds` = `{{ $json.ids }}`, batches of `batchSize`. */
const sendAudience = async (sandbox: Sandbox, userIds: string[], batchSize: number) => {
	const { items: _items, ...run } = await nodeSend(
		sandbox,
		[{ ids: userIds }],
		'={{ $json.ids }}',
		{
			batchSize,
		},
	);
	return run;
};

/** Row 2: one input item `{ id }` per user, `userIds` = `{{ $json.id }}`, one send each. */
const sendPerItem = async (sandbox: Sandbox, userIds: string[]) => {
	const ids = userIds.map((id) => ({ id }));
	const { items: _items, ...run } = await nodeSend(sandbox, ids, '={{ $json.id }}');
	return run;
};

/** Row 3: User > Get Many with Return All, memory sampled while n8n runs it. */
async function getAllUsers(sandbox: Sandbox) {
	const credentials = storeFor(sandbox);
	const run = () =>
		runNode({
			type: ACTION_TYPE,
			credentials,
			parameters: { resource: 'user', operation: 'getMany', returnAll: true },
		});
	const { value, ...timed } = await measured(sandbox, run, { sampleMemory: true });
	return {
		...timed,
		memory: timed.memory!,
		outputItems: value.items.length,
		error: value.error?.message,
		jsonBytes: Buffer.byteLength(JSON.stringify(value.items.map((item) => item.json))),
	};
}

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
	await makeRawSends(sandbox, scale.pastSends, 'Past');
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
	// Each moving send to 100 users, so the trigger's reads cover deliveries to many phones.
	const client = rawClient(sandbox);
	const movingBodies = Array.from({ length: scale.moving }, (_, index) =>
		sendBody(sandbox.orgs.primary.userIds.slice(index * 100, (index + 1) * 100), `Moving ${index}`),
	);
	await client.sendAll(await client.token(), movingBodies).finally(() => client.close());
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
	const needed = Math.max(scale.recipients, scale.items);
	if (userIds.length < needed)
		throw new Error(`the sandbox has ${userIds.length} users; the scale needs ${needed}`);
	// Warm-up (not counted): loads and JIT-compiles every path once, at a small size.
	await sendAudience(sandbox, userIds.slice(0, 2000), scale.batchSize);
	await sendPerItem(sandbox, userIds.slice(0, 20));

	const results = {
		scale,
		audience: [] as NodeTimed[],
		perItem: [] as NodeTimed[],
		users: [] as Array<Awaited<ReturnType<typeof getAllUsers>>>,
		trigger: [] as Array<Awaited<ReturnType<typeof triggerPolls>>>,
		totalMs: 0,
	};
	for (let rep = 0; rep < scale.reps; rep++) {
		log(
			`rep ${rep + 1}/${scale.reps}: ${scale.recipients} recipients in one Send, ${scale.items} items one send each, get all ${scale.users} users`,
		);
		results.audience.push(
			await sendAudience(sandbox, userIds.slice(0, scale.recipients), scale.batchSize),
		);
		results.perItem.push(await sendPerItem(sandbox, userIds.slice(0, scale.items)));
		results.users.push(await getAllUsers(sandbox));
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

export function coreFiguresOf(results: CoreResults): SuiteReport {
	const { scale } = results;
	const batches = Math.ceil(scale.recipients / scale.batchSize);
	const figures: Figure[] = [
		{
			row: '1',
			figure: `${fmtK(scale.recipients)} recipients in one Send (batch ${scale.batchSize}): API calls of the node`,
			...sendCalls(results.audience, batches),
			goal: `exactly ${batches} sends, at most 1 refresh`,
			how: `Sandbox request counts of one workflow run (Test Items -> Companion Push, userIds = {{ $json.ids }}), fresh credential without a token, in each of ${runsOf(results.audience.length)}.`,
		},
		{
			row: '2',
			figure: `${fmtK(scale.items)} input items, one send each: API calls of the node`,
			...sendCalls(results.perItem, scale.items),
			goal: `exactly ${scale.items} sends, at most 1 refresh`,
			how: `As row 1, with ${fmtK(scale.items)} items (userIds = {{ $json.id }}, One Send per Input Item).`,
		},
	];

	// ---- 3: the spec's paging ends on an empty page (no total, no next-page marker): full pages + 1.
	const u = results.users;
	const calls = Math.floor(scale.users / 1000) + 1;
	const uList = u.map((run) => count(run.counts, USER_LIST));
	figures.push({
		row: '3',
		figure: `Get all ${fmtK(scale.users)} users (Return All): API calls`,
		measured: `${constant(uList)} user-list + ${constant(u.map((run) => count(run.counts, REFRESH)))} refresh; ${constant(u.map((run) => run.outputItems))} items`,
		goal: `${calls} user-list calls (the empty page ends the list)`,
		verdict: verdictOf(
			uList.every((n) => n === calls) && u.every((run) => run.outputItems === scale.users),
		),
		how: `Sandbox request counts of one workflow run of User > Get Many with Return All (pages of 1000), in each of ${runsOf(u.length)}. The spec's paging is "skip += page size until an empty array" and the list gives no total, so every full page is followed by one more call.`,
	});
	const jsonBytes = med(u, (run) => run.jsonBytes);
	const memory = (key: keyof MemoryPeak) =>
		`${spread(
			u.map((run) => run.memory[key]),
			mb,
		)} = ${ratio(med(u, (run) => run.memory[key]) / jsonBytes)}`;
	figures.push({
		row: '3',
		figure: 'peak memory above baseline vs JSON size of the items',
		measured: `JSON ${mb(jsonBytes)}; peak heapUsed ${memory('heapDelta')}; peak RSS ${memory('rssDelta')}; live after the run ${memory('retainedHeapDelta')}`,
		goal: '— (report)',
		verdict: '—',
		how: "process.memoryUsage() sampled every 5 ms during the workflow run, peak minus a baseline taken after a forced GC (the in-process sandbox's share included); JSON size = UTF-8 bytes of JSON.stringify of the output items' json; 'live after the run' is heapUsed above the baseline after a forced GC with the run's result still referenced (JavaScript objects take more heap than their JSON text). The peak also counts garbage not yet collected: each page's answer text and its parsed and checked copies.",
	});

	// ---- 4
	const t = results.trigger;
	const moving = t.flatMap((run) => run.perPoll);
	const settled = t.flatMap((run) => run.settledPerPoll);
	const maxCalls = Math.max(0, ...[...moving, ...settled].map(totalCalls));
	const shapes = new Map<string, number>();
	for (const shape of moving.map(describeCalls)) shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
	const movingShapes = [...shapes].map(
		([shape, polls]) => `${shape} (${polls} poll${polls === 1 ? '' : 's'})`,
	);
	const settledCalls = [...new Set(settled.map(totalCalls))].sort((x, y) => x - y);
	figures.push({
		row: '4',
		figure: `Trigger, ${fmtK(scale.pastSends)} past sends and ${scale.moving} moving: API calls per poll`,
		measured: `max ${maxCalls}. While moving: ${movingShapes.join('; ')}. After settling: ${settledCalls.join(' or ')} per poll (${constant(t.map((run) => run.settledEmitted.reduce((sum, n) => sum + n, 0)))} events emitted). Activation poll: ${describeCalls(t[0]?.firstPoll ?? {})}`,
		goal: `<= ${scale.moving + 2} per poll`,
		verdict: verdictOf(moving.length + settled.length > 0 && maxCalls <= scale.moving + 2),
		how: `Sandbox counts around each poll, run as an active n8n workflow runs it (devkit/poll.cts: n8n-core's TriggersAndPollers.runPollFunction in a PollContext, 'trigger' mode, static data kept on the Workflow between polls), ${runsOf(t.length)}. The ${fmtK(scale.pastSends)} past sends were made and settled 2 h before the trigger's activation poll; then ${scale.moving} sends stay 'sending' (first delivery round after 10 min) for ${scale.movingPolls} polls a minute apart, the last one due to renew the hourly token (the credential's renew-after time set to now, as 55 min of real time would); ${scale.settledPolls} more polls run from 30 min later, when all have settled. The goal: one list read, one detail read per send still moving, one renewal. Beyond this scenario, sends settled within the watch window (24 h) are re-read with back-off (1, 2, 4 ... 60 min), at most "Max Reads per Poll" (default 50) per poll.`,
	});

	const setup = [
		`- Sandbox (rows 1-4): in the same process (startSandbox, 127.0.0.1, ${fmtK(scale.users)} users, manual clock), reset before every measured run. ${scale.reps} runs of rows 1-3, ${scale.triggerReps} of row 4, after one warm-up of every path. ${(results.totalMs / 1000).toFixed(0)} s.`,
	];
	return { figures, misses: [], setup };
}
