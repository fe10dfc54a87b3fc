/**
 * n8n's processed-data store (the one behind `this.helpers.checkProcessedAndRecord`) for the
 * in-process engine: n8n keeps it in its database (packages/cli, DeduplicationHelper); here the
 * same rules live in memory: one list per workflow and scope (`n:<node id>` for scope node), values
 * stored as md5 hashes, `maxEntries` keeping the newest, and `removeProcessed` taking values out.
 * The real store is exercised by the end-to-end tests in a real n8n.
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
} from 'n8n-workflow';

const hash = (value: DeduplicationItemTypes) => createHash('md5').update(String(value)).digest('base64');

export class MemoryProcessedData implements IDataDeduplicator {
	readonly rows = new Map<string, string[]>();
	/** Calls seen, in order: what a test can count. */
	readonly calls: Array<{ kind: 'check' | 'remove'; items: DeduplicationItemTypes[]; scope: DeduplicationScope }> = [];

	private rowKey(scope: DeduplicationScope, contextData: ICheckProcessedContextData): string {
		return `${contextData.workflow.id}|${scope === 'node' ? `n:${contextData.node?.id}` : ''}`;
	}

	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		this.calls.push({ kind: 'check', items, scope });
		const key = this.rowKey(scope, contextData);
		const stored = this.rows.get(key) ?? [];
		const output: IDeduplicationOutput = { new: [], processed: [] };
		for (const item of items) {
			const hashed = hash(item);
			if (stored.includes(hashed)) output.processed.push(item);
			else {
				stored.push(hashed);
				output.new.push(item);
			}
		}
		if (options.maxEntries) stored.splice(0, Math.max(0, stored.length - options.maxEntries));
		this.rows.set(key, stored);
		return output;
	}

	async removeProcessed(items: DeduplicationItemTypes[], scope: DeduplicationScope, contextData: ICheckProcessedContextData): Promise<void> {
		this.calls.push({ kind: 'remove', items, scope });
		const stored = this.rows.get(this.rowKey(scope, contextData)) ?? [];
		for (const item of items) {
			const index = stored.indexOf(hash(item));
			if (index !== -1) stored.splice(index, 1);
		}
	}

	async clearAllProcessedItems(scope: DeduplicationScope, contextData: ICheckProcessedContextData): Promise<void> {
		this.rows.delete(this.rowKey(scope, contextData));
	}

	async getProcessedDataCount(scope: DeduplicationScope, contextData: ICheckProcessedContextData): Promise<number> {
		return this.rows.get(this.rowKey(scope, contextData))?.length ?? 0;
	}

	reset(): void {
		this.rows.clear();
		this.calls.length = 0;
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
