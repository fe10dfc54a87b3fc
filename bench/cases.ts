/**
 * The benchmark cases, each a function of its scale so that `test/bench/bench-smoke.test.ts` can
 * run them small. Node sides run through n8n-core's own engine (devkit/engine.ts:
 * WorkflowExecute for the action node; devkit/poll.ts, a PollContext run by TriggersAndPollers, for the trigger),
 * with a fresh credential (no access token yet), so n8n's overhead and the one token refresh are
 * inside the figures. Every case starts on a freshly reset sandbox and reads its call counts.
 *
 * n8n-core must be loaded after N8N_USER_FOLDER is set: import devkit/env first (run.ts does; jest
 * loads it in its setupFiles).
 */
import '../devkit/env';

import { performance } from 'node:perf_hooks';

import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { CompanionPush } from '../nodes/CompanionPush/CompanionPush.node';
import { CompanionPushTrigger } from '../nodes/CompanionPush/CompanionPushTrigger.node';
import { parseUserIds, toBatches, uniqueUserIds } from '../nodes/CompanionPush/helpers/recipients';
import type { Sandbox, SandboxSettings } from '../sandbox';
import { registerNodeType, runNode, runProbe } from '../devkit/engine';
import type { CredentialStore } from '../devkit/engine';
import { storeFor } from '../devkit/fixtures';
import { createPollTarget, runPoll } from '../devkit/poll';
import { countsSince, heapHeldBy, measured, withMemoryPeak } from './measure';
import type { Counts, MemoryPeak } from './measure';
import { rawClient } from './raw';
import type { RawClient } from './raw';

export const ACTION_TYPE = 'bench.companionPush';
export const TRIGGER_TYPE = 'bench.companionPushTrigger';
registerNodeType(ACTION_TYPE, new CompanionPush());
registerNodeType(TRIGGER_TYPE, new CompanionPushTrigger());

export const TITLE = 'Benchmark';
export const BODY = 'A notification sent by npm run bench';

export function batchesOf<T>(values: T[], size: number): T[][] {
	const batches: T[][] = [];
	for (let start = 0; start < values.length; start += size) batches.push(values.slice(start, start + size));
	return batches;
}

export interface Timed {
	/** Wall time. */
	ms: number;
	/** Process CPU time (user + system) meanwhile, sandbox included. */
	cpuMs: number;
	/** TCP connections the sandbox accepted meanwhile. */
	connections: number;
	/** The most requests the sandbox had in flight at once (an answer held by its latency included). */
	peakInFlight: number;
	counts: Counts;
}

export interface NodeTimed extends Timed {
	/** The Companion Push node's own time as n8n records it (runData executionTime). */
	nodeMs: number;
	outputItems: number;
	error?: string;
}

/** The figures of a measured run, without its value. */
export function timedOf(timed: Timed): Timed {
	return { ms: timed.ms, cpuMs: timed.cpuMs, connections: timed.connections, peakInFlight: timed.peakInFlight, counts: timed.counts };
}

/** `body` measured (as every side is) with a raw client of its own (`connections` keep-alive
 * connections, 1 by default), closed afterwards. */
export async function measuredRaw<T>(
	sandbox: Sandbox,
	body: (client: RawClient) => Promise<T>,
	{ connections = 1, settings }: { connections?: number; settings?: Partial<SandboxSettings> } = {},
): Promise<Timed & { value: T }> {
	const client = rawClient(sandbox, connections);
	try {
		return await measured(sandbox, () => body(client), settings);
	} finally {
		await client.close();
	}
}

function nodeResult(result: Awaited<ReturnType<typeof runNode>>, timed: Timed): NodeTimed {
	const task = result.run.data.resultData.runData['Companion Push']?.[0];
	return {
		...timedOf(timed),
		nodeMs: task?.executionTime ?? NaN,
		outputItems: result.items.length,
		error: result.error?.message,
	};
}

/**
 * n8n's floor: the same POSTs made by a bare node (the harness's probe, run by WorkflowExecute)
 * straight through n8n's `httpRequestWithAuthentication`, the helper every verified community node
 * must use, with this package's credential (one renewal) and nothing else: no parameters, checks,
 * retries or output. What is left between the floor and raw undici is n8n's HTTP path; what is
 * between the node and the floor is this package (and the per-item work n8n does for it).
 */
