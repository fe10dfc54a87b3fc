import { sleep } from 'n8n-workflow';
import type { DeduplicationScope, IExecuteFunctions } from 'n8n-workflow';

import { oneAtATime } from '../helpers/oneAtATime';
import { processState, timings } from '../processState';

/*
 * A lock over n8n's processed-data store, so that the Idempotency Keys' row is read and written by
 * one n8n process at a time (the main process or any queue-mode worker).
 *
 * Why it is needed: the store keeps all values of one scope in one database row, and every call
 * reads that row and writes it back whole, without a transaction or a lock (n8n's
 * DeduplicationHelper in packages/cli). Two processes writing at once lose each other's values, a
 * plain check writes back what it read, and two claims of one key a millisecond apart both see it
 * free. Measured in queue mode: wiped keys and the same event sent twice.
 *
 * The one atomic step the store gives a node is the creation of a row: a row that does not exist
 * is INSERTed, and of several processes inserting at once exactly one succeeds (the row's primary
 * key); the others fail with a unique-constraint error. The lock is that row: a `latestIncrementalKey`
 * row (the other scope than the keys' row) holding "-Infinity".
 * - Take: record "-Infinity". The row is created (the value comes back new) only when it did not
 *   exist: taken. When it exists, "-Infinity" is never greater than what it holds, so it comes
 *   back processed and the row is written back unchanged: busy. The creation race is lost with a
 *   unique-constraint error: busy.
 * - Give back: delete the row (clearAllProcessedItems), once, after the work under it was awaited.
 * No clock and no bound on write times are needed for it to be safe while its holders live.
 *
 * A holder that dies between taking and giving it back (n8n killed in those few milliseconds)
 * leaves it taken for good. So a process that has found it taken, try after try, for
 * `storeLockBudgetMs` (plus a random few seconds, so that two processes rarely decide at once)
 * takes it as left by a dead holder: it deletes the row and takes the lock anew, and n8n's log says
 * so. Its critical sections last milliseconds, so a live holder is only ever broken by a database
 * stalled for that long, or by two processes deciding at the same moment; either may lose a key
 * written at that moment, which the lookup in the list of sends then stands in for. Waiters try
 * again every few dozen milliseconds, and a process gives others a chance between its own turns, so
 * that a busy process does not keep the lock from the others for that long.
 * Other nodes of the workflow must not use the same row (Remove Duplicates with the scope the lock
 * uses): the store then refuses the lock's mode, which is reported, not ignored.
 */

const LOCK_VALUE = '-Infinity';
const LOCK_OPTIONS = { mode: 'latestIncrementalKey' } as const;
/** Waits between tries of a taken lock: random, up to this. */
const RETRY_WITHIN_MS = 40;
/** After giving the lock back, this process waits up to this (random) before taking it again. */
const YIELD_WITHIN_MS = 4;
/** Spread of the moment processes take a lock as left by a dead holder. */
const BREAK_JITTER_MS = 5_000;

export type LockOutcome<T> = { ok: true; value: T } | { ok: false; reason: string };

function isCreationRace(error: unknown): boolean {
	const { message, code, driverError } = (error ?? {}) as { message?: unknown; code?: unknown; driverError?: { code?: unknown } };
	const codes = [code, driverError?.code].map(String);
	return (
		codes.includes('23505') ||
		codes.some((value) => value.startsWith('SQLITE_CONSTRAINT')) ||
		/duplicate key value violates unique constraint|UNIQUE constraint failed/i.test(String(message))
	);
}

type Attempt = 'taken' | 'busy' | { failed: string };

async function tryToTake(context: IExecuteFunctions, scope: DeduplicationScope): Promise<Attempt> {
	try {
		const result = await context.helpers.checkProcessedAndRecord([LOCK_VALUE], scope, LOCK_OPTIONS);
		return result.new.length === 1 ? 'taken' : 'busy';
	} catch (error) {
		if (isCreationRace(error)) return 'busy';
		return { failed: (error as Error).message };
	}
}

/**
 * Runs `work` holding the lock of `scope`'s row of this workflow. Calls of this process queue up in
 * memory first (they would only contend for the row). When the store fails, `work` does not run,
 * and the reason comes back.
 */
export async function withStoreLock<T>(context: IExecuteFunctions, scope: DeduplicationScope, work: () => Promise<T>): Promise<LockOutcome<T>> {
	const row = `${context.getWorkflow().id ?? ''}|${scope}|${scope === 'node' ? context.getNode().id : ''}`;
	return await oneAtATime(processState.storeQueues, row, async (): Promise<LockOutcome<T>> => {
		let breakAt = Date.now() + timings().storeLockBudgetMs + Math.random() * BREAK_JITTER_MS;
		for (;;) {
			const attempt = await tryToTake(context, scope);
			if (attempt === 'taken') break;
			if (attempt !== 'busy') return { ok: false, reason: `n8n's processed-data store failed: ${attempt.failed}` };
			if (Date.now() >= breakAt) {
				context.logger.warn(
					`Companion Push: the Idempotency Keys' lock of workflow ${context.getWorkflow().id ?? ''} stayed taken for ${Math.round(timings().storeLockBudgetMs / 1000)} s: ` +
						'taken as left by a process that died holding it, and taken anew.',
				);
				await context.helpers.clearAllProcessedItems(scope, LOCK_OPTIONS).catch(() => undefined);
				breakAt = Date.now() + timings().storeLockBudgetMs + Math.random() * BREAK_JITTER_MS;
				continue;
			}
			await sleep(Math.random() * RETRY_WITHIN_MS);
		}
		try {
			return { ok: true, value: await work() };
		} catch (error) {
			return { ok: false, reason: `n8n's processed-data store failed: ${(error as Error).message}` };
		} finally {
			await context.helpers.clearAllProcessedItems(scope, LOCK_OPTIONS).catch((error: Error) => {
				context.logger.warn(`Companion Push: the Idempotency Keys' lock could not be given back: ${error.message}`);
			});
			// Give the other processes a chance before this one's next turn.
			await sleep(Math.random() * YIELD_WITHIN_MS);
		}
	});
}
