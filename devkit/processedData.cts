/**
 * n8n's processed-data store (the one behind `this.helpers.checkProcessedAndRecord`) for the
 * in-process engine, behaving as n8n 2.41.1's does in its database (packages/cli,
 * DeduplicationHelper, over the processed_data table), including the way it loses writes:
 * - one row per workflow and scope (`n:<node id>` for scope node, '' for scope workflow), primary
 *   key (workflow, context);
 * - every call reads the row, then (a database round trip later) writes: an absent row is INSERTed
 *   (a second insert of the same row fails with Postgres's unique-constraint error), a present row is
 *   rewritten whole from what was read (last writer wins: a concurrent write is lost), even when
 *   nothing changed; an update of a row deleted meanwhile changes nothing;
 * - the row's value is kept as the JSON text the database holds: every read parses it whole and every
 *   write serializes it whole, as n8n's ORM does, so a call costs what it costs n8n's process;
 * - `entries` mode stores md5 (base64) hashes, keeps the newest `maxEntries` (oldest first out);
 *   a record builds a set of the whole row; `removeProcessed` takes out the first copy of each value,
 *   found by a scan of the row from its oldest entry (one scan per value, as n8n's `findIndex`); the
 *   `latest*` modes keep one value and report an item new only when greater; a call in another mode
 *   than the row's throws;
 * - `clearAllProcessedItems` deletes the row; `getProcessedDataCount` only reads (the whole row).
 * `roundTripMs` is the time between a read and its write: 0 by default (the next turn of the event
 * loop), more to widen the window in which two processes overlap. `stall` holds a statement before
 * it takes effect, for as long as the promise it returns is pending (a slow database, a process cut
 * off from it): an UPDATE held lands later with what was read before it. `failing` makes every call throw,
 * as a database that is down; `failWhen` does so from the moment it returns a message (a database
 * that goes down in the middle of a run, at a point the test names by a state, not a time).
 * The database's own time is left out (see `roundTripMs`). The real store is exercised by the
 * end-to-end tests in a real n8n.
 */
import { createHash } from 'node:crypto';

import { DataDeduplicationService } from 'n8n-core';
import type {
	DeduplicationItemTypes,
	DeduplicationScope,
	ICheckProcessedContextData,
	ICheckProcessedOptions,
	IDataDeduplicator,
	IDeduplicationOutput,
	IExecuteFunctions,
} from 'n8n-workflow';

type Mode = ICheckProcessedOptions['mode'];
interface Row {
	mode: Mode;
	data: unknown;
}

/** One statement the store is about to run, as `stall` sees it: which row, and for which node
 * (its type tells apart the copies of the package that play two n8n processes). */
export interface StoreStatement {
	kind: 'select' | 'insert' | 'update' | 'delete';
	row: string;
	nodeType?: string;
}

const hash = (value: DeduplicationItemTypes) =>
	createHash('md5').update(String(value)).digest('base64');

/** Postgres's answer to a second INSERT of the same primary key, as n8n passes it on. */
function uniqueViolation(): Error {
	return Object.assign(
		new Error('duplicate key value violates unique constraint "PK_processed_data"'),
		{ code: '23505' },
	);
}

function compare(mode: Mode, a: unknown, b: unknown): number {
	const [x, y] =
		mode === 'latestDate' ? [Date.parse(String(a)), Date.parse(String(b))] : [Number(a), Number(b)];
	if (Number.isNaN(x) || Number.isNaN(y))
		throw new Error(`Invalid value. Only numbers are supported in mode "${mode}"`);
	return x === y ? 0 : x > y ? 1 : -1;
}

/** One call to the store: what a test can count, and what the secret guard reads. */
export interface ProcessedDataCall {
	kind: 'check' | 'remove' | 'clear' | 'count';
	items: DeduplicationItemTypes[];
	scope: DeduplicationScope;
	mode?: Mode;
}

const callObservers = new Set<(call: ProcessedDataCall) => void>();

/** Calls `observer` with every call to any store, as it comes; returns the function that stops
 * observing (used by test/harness/secretGuard.cts: what n8n would keep in its database). */
export function observeProcessedData(observer: (call: ProcessedDataCall) => void): () => void {
	callObservers.add(observer);
	return () => callObservers.delete(observer);
}