export async function floorSend(sandbox: Sandbox, batches: string[][]): Promise<Timed> {
	const store = storeFor(sandbox);
	const url = `${sandbox.baseUrl}/push-notification/send`;
	const timed = await measured(sandbox, () =>
		runProbe(store, async function (this: IExecuteFunctions) {
			for (const batch of batches) {
				const response = (await this.helpers.httpRequestWithAuthentication.call(this, 'companionPushApi', {
					method: 'POST',
					url,
					body: { title: TITLE, body: BODY, target_user_ids: batch },
					json: true,
					returnFullResponse: true,
					ignoreHttpStatusErrors: true,
				})) as { statusCode: number };
				if (response.statusCode !== 202) throw new Error(`the send answered ${response.statusCode}`);
			}
			return [[{ json: { sends: batches.length } }]];
		}),
	);
	if (timed.value.error) throw new Error(`the floor probe failed: ${timed.value.error.message}`);
	return timedOf(timed);
}

// ---- 1 and 5: one Send to a large audience ----------------------------------------------------

/** How a node side runs: the sandbox's settings for it, and the credential's id (see StoreOptions.id). */
export interface NodeSideOptions {
	settings?: Partial<SandboxSettings>;
	credentialId?: string;
}

/** A Send (One Send per Input Item) of `items`, the recipients read by `userIds`, in one workflow
 * run; `options` are the node's Options (none: its defaults). */
export async function nodeSend(
	sandbox: Sandbox,
	items: IDataObject[],
	userIds: string,
	options?: IDataObject,
	{ settings, credentialId }: NodeSideOptions = {},
): Promise<NodeTimed & { items: IDataObject[] }> {
	const store = storeFor(sandbox, { id: credentialId });
	const timed = await measured(
		sandbox,
		() =>
			runNode({
				type: ACTION_TYPE,
				credentials: store,
				credentialId,
				items,
				parameters: {
					resource: 'notification',
					operation: 'send',
					title: TITLE,
					body: BODY,
					audience: 'userIds',
					userIds,
					sendMode: 'perItem',
					...(options ? { options } : {}),
				},
			}),
		settings,
	);
	return { ...nodeResult(timed.value, timed), items: timed.value.items.map((item) => item.json) };
}

/** The figures of a node side, without its output items. */
const withoutItems = ({ items: _items, ...timed }: NodeTimed & { items: IDataObject[] }): NodeTimed => timed;

/** The node: one input item holding the ids, `userIds` = `{{ $json.ids }}`, batches of `batchSize`. */
export async function nodeSendAudience(sandbox: Sandbox, userIds: string[], batchSize: number, side?: NodeSideOptions): Promise<NodeTimed> {
	return withoutItems(await nodeSend(sandbox, [{ ids: userIds }], '={{ $json.ids }}', { batchSize }, side));
}

/** Raw undici: one token, then one POST per batch, one after the other. */
export async function rawSendAudience(sandbox: Sandbox, userIds: string[], batchSize: number): Promise<Timed> {
	const timed = await measuredRaw(sandbox, async (client) => {
		const token = await client.token();
		for (let start = 0; start < userIds.length; start += batchSize) {
			const body = JSON.stringify({ title: TITLE, body: BODY, target_user_ids: userIds.slice(start, start + batchSize) });
			await client.post('/push-notification/send', token, body);
		}
	});
	return timedOf(timed);
}

/**
 * Pieces of row 1's node time measured alone (CPU-bound, no I/O): the package's own recipient work
 * (parse the expression's array, de-duplicate, split into batches), and the harness's input node
 * (its items go through JSON text: a cost of the test scaffold, not of n8n or the package).
 */
export function audiencePieces(userIds: string[], batchSize: number): { recipientsMs: number; inputJsonMs: number } {
	let started = performance.now();
	const parsed = parseUserIds(userIds);
	if ('problem' in parsed) throw new Error(parsed.problem);
	toBatches(uniqueUserIds(parsed.userIds), batchSize);
	const recipientsMs = performance.now() - started;
	started = performance.now();
	JSON.parse(JSON.stringify([{ ids: userIds }]));
	return { recipientsMs, inputJsonMs: performance.now() - started };
}

// ---- 2: one send per input item ---------------------------------------------------------------

/** The node: `items` input items, each `{ id }`, `userIds` = `{{ $json.id }}`, one send each. */
export async function nodeSendPerItem(sandbox: Sandbox, userIds: string[], side?: NodeSideOptions): Promise<NodeTimed> {
	return withoutItems(await nodeSend(sandbox, userIds.map((id) => ({ id })), '={{ $json.id }}', undefined, side));
}

/** Raw undici: one token, then one POST per user (`target_user_ids: [id]`), one after the other. */
export function rawSendPerItem(sandbox: Sandbox, userIds: string[]): Promise<Timed> {
	return rawSendAudience(sandbox, userIds, 1);
}

