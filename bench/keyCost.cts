/**
 * The keys suite (row 18): what a keyed event costs by the number of Idempotency Keys kept.
 * - In a node run: the Companion Push Send of one keyed event per execution (its own key, Keys to
 *   Keep set to the row's size), executions `atOnce` at a time through n8n-core's engine in this
 *   process (devkit/engine.cts), against the in-process sandbox; n8n's processed-data store is the
 *   stand-in (devkit/processedData.cts, which parses and rewrites the whole row at every call and
 *   scans it for every value taken out, as n8n's process does), its row filled first with `kept` used
 *   keys. The same executions without a key give the node's own cost.
 * - In the store alone: the claim and the confirmation (neverTwice/idempotencyKeys.ts), one event
 *   at a time and `atOnce` at a time, with the statements each makes on the keys' row and the lock's.
 * A real database adds its reads and writes of the row (docs/scaling-out.md has those figures).
 * `npm run bench -- --only keys`.
 */
import '../devkit/env.cts';

import { performance } from 'node:perf_hooks';

import { IdempotencyKeys } from '../nodes/CompanionPush/neverTwice/idempotencyKeys';
import type { IdempotencyKey } from '../nodes/CompanionPush/neverTwice/idempotencyKeys';
import { resetProcessState } from '../devkit/processState.cts';
import { CompanionPush } from '../nodes/CompanionPush/CompanionPush.node';
import type { Sandbox } from '../sandbox/index.cts';
import { registerNodeType, runNode } from '../devkit/engine.cts';
import { storeFor } from '../devkit/fixtures.cts';
import { MemoryProcessedData, processedDataStore, storeContext } from '../devkit/processedData.cts';
import { med, ratio, runEach, sendParameters, spread } from './measure.cts';
import { fmtK, verdictOf } from './report.cts';
import type { Figure, SuiteReport } from './report.cts';

const ACTION_TYPE = 'bench.keys.companionPush';
registerNodeType(ACTION_TYPE, new CompanionPush());

export const FULL_KEY_SCALE = {
	/** Used keys in the row before the events. */
	kept: [5_000, 50_000],
	/** Keyed events (executions) per run, and how many run at once. */
	events: 300,
	atOnce: 20,
	/** Store-only events per size. */
	storeEvents: 200,
	reps: 5,
};
export type KeyScale = typeof FULL_KEY_SCALE;
const KEY_GOAL = 2;

export interface KeyCost {
	kept: number;
	concurrency: number;
	events: number;
	/** Wall time per event (ms). */
	msPerEvent: number;
	/** Statements per event on the keys' row: its reads, and its rewrites (INSERT or UPDATE). */
	keysRowReads: number;
	keysRowWrites: number;
	/** Values taken out of the keys' row per event: n8n scans the whole row for each. */
	valuesTakenOut: number;
	/** Statements per event on the lock's row (reads, writes, deletes). */
	lockStatements: number;
	/** Entries of the keys' row at the end. */
	rowEntries: number;
}

const WORKFLOW = 'wf-bench';
const NODE = 'n-bench';

/** Fills the keys' row of `row` as `kept` earlier events left it: each a `claimed` entry. */
async function keepEarlierKeys(
	store: MemoryProcessedData,
	row: Parameters<MemoryProcessedData['checkProcessedAndRecord']>[2],
	kept: number,
): Promise<void> {
	const earlier = Array.from({ length: kept }, (_, index) =>
		JSON.stringify(['claimed', `old-${index}`]),
	);
	await store.checkProcessedAndRecord(earlier, 'node', row, {
		mode: 'entries',
		maxEntries: kept + 10_000,
	});
}