export class MemoryProcessedData implements IDataDeduplicator {
	/** The rows by `<workflow id>|<context>`: the JSON text of each row's value, as stored. */
	readonly rows = new Map<string, string>();
	/** Calls seen, in order: what a test can count. */
	readonly calls: ProcessedDataCall[] = [];
	roundTripMs = 0;
	failing: string | undefined;
	failWhen: (() => string | undefined) | undefined;
	stall: ((statement: StoreStatement) => Promise<void> | undefined) | undefined;

	private record(call: ProcessedDataCall): void {
		this.calls.push(call);
		for (const observer of callObservers) observer(call);
	}

	private rowKey(scope: DeduplicationScope, contextData: ICheckProcessedContextData): string {
		return `${contextData.workflow.id}|${scope === 'node' ? `n:${contextData.node?.id}` : ''}`;
	}

	/** The time a statement takes: the round trip, and a stall when the test asks for one. */
	private async roundTrip(
		kind: StoreStatement['kind'],
		key: string,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		await new Promise((resolve) =>
			this.roundTripMs > 0 ? setTimeout(resolve, this.roundTripMs) : setImmediate(resolve),
		);
		await this.stall?.({ kind, row: key, nodeType: contextData.node?.type });
	}

	/** Throws when the database is down (see `failing` and `failWhen`). */
	private failIfDown(): void {
		const failure = this.failing ?? this.failWhen?.();
		if (failure) throw new Error(failure);
	}

	/** A SELECT: the row as it is now, parsed. */
	private async select(
		key: string,
		contextData: ICheckProcessedContextData,
	): Promise<Row | undefined> {
		this.failIfDown();
		await this.roundTrip('select', key, contextData);
		const text = this.rows.get(key);
		return text === undefined ? undefined : (JSON.parse(text) as Row);
	}

	private async insert(
		key: string,
		row: Row,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		const text = JSON.stringify(row);
		await this.roundTrip('insert', key, contextData);
		if (this.rows.has(key)) throw uniqueViolation();
		this.rows.set(key, text);
	}

