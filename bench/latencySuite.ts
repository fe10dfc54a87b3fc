/**
 * The latency suite: every latency case (bench/latency.ts) at each sandbox latency, the node run
 * in-process against raw undici. Needs its own sandbox on the real clock. The timed sides of a case
 * are interleaved within each repetition. (The node against n8n's HTTP Request node, both in a real
 * n8n, is the real-n8n suite: bench/n8nSuite.ts.)
 */
import type { Sandbox } from '../sandbox';
import { batchesOf, nodeSendAudience, nodeSendPerItem } from './cases';
import type { NodeTimed, Timed } from './cases';
import { nodeDefaultParallel, nodeSendAndWait, nodeUnderRateLimit, rawSendParallel, singles, triggerReadsDue } from './latency';
import type { RateLimitedRun, TriggerReadsRun, WaitRun } from './latency';

export const LATENCY_GROUPS = ['send', 'batches', 'wait', 'ratelimit', 'trigger'] as const;
export type LatencyGroup = (typeof LATENCY_GROUPS)[number];

export interface LatencyScale {
	/** Users of the sandbox's primary organization (at least `recipients` and every item count). */
	users: number;
	/** Sandbox latencies (latencyMs) every case runs at. */
	latencies: number[];
	/** (a), (b): items of one recipient each, one send per item. */
	itemCounts: number[];
	/** (c): one Send to this many recipients, in batches of `batchSize`. */
	recipients: number;
	batchSize: number;
	/** (d): sends with Wait for Final Status, against the settle time of one send (`deliveryMs`). */
	waitSends: number;
	deliveryMs: number;
	/** A wait run longer than this is stopped (the sandbox refuses the reads). */
	waitBoundMs: number;
	/** Under the sandbox rate limit: items, rate, and the bound of the run. */
	rateLimitItems: number;
	rateLimitPerSecond: number;
	rateLimitBoundMs: number;
	/** (e): the trigger with this many reads due, polls timed. */
	triggerReads: number;
	triggerPolls: number;
	/** Repetitions of the timed send cases (a, b, c). */
	reps: number;
	/** Which cases run. */
	groups: LatencyGroup[];
}

export const FULL_LATENCY_SCALE: LatencyScale = {
	users: 100_000,
	latencies: [0, 40],
	itemCounts: [200, 1000],
	recipients: 100_000,
	batchSize: 1000,
	waitSends: 100,
	deliveryMs: 1500,
	waitBoundMs: 60_000,
	rateLimitItems: 500,
	rateLimitPerSecond: 50,
	rateLimitBoundMs: 90_000,
	triggerReads: 50,
	triggerPolls: 3,
	reps: 3,
	groups: [...LATENCY_GROUPS],
};

/** One repetition of a send case: the node at its defaults, raw undici at its parallelism and with
 * every request at once. */
export interface SendSides {
	node: NodeTimed;
	rawParallel: Timed;
	rawAll: Timed;
}

export interface AtLatency {
	latencyMs: number;
	/** (a), (b): per item count, its repetitions. */
	items: Array<{ items: number; runs: SendSides[] }>;
	/** (c) */
	batches: SendSides[];
	/** (d): one send, then `waitSends` sends, each with Wait for Final Status. */
	wait?: { one: WaitRun; many: WaitRun };
	rateLimited?: RateLimitedRun;
	trigger?: TriggerReadsRun;
}

export interface LatencyResults {
	scale: LatencyScale;
	/** The parallelism raw undici gets: the node's default Max Parallel Requests. */
	parallel: number;
	atLatency: AtLatency[];
	totalMs: number;
}

