import type { IExecuteFunctions } from 'n8n-workflow';

import { oneAtATime } from '../../helpers/oneAtATime';

/**
 * Idempotency Keys: a send whose key was already used successfully is not made again.
 *
 * The keys live in n8n's processed-data store (`checkProcessedAndRecord` / `removeProcessed`, the
 * helpers of n8n's Remove Duplicates node): n8n's own database, so they survive restarts and are
 * shared by every process of a queue-mode setup. Scope `node` keeps them per node, `workflow` per
 * workflow; at most `keysToKeep` are kept, the oldest forgotten first.
 *
 * A key is claimed before its send (so a second item or execution with the same key skips it even
 * while the first send is in flight), freed again when the API refused the send (nothing was
 * registered), and kept when the send was accepted or its outcome stayed unknown. The batches of
 * one item each claim the key with their batch number, so they never block each other.
 *
 * n8n's store reads and writes its row without a lock (last write wins). Claims of this process
 * are therefore made one at a time, and an accepted send claims its key once more: if a write of
 * another process lost it in between, that puts it back. Two processes claiming the same key
 * within the same few milliseconds can still both win: the README says so.
 */
export type IdempotencyScope = 'node' | 'workflow';

export interface IdempotencyKey {
	key: string;
	scope: IdempotencyScope;
	keysToKeep: number;
}

export const DEFAULT_KEYS_TO_KEEP = 10_000;

// One claim at a time per workflow in this process (see above). Process memory: other processes
// are not ordered by it.
const storeQueues = new Map<string, Promise<unknown>>();

/** What is stored for batch `batchIndex` of a send with this key. */
export function storedKey(key: string, batchIndex: number): string {
	return batchIndex === 0 ? key : `${key} [batch ${batchIndex + 1}]`;
}

export class IdempotencyKeys {
	constructor(private readonly context: IExecuteFunctions) {}

	private run<T>(task: () => Promise<T>): Promise<T> {
		return oneAtATime(storeQueues, this.context.getWorkflow().id ?? '', task);
	}

	/** Claims the key of one batch: true when it was free (it is now used), false when it was used before. */
	async claim(idempotency: IdempotencyKey, batchIndex: number): Promise<boolean> {
		const value = storedKey(idempotency.key, batchIndex);
		const result = await this.run(
			async () =>
				await this.context.helpers.checkProcessedAndRecord([value], idempotency.scope, {
					mode: 'entries',
					maxEntries: idempotency.keysToKeep,
				}),
		);
		return result.new.length === 1;
	}

	/** The send was accepted: makes sure the claim is still stored (see the comment at the top). */
	async confirm(idempotency: IdempotencyKey, batchIndex: number): Promise<void> {
		await this.claim(idempotency, batchIndex);
	}

	/** The API refused the send, so nothing was registered: the key is free for the next try. */
	async release(idempotency: IdempotencyKey, batchIndex: number): Promise<void> {
		const value = storedKey(idempotency.key, batchIndex);
		await this.run(
			async () =>
				await this.context.helpers.removeProcessed([value], idempotency.scope, {
					mode: 'entries',
					maxEntries: idempotency.keysToKeep,
				}),
		);
	}
}
