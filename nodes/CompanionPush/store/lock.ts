import { randomUUID } from 'crypto';

import { sleep } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { oneAtATime } from '../common/oneAtATime';
import { pauseUnlessStopped } from '../common/pause';
import { timings } from '../common/timings';
import { storeState } from './state';

/*
 * The store's lock: the nodes' rows of a workflow are read and written by one n8n process at a time
 * (README.md beside this file, "The lock"). It relies on: of several processes creating a row, one
 * succeeds; the lock is the workflow's row holding LOCK_VALUE and its holder's token; a holder renews
 * its lease while it works, and its work counts only if the row still holds its token at the end;
 * only a row holding LOCK_VALUE and more (its holder's entry) is ever deleted.
 */

const LOCK_SCOPE = 'workflow' as const; // the row every node of a workflow reaches
const ENTRIES = { mode: 'entries' } as const;
/** The lock's own value: a row without it is not the lock, whatever it holds. */
export const LOCK_VALUE = JSON.stringify(['companionPush', 'idempotencyKeysLock']);
export const holderEntry = (token: string) => JSON.stringify(['holder', token]);
const renewalEntry = (token: string, count: number) => JSON.stringify(['renewal', token, count]);
/** Filler entries a lock's row is made with, so that its count tells it from the rows before it. */
const fillerEntries = (token: string, count: number) =>
	Array.from({ length: count }, (_, index) => JSON.stringify(['filler', token, index]));

/** Waits between reads of a taken lock: random, up to this. */
const RETRY_WITHIN_MS = 40;
/** After giving the lock back, this process waits up to this (random) before taking it again. */
const YIELD_WITHIN_MS = 4;
/** Renewals within one lease. */
const RENEWALS_PER_LEASE = 4;
/** Turns of a work whose lock was taken over before it ended. */
const TURNS = 3;
/** Up to this many filler entries in a new lock's row (random): waiters watch the row's count, and
 * rows of short turns, given back and made anew between two reads, would all show the same count. */
const MAX_FILLER = 100;

export type LockOutcome<T> = { ok: true; value: T } | { ok: false; reason: string };

export const storeFailure = (error: unknown) =>
	`n8n's processed-data store failed: ${(error as Error).message}`;

const CONFLICT =
	"the workflow's row of n8n's processed data, which the Idempotency Keys' lock uses, holds other data (a Remove Duplicates node of this workflow with Scope \"Workflow\"?); " +
	'it was left as it is. Give that node the Scope "Node"';

/** The database's answer to a second creation of the row (Postgres, SQLite). */
function isCreationRace(error: unknown): boolean {
	type Answer = { message?: unknown; code?: unknown; driverError?: { code?: unknown } };
	const { message, code, driverError } = (error ?? {}) as Answer;
	const codes = [code, driverError?.code].map(String);
	return (
		codes.includes('23505') ||
		codes.some((value) => value.startsWith('SQLITE_CONSTRAINT')) ||
		/duplicate key value violates unique constraint|UNIQUE constraint failed/i.test(String(message))
	);
}

/** n8n's answer when the row was saved in another mode: not the lock's row. */
const isOtherMode = (error: unknown) =>
	/incompatible setting/i.test(String((error as Error | undefined)?.message));

/** Why the lock cannot be had: the store failed, or the row is not the lock's. */
type Stopped = { stopped: string };

const stopFor = (error: unknown): Stopped => ({
	stopped: isOtherMode(error) ? CONFLICT : storeFailure(error),
});

/** The lock's row of one workflow, through the node's store helpers. */
class LockRow {
	constructor(private readonly context: IExecuteFunctions) {}

	/** The number of entries of the row, 0 when there is none (or it is in another mode): writes nothing. */
	async count(): Promise<number> {
		return await this.context.helpers.getProcessedDataCount(LOCK_SCOPE, ENTRIES);
	}

	/** Records values; those that come back are the ones that were not there. */
	async record(values: string[]): Promise<Set<string>> {
		const result = await this.context.helpers.checkProcessedAndRecord(values, LOCK_SCOPE, ENTRIES);
		return new Set(result.new.map(String));
	}

	async delete(): Promise<void> {
		await this.context.helpers.clearAllProcessedItems(LOCK_SCOPE, ENTRIES);
	}