export async function runLatencySuite(sandbox: Sandbox, scale: LatencyScale, log: (line: string) => void = () => {}): Promise<LatencyResults> {
	const started = Date.now();
	const userIds = sandbox.orgs.primary.userIds;
	const needed = Math.max(scale.recipients, ...scale.itemCounts, scale.rateLimitItems, scale.triggerReads);
	if (userIds.length < needed) throw new Error(`the sandbox has ${userIds.length} users; the latency scale needs ${needed}`);
	const parallel = nodeDefaultParallel();
	log(`latency suite: ${scale.groups.join(', ')} at ${scale.latencies.join(' and ')} ms; raw undici at ${parallel} in parallel (the node's default Max Parallel Requests)`);
	const results: LatencyResults = { scale, parallel, atLatency: [], totalMs: 0 };
	const audience = userIds.slice(0, scale.recipients);
	const audienceBatches = batchesOf(audience, scale.batchSize);
	const sendGroups = scale.groups.filter((group) => group === 'send' || group === 'batches');

	// Warm-up (not counted), at the first latency.
	const warmSettings = { latencyMs: scale.latencies[0] ?? 0 };
	await nodeSendPerItem(sandbox, userIds.slice(0, 20), { settings: warmSettings });
	await rawSendParallel(sandbox, singles(userIds.slice(0, 20)), parallel, warmSettings);
	await nodeSendAudience(sandbox, userIds.slice(0, 2000), 1000, { settings: warmSettings });

	try {
		for (const latencyMs of scale.latencies) {
			const settings = { latencyMs };
			const at: AtLatency = { latencyMs, items: scale.itemCounts.map((items) => ({ items, runs: [] })), batches: [] };
			results.atLatency.push(at);
			if (sendGroups.length > 0) {
				for (let rep = 0; rep < scale.reps; rep++) {
					log(`${latencyMs} ms, rep ${rep + 1}/${scale.reps}: ${sendGroups.join(', ')}`);
					if (scale.groups.includes('send')) {
						for (const entry of at.items) {
							const ids = userIds.slice(0, entry.items);
							const batches = singles(ids);
							const sides = [
								async () => ({ node: await nodeSendPerItem(sandbox, ids, { settings }) }),
								async () => ({ rawParallel: await rawSendParallel(sandbox, batches, parallel, settings) }),
								async () => ({ rawAll: await rawSendParallel(sandbox, batches, Infinity, settings) }),
							];
							entry.runs.push((await rotated(rep, sides)) as SendSides);
						}
					}
					if (scale.groups.includes('batches')) {
						const sides = [
							async () => ({ node: await nodeSendAudience(sandbox, audience, scale.batchSize, { settings }) }),
							async () => ({ rawParallel: await rawSendParallel(sandbox, audienceBatches, parallel, settings) }),
							async () => ({ rawAll: await rawSendParallel(sandbox, audienceBatches, Infinity, settings) }),
						];
						at.batches.push((await rotated(rep, sides)) as SendSides);
					}
				}
			}
			if (scale.groups.includes('wait')) {
				log(`${latencyMs} ms: Wait for Final Status, 1 send then ${scale.waitSends} (deliveryMs ${scale.deliveryMs})`);
				const waitSettings = { latencyMs, deliveryMs: scale.deliveryMs };
				const one = await nodeSendAndWait(sandbox, 1, waitSettings, scale.waitBoundMs);
				const many = await nodeSendAndWait(sandbox, scale.waitSends, waitSettings, scale.waitBoundMs);
				at.wait = { one, many };
			}
			if (scale.groups.includes('ratelimit')) {
				log(`${latencyMs} ms: ${scale.rateLimitItems} items under a rate limit of ${scale.rateLimitPerSecond}/s`);
				at.rateLimited = await nodeUnderRateLimit(sandbox, scale.rateLimitItems, scale.rateLimitPerSecond, latencyMs, scale.rateLimitBoundMs);
			}
			if (scale.groups.includes('trigger')) {
				log(`${latencyMs} ms: trigger, ${scale.triggerReads} reads due, ${scale.triggerPolls} polls`);
				at.trigger = await triggerReadsDue(sandbox, scale.triggerReads, scale.triggerPolls, latencyMs);
			}
		}
	} finally {
		await sandbox.reset();
	}
	results.totalMs = Date.now() - started;
	return results;
}

/** Runs the sides one after the other, in an order rotated by `rep`, and merges what they give. */
async function rotated(rep: number, sides: Array<() => Promise<object>>): Promise<object> {
	const merged = {};
	for (let index = 0; index < sides.length; index++) Object.assign(merged, await sides[(index + rep) % sides.length]());
	return merged;
}