// ---- 3: get all users -------------------------------------------------------------------------

export interface GetAllUsersResult extends NodeTimed {
	/** JSON size of the items' json (UTF-8 bytes), the data the workflow holds afterwards. */
	jsonBytes: number;
	memory: MemoryPeak;
	/** Heap held by the same items parsed from their JSON text and nothing else: what V8 needs for
	 * the data itself, a reference for the peak. */
	parsedHeapBytes: number;
}

/** User > Get Many with Return All; memory sampled while n8n runs the workflow. */
export async function nodeGetAllUsers(sandbox: Sandbox): Promise<GetAllUsersResult> {
	const { result, text } = await runGetAllUsers(sandbox);
	// The run is gone here: the reference is measured on its own.
	return { ...result, parsedHeapBytes: heapHeldBy(() => JSON.parse(text)) };
}

async function runGetAllUsers(sandbox: Sandbox): Promise<{ result: Omit<GetAllUsersResult, 'parsedHeapBytes'>; text: string }> {
	const store = storeFor(sandbox);
	let memory!: MemoryPeak;
	const timed = await measured(sandbox, async () => {
		const run = await withMemoryPeak(() =>
			runNode({
				type: ACTION_TYPE,
				credentials: store,
				parameters: { resource: 'user', operation: 'getMany', returnAll: true },
			}),
		);
		memory = run.memory;
		return run.value;
	});
	const text = JSON.stringify(timed.value.items.map((item) => item.json));
	return { result: { ...nodeResult(timed.value, timed), jsonBytes: Buffer.byteLength(text), memory }, text };
}

/** n8n's floor for row 3: a bare probe node reading the same pages through n8n's
 * httpRequestWithAuthentication into output items, nothing else (no checks, no schema). */
export async function floorGetAllUsers(sandbox: Sandbox): Promise<Timed & { users: number; memory: MemoryPeak }> {
	const store = storeFor(sandbox);
	let memory!: MemoryPeak;
	const timed = await measured(sandbox, async () => {
		const run = await withMemoryPeak(() =>
			runProbe(store, async function (this: IExecuteFunctions) {
				const users: IDataObject[] = [];
				for (;;) {
					const response = (await this.helpers.httpRequestWithAuthentication.call(this, 'companionPushApi', {
						method: 'GET',
						url: `${sandbox.baseUrl}/user/list`,
						qs: { skip: users.length, limit: 1000 },
						json: true,
						returnFullResponse: true,
						ignoreHttpStatusErrors: true,
					})) as { statusCode: number; body: IDataObject[] };
					if (response.statusCode !== 200) throw new Error(`the user list answered ${response.statusCode}`);
					if (response.body.length === 0) break;
					for (const user of response.body) users.push(user);
				}
				return [users.map((json) => ({ json, pairedItem: { item: 0 } }))];
			}),
		);
		memory = run.memory;
		if (run.value.error) throw new Error(`the floor probe failed: ${run.value.error.message}`);
		return run.value.items.length;
	});
	return { ...timedOf(timed), users: timed.value, memory };
}

/** Raw undici reading the same pages into one array (memory sampled the same way): the memory
 * reference for the node, the in-process sandbox's share included alike. */
export async function rawGetAllUsers(sandbox: Sandbox): Promise<Timed & { users: number; memory: MemoryPeak }> {
	let memory!: MemoryPeak;
	const timed = await measuredRaw(sandbox, async (client) => {
		const run = await withMemoryPeak(async () => {
			const token = await client.token();
			const users: unknown[] = [];
			for (;;) {
				const page = (await client.get(`/user/list?skip=${users.length}&limit=1000`, token)) as unknown[];
				if (page.length === 0) return users;
				for (const user of page) users.push(user);
			}
		});
		memory = run.memory;
		return run.value.length;
	});
	return { ...timedOf(timed), users: timed.value, memory };
}

// ---- 4: the trigger ---------------------------------------------------------------------------

export interface TriggerScenario {
	/** Sends made before the trigger was activated (settled long ago). */
	pastSends: number;
	/** Sends made after its first poll, still `sending` for all measured polls (delivery takes 10 min). */
	moving: number;
	/** Polls measured while they move, one a minute by the sandbox clock (at most 8). The last of
	 * them is due to renew the access token, as one poll an hour is. */
	polls: number;
	/** Polls measured after they have settled (one a minute, from half an hour later). */
	settledPolls?: number;
	/** Recipients of each moving send. */
	movingRecipients?: number;
}