	/** Takes out `added`, which this process just recorded in a row that was not its lock: the whole
	 * row when it holds nothing else (this process created it), else only these entries. */
	async takeBack(added: string[]): Promise<'rowDeleted' | 'entriesRemoved'> {
		if ((await this.count()) === added.length) {
			await this.delete();
			return 'rowDeleted';
		}
		await this.context.helpers.removeProcessed(added, LOCK_SCOPE, ENTRIES);
		return 'entriesRemoved';
	}
}

/** Waits for the lock and takes it: the token it was taken with. */
async function take(
	context: IExecuteFunctions,
	row: LockRow,
): Promise<{ token: string; takenAt: number } | Stopped> {
	let watched = { count: -1, breakAt: 0 };
	for (;;) {
		let count: number;
		try {
			count = await row.count();
		} catch (error) {
			return stopFor(error);
		}
		if (count === 0) {
			const token = randomUUID();
			const filler = fillerEntries(token, Math.floor(Math.random() * (MAX_FILLER + 1)));
			const takenAt = Date.now();
			try {
				const fresh = await row.record([LOCK_VALUE, holderEntry(token), ...filler]);
				if (fresh.has(LOCK_VALUE)) return { token, takenAt };
			} catch (error) {
				if (!isCreationRace(error)) return stopFor(error);
			}
		} else if (count !== watched.count) {
			// A holder renewing, or a new one: it lives.
			const { storeLockBudgetMs, storeLockBreakJitterMs } = timings();
			const breakAt = Date.now() + storeLockBudgetMs + Math.random() * storeLockBreakJitterMs;
			watched = { count, breakAt };
		} else if (Date.now() >= watched.breakAt) {
			const stopped = await takeOver(context, row, count).catch(stopFor);
			if (stopped) return stopped;
			watched = { count: -1, breakAt: 0 };
			continue;
		}
		await sleep(Math.random() * RETRY_WITHIN_MS);
	}
}

/** The row stayed at `count` entries for a whole lease: deleted when it is a lock (its holder died),
 * reported when it is not. */
async function takeOver(
	context: IExecuteFunctions,
	row: LockRow,
	count: number,
): Promise<Stopped | undefined> {
	let fresh: Set<string>;
	try {
		fresh = await row.record([LOCK_VALUE]);
	} catch (error) {
		// Given back and taken anew meanwhile: try again.
		return isCreationRace(error) ? undefined : stopFor(error);
	}
	if (fresh.has(LOCK_VALUE)) {
		// Not a lock. Or no row any more (given back just now), which this test created: try again.
		if ((await row.takeBack([LOCK_VALUE])) === 'rowDeleted') return undefined;
		return { stopped: CONFLICT };
	}
	// A lock's row holds its holder's entry besides LOCK_VALUE: a row holding only that text is
	// another node's (a Remove Duplicates node fed it), never deleted.
	if (count < 2) return { stopped: CONFLICT };
	// Renewed or taken anew meanwhile: it lives.
	if ((await row.count()) !== count) return undefined;
	context.logger.warn(
		`Companion Push: the Idempotency Keys' lock of workflow ${context.getWorkflow().id ?? ''} was not renewed for ${Math.round(timings().storeLockBudgetMs / 1000)} s: ` +
			'taken as left by a process that died holding it, and taken anew.',
	);
	await row.delete();
	return undefined;
}

/** The lease of one turn: renewed while the work runs; says at the end whether the lock stayed this turn's. */
class Lease {
	private lost = false;
	/** A row a renewal created (the lock had been taken from this turn): given back at the end. */
	private made: string[] | undefined;
	private renewal: Promise<void> | undefined;
	private readonly stopped = new AbortController();

	constructor(
		private readonly row: LockRow,
		private readonly token: string,
		/** When the last write of this turn that found or put its lock in the row started. */
		private lastWrittenAt: number,
	) {
		void this.renewWhileHeld();
	}