/** `events` keyed events (claim, then confirm), `concurrency` at a time, after `kept` used keys. */
export async function measureKeyCost(
	kept: number,
	events: number,
	concurrency: number,
): Promise<KeyCost> {
	resetProcessState();
	const store = new MemoryProcessedData();
	const { context } = storeContext(store, { workflowId: WORKFLOW, nodeId: NODE });
	const keys = new IdempotencyKeys(context);
	const keyOf = (name: string): IdempotencyKey => ({ key: name, scope: 'node', keysToKeep: kept });
	await keepEarlierKeys(
		store,
		{ workflow: { id: WORKFLOW, active: true }, node: { id: NODE } as never },
		kept,
	);
	store.calls.length = 0;
	const statements = { keysReads: 0, keysWrites: 0, lock: 0 };
	store.stall = (statement) => {
		if (statement.row.endsWith(`n:${NODE}`)) {
			if (statement.kind === 'select') statements.keysReads++;
			else statements.keysWrites++;
		} else statements.lock++;
		return undefined;
	};
	const event = async (index: number) => {
		const idempotency = keyOf(`order-${index}: shipped`);
		const layout = [`batch-${index}`];
		const claim = await keys.claim(idempotency, layout);
		if (claim.state !== 'claimed') throw new Error(`event ${index}: ${claim.state}`);
		const confirmed = await keys.confirm(idempotency, layout, claim.markedMinutes, 'madeHere');
		if (!confirmed.ok) throw new Error(`event ${index}: ${confirmed.reason}`);
	};
	const startedAt = performance.now();
	await runEach(events, concurrency, event);
	const elapsed = performance.now() - startedAt;
	return {
		kept,
		concurrency,
		events,
		msPerEvent: elapsed / events,
		keysRowReads: statements.keysReads / events,
		keysRowWrites: statements.keysWrites / events,
		lockStatements: statements.lock / events,
		valuesTakenOut:
			store.calls
				.filter((call) => call.kind === 'remove' && call.scope === 'node')
				.reduce((sum, call) => sum + call.items.length, 0) / events,
		rowEntries: store.entries(WORKFLOW, `n:${NODE}`).length,
	};
}

/** The row of the engine's node under test (devkit/engine.cts: workflow wf-test, node n-test). */
const ENGINE_ROW = { workflow: { id: 'wf-test', active: true }, node: { id: 'n-test' } as never };

/** `events` executions of a Send of one item (one recipient), `atOnce` at a time; with `kept`, each
 * under its own Idempotency Key, after `kept` used keys: wall time per execution (ms). */
async function nodeEvents(
	sandbox: Sandbox,
	scale: KeyScale,
	run: string,
	kept?: number,
): Promise<number> {
	const store = await processedDataStore();
	store.reset();
	if (kept !== undefined) await keepEarlierKeys(store, ENGINE_ROW, kept);
	const credentials = storeFor(sandbox);
	const users = sandbox.orgs.primary.userIds;
	const event = async (index: number) => {
		const options =
			kept === undefined
				? {}
				: { idempotencyKey: `${run}-order-${index}: shipped`, keysToKeep: kept };
		const result = await runNode({
			type: ACTION_TYPE,
			credentials,
			items: [{ userId: users[index % users.length] }],
			parameters: sendParameters('={{ $json.userId }}', options),
		});
		const json = result.items[0]?.json;
		if (result.error || typeof json?.id !== 'string')
			throw new Error(`event ${index}: ${result.error?.message ?? JSON.stringify(json)}`);
	};
	const startedAt = performance.now();
	await runEach(scale.events, scale.atOnce, event);
	const perEvent = (performance.now() - startedAt) / scale.events;
	store.reset();
	return perEvent;
}

export interface KeyRun {
	/** Per execution (ms): without a key, and with one at each size kept. */
	keyless: number;
	keyed: Record<number, number>;
}

