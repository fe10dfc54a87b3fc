import { sleep } from 'n8n-workflow';
import type { DeduplicationScope, IExecuteFunctions } from 'n8n-workflow';

import { oneAtATime } from '../../helpers/oneAtATime';
import { processState, timings } from '../../processState';

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
 * No clock and no bound on write times are needed for it to be safe. A process that dies holding it
 * (between two statements a few milliseconds apart) leaves it taken: then claims give up after
 * `storeLockBudgetMs` and decide from the list of sends instead (see sendBatch.ts), and n8n's log
 * says how to clear it. Other nodes of the workflow must not use the same row (Remove Duplicates with
 * the scope the lock uses): the store then refuses the lock's mode, which is reported, not ignored.
 */

const LOCK_VALUE = '-Infinity';
const LOCK_OPTIONS = { mode: 'latestIncrementalKey' } as const;
const FIRST_BACKOFF_MS = 5;
const LONGEST_BACKOFF_MS = 250;

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
 * memory first (they would only contend for the row). Gives up after `storeLockBudgetMs`, or when
 * the store fails: then `work` does not run, and the reason comes back.
 */
export async function withStoreLock<T>(context: IExecuteFunctions, scope: DeduplicationScope, work: () => Promise<T>): Promise<LockOutcome<T>> {
	const row = `${context.getWorkflow().id ?? ''}|${scope}|${scope === 'node' ? context.getNode().id : ''}`;
	return await oneAtATime(processState.storeQueues, row, async (): Promise<LockOutcome<T>> => {
		const giveUpAt = Date.now() + timings().storeLockBudgetMs;
		for (let backoff = FIRST_BACKOFF_MS; ; backoff = Math.min(backoff * 2, LONGEST_BACKOFF_MS)) {
			const attempt = await tryToTake(context, scope);
			if (attempt === 'taken') break;
			if (attempt !== 'busy') return { ok: false, reason: `n8n's processed-data store failed: ${attempt.failed}` };
			if (Date.now() >= giveUpAt) {
				const howToClear =
					scope === 'workflow'
						? 'clear it with a Remove Duplicates node in this workflow (operation "Clear Deduplication History", scope "Workflow")'
						: 'n8n offers no way to clear another node\'s processed data: replace this node by a copy (its keys start empty)';
				context.logger.warn(
					`Companion Push: the Idempotency Keys' lock of workflow ${context.getWorkflow().id ?? ''} stayed taken for ${timings().storeLockBudgetMs} ms. ` +
						`If no execution of this workflow is running, a process died holding it: ${howToClear}.`,
				);
				return { ok: false, reason: `the Idempotency Keys' lock stayed taken for ${Math.round(timings().storeLockBudgetMs / 1000)} s` };
			}
			await sleep(backoff / 2 + Math.random() * backoff);
		}
		try {
			return { ok: true, value: await work() };
		} catch (error) {
			return { ok: false, reason: `n8n's processed-data store failed: ${(error as Error).message}` };
		} finally {
			await context.helpers.clearAllProcessedItems(scope, LOCK_OPTIONS).catch((error: Error) => {
				context.logger.warn(`Companion Push: the Idempotency Keys' lock could not be given back: ${error.message}`);
			});
		}
	});
}