	/**
	 * Whether a row holding the lock's value but not this turn's token, read by a write that ended at
	 * `readBy`, is still this turn's: a waiter whose write read the row before an earlier turn gave
	 * it back, and wrote after this one made it, puts the earlier row back (n8n writes a row whole,
	 * as it read it). Taking a lock over needs its row's count unchanged for a whole lease, and every
	 * write of this turn changed it (its filler, its renewals): less than a lease after the last one
	 * started, nobody can have taken it over, so the row is this turn's, rewritten.
	 */
	private rewrittenNotTaken(readBy: number): boolean {
		return readBy - this.lastWrittenAt < timings().storeLockBudgetMs;
	}

	private async renewWhileHeld(): Promise<void> {
		for (let count = 1; !this.lost; count++) {
			const pause = timings().storeLockBudgetMs / RENEWALS_PER_LEASE;
			if (await pauseUnlessStopped(pause, this.stopped.signal)) return;
			this.renewal = this.renew(count);
			await this.renewal;
		}
	}

	private async renew(count: number): Promise<void> {
		const entries = [LOCK_VALUE, holderEntry(this.token), renewalEntry(this.token, count)];
		try {
			const startedAt = Date.now();
			const fresh = await this.row.record(entries);
			const rewritten = !fresh.has(LOCK_VALUE) && this.rewrittenNotTaken(Date.now());
			if (!fresh.has(holderEntry(this.token)) || rewritten) {
				// Its token is in the row again (this renewal put it back where a stale write took it out).
				this.lastWrittenAt = startedAt;
				return;
			}
			this.lost = true;
			// No lock there any more: this renewal made the row, or wrote into one that is not a lock.
			if (fresh.has(LOCK_VALUE)) this.made = entries;
		} catch {
			// A renewal that fails: the lease may run out, and the end tells.
		}
	}

	/** Stops renewing; whether the lock was this turn's to the end (then it is given back). */
	async end(): Promise<boolean> {
		this.stopped.abort();
		await this.renewal;
		if (this.lost) {
			if (this.made) await this.row.takeBack(this.made);
			return false;
		}
		const mine = [LOCK_VALUE, holderEntry(this.token)];
		const fresh = await this.row.record(mine);
		if (fresh.size === 0 || (!fresh.has(LOCK_VALUE) && this.rewrittenNotTaken(Date.now()))) {
			await this.row.delete();
			return true;
		}
		// The row was gone (this check made one) or is not a lock: taken out again. Another holder's: left alone.
		if (fresh.has(LOCK_VALUE)) await this.row.takeBack(mine);
		return false;
	}
}

/** Runs `work` holding the store's lock of this workflow (this process's calls queue up in memory
 * first). When the store fails, or the lock's row holds something else, `work` does not run and the
 * reason comes back. `work` may run again: it must read what it decides from, not carry it over. */
export async function withStoreLock<T>(
	context: IExecuteFunctions,
	work: () => Promise<T>,
): Promise<LockOutcome<T>> {
	const row = new LockRow(context);
	return await oneAtATime(
		storeState.lockQueues,
		context.getWorkflow().id ?? '',
		async (): Promise<LockOutcome<T>> => {
			for (let turn = 1; ; turn++) {
				const taken = await take(context, row);
				if ('stopped' in taken) return { ok: false, reason: taken.stopped };
				const lease = new Lease(row, taken.token, taken.takenAt);
				let outcome: LockOutcome<T>;
				try {
					outcome = { ok: true, value: await work() };
				} catch (error) {
					outcome = { ok: false, reason: storeFailure(error) };
				}
				const heldToTheEnd = await lease.end().catch((error: Error) => {
					context.logger.warn(
						`Companion Push: the Idempotency Keys' lock could not be given back: ${error.message}`,
					);
					return false;
				});
				// Give the other processes a chance before this one's next turn.
				await sleep(Math.random() * YIELD_WITHIN_MS);
				if (heldToTheEnd) return outcome;
				context.logger.warn(
					`Companion Push: the Idempotency Keys' lock of workflow ${context.getWorkflow().id ?? ''} was taken over by another process while this one worked under it (turn ${turn} of ${TURNS}).`,
				);
				if (turn === TURNS) {
					return {
						ok: false,
						reason: `the Idempotency Keys' lock was taken over by another n8n process ${TURNS} times while this one worked under it (a database too slow to renew it)`,
					};
				}
			}
		},
	);
}
