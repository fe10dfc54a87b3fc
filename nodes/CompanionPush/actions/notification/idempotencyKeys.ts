import type { IExecuteFunctions } from 'n8n-workflow';

import { oneAtATime } from '../../helpers/oneAtATime';
import { processState } from '../../processState';

/**
 * Idempotency Keys: a send whose key was already used successfully is not made again.
 *
 * The keys live in n8n's processed-data store (`checkProcessedAndRecord` / `removeProcessed`, the
 * helpers of n8n's Remove Duplicates node): n8n's own database, so they survive restarts and are
 * shared by every process of a queue-mode setup. Scope `node` keeps them per node, `workflow` per
 * workflow; at most `keysToKeep` are kept, the oldest forgotten first.
 *
 * A key is claimed before its send (so a second item or execution with the same key skips it even
 * while the first send is in flight), confirmed once the API accepted the send, freed again when
 * the API refused it (nothing was registered), and kept when its outcome stayed unknown. A claim
 * found without its confirmation (n8n died between the claim and the answer, or the outcome stayed
 * unknown) is not trusted either way: the caller looks for the send in the list of sends and sends
 * it only when it is not there. The batches of one item each claim the key with their batch
 * number, so they never block each other.
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

/** What is stored for batch `batchIndex` of a send with this key. */
export function storedKey(key: string, batchIndex: number): string {
	return batchIndex === 0 ? key : `${key} [batch ${batchIndex + 1}]`;
}

/** What is stored once that send was accepted. */
function confirmedKey(key: string, batchIndex: number): string {
	return `${storedKey(key, batchIndex)} [accepted]`;
}

/** A claim: `claimed` (the key was free, it is ours now), `used` (an earlier send was accepted), or
 * `unconfirmed` (claimed earlier, but its send was never confirmed as accepted). */
export type Claim = 'claimed' | 'used' | 'unconfirmed';

export class IdempotencyKeys {
	constructor(private readonly context: IExecuteFunctions) {}

	/** One claim at a time per workflow in this process (see above); other processes are not ordered by it. */
	private run<T>(task: () => Promise<T>): Promise<T> {
		return oneAtATime(processState.storeQueues, this.context.getWorkflow().id ?? '', task);
	}

	// Each key is stored with its confirmation: two entries a key.
	private async record(idempotency: IdempotencyKey, values: string[]) {
		return await this.context.helpers.checkProcessedAndRecord(values, idempotency.scope, {
			mode: 'entries',
			maxEntries: idempotency.keysToKeep * 2,
		});
	}

	private async remove(idempotency: IdempotencyKey, values: string[]) {
		await this.context.helpers.removeProcessed(values, idempotency.scope, { mode: 'entries', maxEntries: idempotency.keysToKeep * 2 });
	}

	/** Claims the key of one batch (see Claim). */
	async claim(idempotency: IdempotencyKey, batchIndex: number): Promise<Claim> {
		return await this.run(async () => {
			const claimed = await this.record(idempotency, [storedKey(idempotency.key, batchIndex)]);
			if (claimed.new.length === 1) return 'claimed';
			// The store can only be asked by recording: a confirmation found missing is taken out again.
			const confirmation = confirmedKey(idempotency.key, batchIndex);
			const confirmed = await this.record(idempotency, [confirmation]);
			if (confirmed.new.length === 0) return 'used';
			await this.remove(idempotency, [confirmation]);
			return 'unconfirmed';
		});
	}

	/** The API accepted the send: the claim is confirmed (and stored again, should a write of
	 * another process have lost it, see the comment at the top). */
	async confirm(idempotency: IdempotencyKey, batchIndex: number): Promise<void> {
		await this.run(
			async () => await this.record(idempotency, [storedKey(idempotency.key, batchIndex), confirmedKey(idempotency.key, batchIndex)]),
		);
	}

	/** The API refused the send, so nothing was registered: the key is free for the next try. */
	async release(idempotency: IdempotencyKey, batchIndex: number): Promise<void> {
		await this.run(async () => await this.remove(idempotency, [storedKey(idempotency.key, batchIndex)]));
	}
}
