/**
 * What one keyed event costs in n8n's processed-data store, by the number of keys kept: the claim
 * and the confirmation of Idempotency Keys (neverTwice/idempotencyKeys.ts) over the store stand-in
 * (devkit/processedData.cts, which reads and rewrites the whole row at every call, as n8n does),
 * its row filled first with `kept` used keys. Events one at a time, then `concurrency` at once in
 * one process (as a worker's executions run), each on a fresh copy of the row.
 *
 * Counts the statements on the keys' row and the lock's, and times them: the stand-in's own work
 * (copying, hashing and checking the row) grows with it as n8n's does in JavaScript; a real
 * database adds its reads and writes of the row (docs/scaling-out.md has those figures).
 *
 * `npx ts-node --transpile-only bench/keyCost.cts [--kept 5000,50000] [--events 200] [--concurrency 20]`
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import { IdempotencyKeys } from '../nodes/CompanionPush/neverTwice/idempotencyKeys';
import type { IdempotencyKey } from '../nodes/CompanionPush/neverTwice/idempotencyKeys';
import { resetProcessState } from '../nodes/CompanionPush/processState';
import { MemoryProcessedData } from '../devkit/processedData.cts';
import { storeContext } from '../test/harness/keys.cts';

export interface KeyCost {
	kept: number;
	concurrency: number;
	events: number;
	/** Wall time per event (ms). */
	msPerEvent: number;
	/** Statements per event on the keys' row: its reads, and its rewrites (INSERT or UPDATE). */
	keysRowReads: number;
	keysRowWrites: number;
	/** Statements per event on the lock's row (reads, writes, deletes). */
	lockStatements: number;
	/** Entries of the keys' row at the end. */
	rowEntries: number;
}

const WORKFLOW = 'wf-bench';
const NODE = 'n-bench';

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
	// The row as `kept` earlier events left it: each a `claimed` entry (claimed and confirmed).
	const earlier = Array.from({ length: kept }, (_, index) =>
		JSON.stringify(['claimed', `old-${index}`]),
	);
	await store.checkProcessedAndRecord(
		earlier,
		'node',
		{ workflow: { id: WORKFLOW, active: true }, node: { id: NODE } as never },
		{ mode: 'entries', maxEntries: kept + 10_000 },
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
		const confirmed = await keys.confirm(idempotency, layout, claim.markedMinutes);
		if (!confirmed.ok) throw new Error(`event ${index}: ${confirmed.reason}`);
	};
	const startedAt = performance.now();
	let next = 0;
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (next < events) await event(next++);
		}),
	);
	const elapsed = performance.now() - startedAt;
	return {
		kept,
		concurrency,
		events,
		msPerEvent: elapsed / events,
		keysRowReads: statements.keysReads / events,
		keysRowWrites: statements.keysWrites / events,
		lockStatements: statements.lock / events,
		rowEntries: store.entries(WORKFLOW, `n:${NODE}`).length,
	};
}

if (require.main === module) {
	const { values } = parseArgs({
		options: {
			kept: { type: 'string', default: '5000,50000' },
			events: { type: 'string', default: '200' },
			concurrency: { type: 'string', default: '1,20' },
		},
	});
	void (async () => {
		for (const concurrency of values.concurrency.split(',').map(Number))
			for (const kept of values.kept.split(',').map(Number)) {
				const cost = await measureKeyCost(kept, Number(values.events), concurrency);
				console.log(
					`kept ${cost.kept}, ${cost.concurrency} at once: ${cost.msPerEvent.toFixed(2)} ms per event; ` +
						`keys' row ${cost.keysRowReads.toFixed(2)} reads + ${cost.keysRowWrites.toFixed(2)} writes, ` +
						`lock row ${cost.lockStatements.toFixed(2)} statements per event; row ${cost.rowEntries} entries`,
				);
			}
	})();
}