export async function runKeySuite(
	sandbox: Sandbox,
	scale: KeyScale,
	log: (line: string) => void = () => {},
) {
	const started = Date.now();
	// Warm-up (not counted): loads and compiles every path once.
	await nodeEvents(sandbox, { ...scale, events: scale.atOnce }, 'warm-up', scale.kept[0]);
	const runs: KeyRun[] = [];
	for (let rep = 0; rep < scale.reps; rep++) {
		log(
			`rep ${rep + 1}/${scale.reps}: ${scale.events} keyed events at ${scale.kept.join(', ')} keys kept`,
		);
		const keyed: Record<number, number> = {};
		for (const kept of scale.kept)
			keyed[kept] = await nodeEvents(sandbox, scale, `r${rep}-${kept}`, kept);
		runs.push({ keyless: await nodeEvents(sandbox, scale, `r${rep}`), keyed });
	}
	const store: KeyCost[] = [];
	for (const concurrency of [1, scale.atOnce])
		for (const kept of scale.kept)
			store.push(await measureKeyCost(kept, scale.storeEvents, concurrency));
	return { scale, runs, store, totalMs: Date.now() - started };
}
export type KeyResults = Awaited<ReturnType<typeof runKeySuite>>;

export function keyFiguresOf(results: KeyResults): SuiteReport {
	const { scale, runs, store } = results;
	const [small, large] = [scale.kept[0], scale.kept[scale.kept.length - 1]];
	const ms2 = (value: number) => `${value.toFixed(1)} ms`;
	const perSize = (kept: number) => med(runs, (run) => run.keyed[kept]);
	const growth = runs.map((run) => run.keyed[large] / run.keyed[small]);
	const ok = med(growth, (value) => value) <= KEY_GOAL;
	const storeLine = store
		.map(
			(cost) =>
				`${fmtK(cost.kept)} kept, ${cost.concurrency} at once: ${ms2(cost.msPerEvent)} per event, ${cost.keysRowWrites.toFixed(2)} rewrites of the keys' row (${cost.valuesTakenOut.toFixed(1)} values taken out) and ${cost.lockStatements.toFixed(2)} statements on the lock's`,
		)
		.join('; ');
	const name = `Keyed events, ${scale.atOnce} executions at once in one process (in-process engine and store)`;
	const figures: Figure[] = [
		{
			row: '18',
			figure: `${name}: time per keyed event at ${fmtK(large)} keys kept / at ${fmtK(small)}`,
			measured: `${spread(growth, ratio)}: ${ms2(perSize(large))} vs ${ms2(perSize(small))} per execution; without a key ${ms2(med(runs, (run) => run.keyless))}`,
			goal: `<= ${KEY_GOAL}x`,
			verdict: verdictOf(ok),
			how: `${scale.reps} runs of ${scale.events} executions (Send, one item, one recipient, its own Idempotency Key, Keys to Keep = the size) ${scale.atOnce} at a time through n8n-core's engine in the bench's process, against the in-process sandbox; n8n's processed-data store is devkit/processedData.cts (every call parses and rewrites the whole row, and scans it for every value taken out, as n8n's process does; the database's own time left out), its row filled first with the kept keys; the same executions without a key for the node's own cost; wall time over the executions, ratio per run, median (min–max).`,
		},
		{
			row: '18',
			figure: `${name}: the store alone`,
			measured: storeLine,
			goal: '—',
			verdict: '—',
			how: `IdempotencyKeys' claim and confirmation only (${scale.storeEvents} events per case) over the same store, one at a time and ${scale.atOnce} at a time in one process; statements counted by the store (a rewrite: an INSERT or UPDATE; a value taken out: one scan of the row by n8n).`,
		},
	];
	const misses = ok
		? []
		: [
				`Row 18 (${ratio(med(growth, (value) => value))}): every call to n8n's store parses and rewrites the whole row, and scans it once for every value taken out, so the keys' part of an event grows with the keys kept; the events waiting at once share their calls, not their scans (4 per event: what the claim wrote) (the store alone: ${storeLine}).`,
			];
	const setup = [
		`- Keys (row 18): the in-process engine and sandbox, the store stand-in; ${scale.reps} runs after a warm-up. ${(results.totalMs / 1000).toFixed(0)} s.`,
	];
	return { figures, misses, setup };
}
