/**
 * The latency cases: the sandbox holds every answer `latencyMs` (real time), so what a client does
 * while it waits decides. Node sides run in-process through n8n-core's engine as in cases.ts; raw
 * undici runs at the node's default parallelism and with every request at once. (The node against
 * n8n's HTTP Request node, both in a real n8n: bench/n8nSuite.ts.) These cases need a sandbox on the
 * real clock (deliveries and rate-limit buckets follow the sandbox clock).
 */
import '../devkit/env';

import { performance } from 'node:perf_hooks';

import type { INodeProperties } from 'n8n-workflow';

import { CompanionPush } from '../nodes/CompanionPush/CompanionPush.node';
import type { Sandbox, SandboxSettings } from '../sandbox';
import { activeTrigger, BODY, makeRawSends, measuredRaw, nodeSend, TITLE, timedOf } from './cases';
import type { NodeTimed, Timed } from './cases';
import { DETAIL, SEND, SEND_LIST } from '../devkit/endpoints';
import { storeFor } from '../devkit/fixtures';
import { clearInFlight, countsSince, peakInFlight } from './measure';
import type { Counts } from './measure';
import { rawClient } from './raw';

/**
 * The default of Send's option "Max Parallel Requests" (`options.maxParallelRequests`), read from
 * the node's description, as the editor shows it.
 */
export function nodeDefaultParallel(): number {
	const properties = new CompanionPush().description.properties;
	const isSendOptions = (property: INodeProperties) =>
		property.name === 'options' && (property.displayOptions?.show?.operation ?? []).includes('send') && Array.isArray(property.options);
	for (const property of properties.filter(isSendOptions)) {
		const option = (property.options as INodeProperties[]).find((candidate) => candidate.name === 'maxParallelRequests');
		if (option && typeof option.default === 'number' && option.default >= 1) return option.default;
	}
	throw new Error("Send has no option Max Parallel Requests with a default: raw undici's parallelism is read from it");
}

// ---- raw undici --------------------------------------------------------------------------------

/**
 * Raw undici: one token, then one POST per batch (`target_user_ids`), at most `parallel` in
 * flight (a pool of that many keep-alive connections; `Infinity`: every request at once, one
 * connection each). What the fastest honest client costs at that parallelism.
 */
export async function rawSendParallel(
	sandbox: Sandbox,
	batches: string[][],
	parallel: number,
	settings?: Partial<SandboxSettings>,
): Promise<Timed> {
	const width = Math.max(1, Math.min(parallel, batches.length));
	const timed = await measuredRaw(
		sandbox,
		async (client) => {
			const token = await client.token();
			let next = 0;
			const worker = async () => {
				while (next < batches.length) {
					const batch = batches[next++];
					await client.post('/push-notification/send', token, JSON.stringify({ title: TITLE, body: BODY, target_user_ids: batch }));
				}
			};
			await Promise.all(Array.from({ length: width }, worker));
		},
		{ connections: width, settings },
	);
	return timedOf(timed);
}

// ---- a bound for the long cases ------------------------------------------------------------------

/**
 * Runs `body`; if it lasts longer than `boundMs`, the sandbox starts refusing `endpoint` with 400
 * (a status4xx fault on every request), which makes the node end its run soon (what it waits for
 * fails at once). Keeps a slow node from taking the bench's whole time; the result says it happened.
 */
async function bounded<T>(sandbox: Sandbox, boundMs: number, endpoints: string[], body: () => Promise<T>): Promise<{ value: T; boundHit: boolean }> {
	let boundHit = false;
	const timer = setTimeout(() => {
		boundHit = true;
		for (const endpoint of endpoints) sandbox.addFault({ endpoint, kind: 'status4xx', status: 400, share: 1 });
	}, boundMs);
	try {
		return { value: await body(), boundHit };
	} finally {
		clearTimeout(timer);
		sandbox.clearFaults();
	}
}

// ---- Wait for Final Status ----------------------------------------------------------------------

export interface WaitRun extends NodeTimed {
	sends: number;
	/** Output items whose final status was reached. */
	finalReached: number;
	/** The bench's bound stopped the run (the figure is then a lower bound). */
	boundHit: boolean;
}

/**
 * Send with Wait for Final Status (the node's other options at their defaults), one send per item,
 * one recipient each. The recipients have one healthy phone each (sandbox kind `onePhone`), so every
 * send settles exactly `deliveryMs` after it was made: one delivery round, nothing to retry.
 */
export async function nodeSendAndWait(
	sandbox: Sandbox,
	sends: number,
	settings: Partial<SandboxSettings> & { deliveryMs: number },
	boundMs: number,
): Promise<WaitRun> {
	const userIds = sandbox.orgs.primary.usersOfKind('onePhone', sends);
	if (userIds.length < sends) throw new Error(`the sandbox has ${userIds.length} users of kind onePhone; ${sends} needed`);
	// The node follows the sends in the list of sends, and reads a detail only where the list falls short.
	const { value, boundHit } = await bounded(sandbox, boundMs, [SEND_LIST, DETAIL], () =>
		nodeSend(sandbox, userIds.map((id) => ({ id })), '={{ $json.id }}', { waitForFinalStatus: true }, { settings }),
	);
	const { items, ...timed } = value;
	return { ...timed, sends, finalReached: items.filter((item) => item.finalStatusReached === true).length, boundHit };
}

// ---- under the sandbox's rate limit -------------------------------------------------------------

