import { randomUUID } from 'crypto';
import type { IExecuteFunctions } from 'n8n-workflow';

import type { SendRequest } from '../transport';

/**
 * The sends earlier tries of this node made in this execution, so that no try makes them again.
 *
 * Why the execution's own context data (`this.getContext('node')`): n8n keeps it with the execution,
 * - in memory across the tries of Retry On Fail (the same execution, the same process);
 * - in the saved data of a failed execution, which Retry on the Executions list (with the original
 *   or the current workflow) runs again, in whichever process or queue-mode worker takes it: n8n
 *   copies the failed execution's data and runs the failed node again, with the same run index.
 * It needs no setting and no key, and it is exact: only this execution's own sends are found.
 * Not covered: an execution that died before n8n saved it (a crash): its data has no record of
 * what the node sent. Idempotency Keys (idempotencyKeys.ts) cover that case.
 *
 * A record is keyed by the node's run index (a node in a loop runs several times), the item that
 * leads the send and the batch's content id (its recipients, so a changed audience is noticed, not
 * taken for the same batch). It is written before the request leaves, with the request exactly as
 * sent (the attempt: a later try looks up and, proven absent, sends that, never one it recomputes
 * from its own clock and options), and the send's owner (its identity for lookups, the same in every
 * try); then its id and status; or, when the API accepted it but its id could not be read, the time
 * from which the list of sends may show it (it is never sent again); or, when its outcome stayed
 * unknown, the times between which the list of sends must be searched before it is sent again. A
 * node run that ends without an error drops its records: nothing runs it again.
 */
export interface EarlierSend {
	owner: string;
	/** The request as the first try sent it (records of earlier versions have none). */
	request?: SendRequest;
	id?: string;
	status?: string;
	/** The API accepted it (a 2xx) but its id could not be read: it went out, never to be sent again;
	 * the list of sends may show its id from this time on. */
	acceptedSince?: number;
	/** When the try that was accepted ended: the send was registered before (records of earlier
	 * versions have none). */
	acceptedUntil?: number;
	/** The outcome stayed unknown (a lost answer): search the list of sends from this time. */
	unknownSince?: number;
	/** ... up to this one, when that try's last request had ended (records of earlier versions have
	 * none: then nothing bounds the search). */
	unknownUntil?: number;
}

const CONTEXT_KEY = 'companionPushSends';

/**
 * Records of this node's run that its later tries read, in the execution's own context data under
 * `contextKey` (why there: the top of this file). Each is kept under the node's run index and the
 * run-local key it is given, so that another run of the node in the execution has records of its own.
 */
export class NodeRunRecords<T> {
	private readonly records: Record<string, T>;
	private readonly prefix: string;

	constructor(context: IExecuteFunctions, contextKey: string) {
		const nodeContext = context.getContext('node');
		nodeContext[contextKey] ??= {};
		this.records = nodeContext[contextKey] as Record<string, T>;
		const runIndex = Number(
			(context.getWorkflowDataProxy(0) as { $runIndex?: unknown }).$runIndex ?? 0,
		);
		this.prefix = `${Number.isInteger(runIndex) ? runIndex : 0}:`;
	}

	get(key: string): T | undefined {
		return this.records[this.prefix + key];
	}

	set(key: string, value: T): void {
		this.records[this.prefix + key] = value;
	}

	delete(key: string): void {
		delete this.records[this.prefix + key];
	}

	/** The rest of this run's keys that start with `start`. */
	keysAfter(start: string): string[] {
		const prefix = this.prefix + start;
		return Object.keys(this.records)
			.filter((key) => key.startsWith(prefix))
			.map((key) => key.slice(prefix.length));
	}

	/** The run finished: nothing will run it again, so its records would only weigh on the execution data. */
	forgetRun(): void {
		for (const key of this.keysAfter('')) this.delete(key);
	}
}

export class EarlierTries {
	private readonly run: NodeRunRecords<EarlierSend>;

	constructor(context: IExecuteFunctions) {
		this.run = new NodeRunRecords<EarlierSend>(context, CONTEXT_KEY);
	}

	private key(itemIndex: number, batchId: string): string {
		return `${itemIndex}:${batchId}`;
	}

	get(itemIndex: number, batchId: string): EarlierSend | undefined {
		return this.run.get(this.key(itemIndex, batchId));
	}

	/** The owner of a batch's send: the earlier tries' one, or a new one. */
	ownerOf(itemIndex: number, batchId: string): string {
		return this.get(itemIndex, batchId)?.owner ?? `send:${randomUUID()}`;
	}

	/** The content ids of the batches earlier tries sent or left unknown for an item. */
	batchesOf(itemIndex: number): string[] {
		return this.run.keysAfter(`${itemIndex}:`);
	}

	/** Before a request leaves: its attempt, an outcome unknown from `since` with nothing to bound it
	 * yet (the outcome below replaces that). */
	attempting(
		itemIndex: number,
		batchId: string,
		owner: string,
		request: SendRequest,
		since: number,
	): void {
		this.run.set(this.key(itemIndex, batchId), { owner, request, unknownSince: since });
	}

	/** What became of the attempt recorded for a batch (`attempting`). */
	outcome(
		itemIndex: number,
		batchId: string,
		outcome:
			| { id: string; status: string }
			| { acceptedSince: number; acceptedUntil: number }
			| { unknownSince: number; unknownUntil: number },
	): void {
		const attempt = this.get(itemIndex, batchId);
		if (!attempt) return; // recorded by `attempting` first, always
		this.run.set(this.key(itemIndex, batchId), {
			owner: attempt.owner,
			...(attempt.request ? { request: attempt.request } : {}),
			...outcome,
		});
	}

	notSent(itemIndex: number, batchId: string): void {
		this.run.delete(this.key(itemIndex, batchId));
	}

	forgetRun(): void {
		this.run.forgetRun();
	}
}