export interface TriggerResult {
	/** Calls of the activation poll (the first, which records the starting point and emits nothing). */
	firstPoll: Counts;
	/** Calls of each poll while the sends move (the last one renews the token). */
	perPoll: Counts[];
	/** Items each of those polls emitted. */
	emitted: number[];
	/** Calls of each poll after the sends settled, and the items each emitted. */
	settledPerPoll: Counts[];
	settledEmitted: number[];
	/** Time to create the past sends (setup, not measured). */
	setupMs: number;
}

/** A trigger in an active workflow, polled the way n8n polls it (devkit/poll.ts: a PollContext
 * in 'trigger' mode through TriggersAndPollers.runPollFunction, static data kept across polls). */
export function activeTrigger(store: CredentialStore) {
	const target = createPollTarget({
		type: TRIGGER_TYPE,
		credentials: store,
		parameters: { events: ['notificationSettled', 'deliveryFailed', 'deliveryOpened'] },
	});
	return async (): Promise<{ emitted: number }> => {
		const outcome = await runPoll(target);
		if (outcome.error) throw outcome.error;
		return { emitted: outcome.items.length };
	};
}

/** Many sends at once (setup only), made with a raw client over a few connections in parallel: one
 * recipient each (the org's users in turn), titled `<titlePrefix> <index>`. */
export async function makeRawSends(sandbox: Sandbox, count: number, titlePrefix: string): Promise<void> {
	const client = rawClient(sandbox, 4);
	try {
		const token = await client.token();
		const userIds = sandbox.orgs.primary.userIds;
		let next = 0;
		const worker = async () => {
			while (next < count) {
				const index = next++;
				const body = JSON.stringify({ title: `${titlePrefix} ${index}`, body: BODY, target_user_ids: [userIds[index % userIds.length]] });
				await client.post('/push-notification/send', token, body);
			}
		};
		await Promise.all([worker(), worker(), worker(), worker()]);
	} finally {
		await client.close();
	}
}

/**
 * `pastSends` sends settle, two hours pass, the trigger is activated (first poll), then `moving`
 * sends go out that stay `sending` (first delivery round after 10 minutes) and the trigger polls
 * once a minute; before the last of these polls the credential is made due for renewal (as after
 * 55 minutes of real time: the transport renews by the real clock, the sandbox's clock is manual).
 * Half an hour later (all settled, the token still valid) it polls `settledPolls` more times.
 */
export async function triggerPolls(sandbox: Sandbox, scenario: TriggerScenario): Promise<TriggerResult> {
	const MINUTE = 60_000;
	await sandbox.reset();
	const setupStarted = Date.now();
	sandbox.configure({ deliveryMs: 1_000 });
	await makeRawSends(sandbox, scenario.pastSends, 'Past');
	const setupMs = Date.now() - setupStarted;
	await sandbox.clock.advance(2 * 60 * MINUTE);

	if (scenario.polls < 1 || scenario.polls > 8) throw new Error('polls while moving: 1 to 8 (the sends settle after 10 minutes)');
	const store = storeFor(sandbox);
	const poll = activeTrigger(store);
	const before = sandbox.counts();
	await poll();
	const firstPoll = countsSince(before, sandbox.counts());

	sandbox.configure({ deliveryMs: 10 * MINUTE });
	const client = rawClient(sandbox);
	try {
		const token = await client.token();
		const recipients = batchesOf(sandbox.orgs.primary.userIds, scenario.movingRecipients ?? 100);
		for (let index = 0; index < scenario.moving; index++) {
			const body = JSON.stringify({ title: `Moving ${index}`, body: BODY, target_user_ids: recipients[index % recipients.length] });
			await client.post('/push-notification/send', token, body);
		}
	} finally {
		await client.close();
	}

	const pollEveryMinute = async (polls: number, renewBeforeLast = false) => {
		const calls: Counts[] = [];
		const emitted: number[] = [];
		for (let index = 0; index < polls; index++) {
			await sandbox.clock.advance(MINUTE);
			if (renewBeforeLast && index === polls - 1) store.get().data.accessTokenRenewAfter = 0;
			const before = sandbox.counts();
			const result = await poll();
			calls.push(countsSince(before, sandbox.counts()));
			emitted.push(result.emitted);
		}
		return { calls, emitted };
	};
	const moving = await pollEveryMinute(scenario.polls, true);
	await sandbox.clock.advance(30 * MINUTE);
	const settled = await pollEveryMinute(scenario.settledPolls ?? 0);
	return {
		firstPoll,
		perPoll: moving.calls,
		emitted: moving.emitted,
		settledPerPoll: settled.calls,
		settledEmitted: settled.emitted,
		setupMs,
	};
}