export interface RateLimitedRun extends NodeTimed {
	items: number;
	ratePerSecond: number;
	latencyMs: number;
	/** Input items that did not end with a send id (error items, or items not sent when the node stopped). */
	failedItems: number;
	/** Sends the sandbox registered beyond one per recipient (each item has its own recipient). */
	duplicates: number;
	/** Sends the sandbox registered. */
	registered: number;
	/** Requests the rate limit refused (429). */
	refused: number;
	/** The shortest wall time the limit allows for the job's requests (the sends and one refresh). */
	allowedMs: number;
	boundHit: boolean;
}

let rateLimitedRuns = 0;

/**
 * `items` items, one send each, under `rateLimitPerSecond` (the node at its defaults). The node's
 * pace after a 429 lives in process memory per credential id: a credential id of its own per run
 * keeps the other cases and runs unaffected. What the limit allows: the bucket starts full
 * (max(1, rate) requests) and refills at `rate` per second, so `n` requests need (n - burst) / rate
 * seconds at least, plus the latency of the last answer.
 */
export async function nodeUnderRateLimit(
	sandbox: Sandbox,
	items: number,
	ratePerSecond: number,
	latencyMs: number,
	boundMs: number,
): Promise<RateLimitedRun> {
	const userIds = sandbox.orgs.primary.userIds.slice(0, items);
	const credentialId = `bench-rate-limited-${++rateLimitedRuns}`;
	const { value, boundHit } = await bounded(sandbox, boundMs, [SEND], () =>
		nodeSend(sandbox, userIds.map((id) => ({ id })), '={{ $json.id }}', undefined, {
			settings: { latencyMs, rateLimitPerSecond: ratePerSecond },
			credentialId,
		}),
	);
	const { items: output, ...timed } = value;
	const log = sandbox.requestLog();
	const sendsPerUser = new Map<string, number>();
	for (const entry of log) {
		if (entry.endpoint !== SEND || !entry.notificationId) continue;
		const key = JSON.stringify((entry.body as { target_user_ids?: unknown }).target_user_ids);
		sendsPerUser.set(key, (sendsPerUser.get(key) ?? 0) + 1);
	}
	const registered = [...sendsPerUser.values()].reduce((sum, n) => sum + n, 0);
	const withId = new Set(output.filter((json) => typeof json.id === 'string' && json.error === undefined).map((json) => JSON.stringify(json.targetUserIds)));
	const burst = Math.max(1, ratePerSecond);
	const needed = items + 1;
	return {
		...timed,
		items,
		ratePerSecond,
		latencyMs,
		failedItems: items - withId.size,
		duplicates: registered - sendsPerUser.size,
		registered,
		refused: log.filter((entry) => entry.limitedBy === 'rateLimitPerSecond').length,
		allowedMs: (Math.max(0, needed - burst) / ratePerSecond) * 1000 + latencyMs,
		boundHit,
	};
}

// ---- the trigger with reads due -----------------------------------------------------------------

export interface TriggerReadsRun {
	latencyMs: number;
	reads: number;
	/** Calls of the activation poll. */
	activation: Counts;
	/** Each measured poll: its wall time, calls, most requests in flight, items emitted. */
	polls: Array<{ ms: number; counts: Counts; peakInFlight: number; emitted: number }>;
	/** Raw undici making the same calls (the list, then every read at once), after the polls, with a
	 * token it got before (so: the list and the reads only). */
	raw: Timed;
}

/**
 * The trigger (all three events) in an active workflow, as cases.ts polls it; after its activation
 * poll, `reads` sends go out that stay `sending` (deliveries take 10 minutes), so every following
 * poll reads each of them: one list call and `reads` detail reads (the default Max Reads per Poll
 * is 50). `polls` such polls are timed.
 */
export async function triggerReadsDue(sandbox: Sandbox, reads: number, polls: number, latencyMs: number): Promise<TriggerReadsRun> {
	const settings = { latencyMs, deliveryMs: 10 * 60_000 };
	await sandbox.reset();
	sandbox.configure(settings);
	const poll = activeTrigger(storeFor(sandbox));
	let before = sandbox.counts();
	await poll();
	const activation = countsSince(before, sandbox.counts());

	await makeRawSends(sandbox, reads, 'Due');

	const measuredPolls: TriggerReadsRun['polls'] = [];
	for (let index = 0; index < polls; index++) {
		before = sandbox.counts();
		clearInFlight();
		const started = performance.now();
		const { emitted } = await poll();
		measuredPolls.push({ ms: performance.now() - started, counts: countsSince(before, sandbox.counts()), peakInFlight: peakInFlight(), emitted });
	}

	// Not measured(): that would reset the sandbox and forget the sends.
	const ids = sandbox.notifications('primary').map((record) => record.id);
	const rawReads = rawClient(sandbox, Math.max(1, ids.length));
	let raw: Timed;
	try {
		const token = await rawReads.token();
		before = sandbox.counts();
		clearInFlight();
		const cpu = process.cpuUsage();
		const started = performance.now();
		await rawReads.get('/push-notification/list', token);
		await Promise.all(ids.map((id) => rawReads.get(`/push-notification/${id}`, token)));
		const ms = performance.now() - started;
		const used = process.cpuUsage(cpu);
		raw = { ms, cpuMs: (used.user + used.system) / 1000, connections: NaN, peakInFlight: peakInFlight(), counts: countsSince(before, sandbox.counts()) };
	} finally {
		await rawReads.close();
	}
	return { latencyMs, reads, activation, polls: measuredPolls, raw };
}

/** The user ids of `items` one-recipient sends, as batches of one. */
export const singles = (userIds: string[]): string[][] => userIds.map((id) => [id]);
