/**
 * Runs every case at a given scale, `reps` times, the sides of a case interleaved within each
 * repetition (and their order rotated), so each ratio compares runs made moments apart on the same
 * sandbox. The figures are medians; the spreads are kept for the report.
 */
import type { Sandbox } from '../sandbox';
import {
	audiencePieces,
	batchesOf,
	floorGetAllUsers,
	floorSend,
	nodeGetAllUsers,
	nodeSendAudience,
	nodeSendPerItem,
	rawGetAllUsers,
	rawSendAudience,
	rawSendPerItem,
	triggerPolls,
} from './cases';
import type { GetAllUsersResult, NodeTimed, Timed, TriggerResult } from './cases';

export interface Scale {
	/** Users of the sandbox's primary organization (the sandbox must be started with them). */
	users: number;
	recipients: number;
	batchSize: number;
	items: number;
	pastSends: number;
	moving: number;
	movingPolls: number;
	settledPolls: number;
	reps: number;
	triggerReps: number;
}

export const FULL_SCALE: Scale = {
	users: 100_000,
	recipients: 100_000,
	batchSize: 1000,
	items: 1000,
	pastSends: 10_000,
	moving: 5,
	movingPolls: 5,
	settledPolls: 5,
	reps: 7,
	triggerReps: 3,
};

export interface BenchResults {
	scale: Scale;
	audience: Array<{ node: NodeTimed; raw: Timed; floor: Timed }>;
	/** Row 1's CPU-bound pieces, measured alone once per repetition. */
	audiencePieces: Array<{ recipientsMs: number; inputJsonMs: number }>;
	perItem: Array<{ node: NodeTimed; raw: Timed; floor: Timed }>;
	users: GetAllUsersResult[];
	rawUsers: Array<Awaited<ReturnType<typeof rawGetAllUsers>>>;
	floorUsers: Array<Awaited<ReturnType<typeof floorGetAllUsers>>>;
	trigger: TriggerResult[];
	/** Wall time of the whole suite (ms). */
	totalMs: number;
}

/** Runs `sides` in an order rotated by `rep`, each once, and gives their results by name. */
async function interleaved<S extends Record<string, () => Promise<unknown>>>(
	rep: number,
	sides: S,
): Promise<{ [K in keyof S]: Awaited<ReturnType<S[K]>> }> {
	const names = Object.keys(sides) as Array<keyof S>;
	const results = {} as { [K in keyof S]: Awaited<ReturnType<S[K]>> };
	for (let index = 0; index < names.length; index++) {
		const name = names[(index + rep) % names.length];
		results[name] = (await sides[name]()) as Awaited<ReturnType<S[typeof name]>>;
	}
	return results;
}

export async function runSuite(sandbox: Sandbox, scale: Scale, log: (line: string) => void = () => {}): Promise<BenchResults> {
	const started = Date.now();
	const userIds = sandbox.orgs.primary.userIds;
	if (userIds.length < Math.max(scale.recipients, scale.items)) {
		throw new Error(`the sandbox has ${userIds.length} users; the scale needs ${Math.max(scale.recipients, scale.items)}`);
	}
	const audienceIds = userIds.slice(0, scale.recipients);
	const itemIds = userIds.slice(0, scale.items);
	const audienceBatches = batchesOf(audienceIds, scale.batchSize);
	const singleBatches = batchesOf(itemIds, 1);

	// Warm-up (not counted): loads and JIT-compiles every path once, at a small size.
	const warm = userIds.slice(0, Math.min(2000, userIds.length));
	await nodeSendAudience(sandbox, warm, scale.batchSize);
	await rawSendAudience(sandbox, warm, scale.batchSize);
	await floorSend(sandbox, batchesOf(warm, scale.batchSize));
	await nodeSendPerItem(sandbox, warm.slice(0, 20));
	await rawSendPerItem(sandbox, warm.slice(0, 20));

	const results: BenchResults = { scale, audience: [], audiencePieces: [], perItem: [], users: [], rawUsers: [], floorUsers: [], trigger: [], totalMs: 0 };
	for (let rep = 0; rep < scale.reps; rep++) {
		log(`rep ${rep + 1}/${scale.reps}: ${scale.recipients} recipients in one Send`);
		results.audience.push(
			await interleaved(rep, {
				node: () => nodeSendAudience(sandbox, audienceIds, scale.batchSize),
				raw: () => rawSendAudience(sandbox, audienceIds, scale.batchSize),
				floor: () => floorSend(sandbox, audienceBatches),
			}),
		);
		results.audiencePieces.push(audiencePieces(audienceIds, scale.batchSize));
		log(`rep ${rep + 1}/${scale.reps}: ${scale.items} items, one send each`);
		results.perItem.push(
			await interleaved(rep, {
				node: () => nodeSendPerItem(sandbox, itemIds),
				raw: () => rawSendPerItem(sandbox, itemIds),
				floor: () => floorSend(sandbox, singleBatches),
			}),
		);
		log(`rep ${rep + 1}/${scale.reps}: get all ${scale.users} users`);
		const users = await interleaved(rep, {
			node: () => nodeGetAllUsers(sandbox),
			raw: () => rawGetAllUsers(sandbox),
			floor: () => floorGetAllUsers(sandbox),
		});
		results.users.push(users.node);
		results.rawUsers.push(users.raw);
		results.floorUsers.push(users.floor);
	}
	// Last: it moves the sandbox clock forward (hours per run).
	for (let rep = 0; rep < scale.triggerReps; rep++) {
		log(`rep ${rep + 1}/${scale.triggerReps}: trigger, ${scale.pastSends} past sends, ${scale.moving} moving`);
		results.trigger.push(
			await triggerPolls(sandbox, {
				pastSends: scale.pastSends,
				moving: scale.moving,
				polls: scale.movingPolls,
				settledPolls: scale.settledPolls,
			}),
		);
	}
	results.totalMs = Date.now() - started;
	return results;
}