	/** An UPDATE of the whole row; a row deleted meanwhile stays deleted. */
	private async update(
		key: string,
		row: Row,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		const text = JSON.stringify(row);
		await this.roundTrip('update', key, contextData);
		if (this.rows.has(key)) this.rows.set(key, text);
	}

	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		this.record({ kind: 'check', items, scope, mode: options.mode });
		const key = this.rowKey(scope, contextData);
		const row = await this.select(key, contextData);
		if (row && row.mode !== options.mode) {
			throw new Error(
				'Deduplication data was originally saved with an incompatible setting of the ‘Keep Items Where’ parameter.',
			);
		}
		if (options.mode === 'entries') {
			const hashes = items.map(hash);
			if (!row) {
				if (options.maxEntries) hashes.splice(0, Math.max(0, hashes.length - options.maxEntries));
				await this.insert(key, { mode: options.mode, data: hashes }, contextData);
				return { new: items, processed: [] };
			}
			const stored = row.data as string[];
			const known = new Set(stored);
			const output: IDeduplicationOutput = { new: [], processed: [] };
			hashes.forEach((hashed, index) => {
				if (known.has(hashed)) output.processed.push(items[index]);
				else {
					output.new.push(items[index]);
					stored.push(hashed);
				}
			});
			if (options.maxEntries) stored.splice(0, Math.max(0, stored.length - options.maxEntries));
			await this.update(key, { mode: options.mode, data: stored }, contextData);
			return output;
		}
		const sorted = [...items].sort((a, b) => compare(options.mode, a, b));
		if (!row) {
			await this.insert(key, { mode: options.mode, data: sorted[sorted.length - 1] }, contextData);
			return { new: items, processed: [] };
		}
		const output: IDeduplicationOutput = { new: [], processed: [] };
		let largest = row.data;
		for (const item of sorted) {
			if (compare(options.mode, item, row.data) === 1) {
				output.new.push(item);
				if (compare(options.mode, item, largest) === 1) largest = item;
			} else output.processed.push(item);
		}
		await this.update(key, { mode: options.mode, data: largest }, contextData);
		return output;
	}

	async removeProcessed(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<void> {
		this.record({ kind: 'remove', items, scope, mode: options.mode });
		if (options.mode !== 'entries')
			throw new Error('Removing processed data is not possible in mode "latest"');
		const key = this.rowKey(scope, contextData);
		const row = await this.select(key, contextData);
		if (!row || !Array.isArray(row.data)) return;
		const stored = row.data as string[];
		for (const hashed of items.map(hash)) {
			// n8n's own scan (not indexOf): its cost per value is part of what is measured.
			const index = stored.findIndex((value) => value === hashed);
			if (index !== -1) stored.splice(index, 1);
		}
		await this.update(key, { mode: row.mode, data: stored }, contextData);
	}

	async clearAllProcessedItems(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		this.record({ kind: 'clear', items: [], scope });
		this.failIfDown();
		const key = this.rowKey(scope, contextData);
		await this.roundTrip('delete', key, contextData);
		this.rows.delete(key);
	}

	async getProcessedDataCount(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<number> {
		this.record({ kind: 'count', items: [], scope, mode: options.mode });
		const row = await this.select(this.rowKey(scope, contextData), contextData);
		return row && row.mode === 'entries' && options.mode === 'entries'
			? (row.data as string[]).length
			: 0;
	}

	/** The value of a workflow's row (`n:<node id>` or '' for the workflow scope), parsed. */
	value(workflowId: string, context: string): { mode: Mode; data: unknown } | undefined {
		const text = this.rows.get(`${workflowId}|${context}`);
		return text === undefined ? undefined : (JSON.parse(text) as Row);
	}

	/** The hashes of the entries-mode row of a workflow (`n:<node id>` or '' for the workflow scope). */
	entries(workflowId: string, context: string): string[] {
		const row = this.value(workflowId, context);
		return row?.mode === 'entries' ? (row.data as string[]) : [];
	}

	/** Whether a value is stored in that row (as n8n stores it: hashed). */
	holds(workflowId: string, context: string, value: string): boolean {
		return this.entries(workflowId, context).includes(hash(value));
	}

	reset(): void {
		this.rows.clear();
		this.calls.length = 0;
		this.roundTripMs = 0;
		this.failing = undefined;
		this.failWhen = undefined;
		this.stall = undefined;
	}
}

let installed: MemoryProcessedData | undefined;

/** The store every in-process run of this jest worker uses (n8n allows one per process). */
export async function processedDataStore(): Promise<MemoryProcessedData> {
	if (!installed) {
		installed = new MemoryProcessedData();
		await DataDeduplicationService.init(installed);
	}
	return installed;
}

/** What the store-lock and key tests read of a node context: the store helpers, the workflow, the
 * node and the log (warnings collected in `warnings`). */
export interface StoreContext {
	context: IExecuteFunctions;
	warnings: string[];
}

/**
 * A node context of workflow `workflowId` over the store stand-in, without the rest of n8n: for the
 * keys' tests and bench, which play several n8n processes (each its own context; `nodeType` tells
 * their statements apart in the store's `stall`). `beforeWrite` runs before each call that writes
 * (a record or a removal), with its scope: a test can stop the process there by throwing.
 */
export function storeContext(
	store: MemoryProcessedData,
	{
		workflowId = 'wf-lock',
		nodeId = 'n-lock',
		nodeType = 'companionPush',
		beforeWrite = (_scope: DeduplicationScope): void => undefined,
	} = {},
): StoreContext {
	const where = {
		workflow: { id: workflowId, active: true },
		node: { id: nodeId, type: nodeType } as never,
	};
	const warnings: string[] = [];
	const helpers = {
		checkProcessedAndRecord: async (
			items: DeduplicationItemTypes[],
			scope: DeduplicationScope,
			options: ICheckProcessedOptions,
		) => {
			beforeWrite(scope);
			return await store.checkProcessedAndRecord(items, scope, where, options);
		},
		removeProcessed: async (
			items: DeduplicationItemTypes[],
			scope: DeduplicationScope,
			options: ICheckProcessedOptions,
		) => {
			beforeWrite(scope);
			await store.removeProcessed(items, scope, where, options);
		},
		clearAllProcessedItems: async (scope: DeduplicationScope) =>
			await store.clearAllProcessedItems(scope, where),
		getProcessedDataCount: async (scope: DeduplicationScope, options: ICheckProcessedOptions) =>
			await store.getProcessedDataCount(scope, where, options),
	};
	const context = {
		helpers,
		getWorkflow: () => ({ id: workflowId }),
		getNode: () => ({ id: nodeId, name: 'Send', type: nodeType }),
		logger: { warn: (message: string) => warnings.push(message) },
	} as unknown as IExecuteFunctions;
	return { context, warnings };
}
