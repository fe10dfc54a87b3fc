/**
 * A clock the test moves, for the package's protocol waits (a Retry-After, a retry's backoff, a
 * claim lease's renewal pause, a held key's recheck: common/timings.ts, waitFor). Installed in a
 * process's package (`drive`), those waits join a queue on the clock's time instead of sleeping;
 * `advance` moves n8n's clock (Date, as passTime does) and lets the waits that came due go on. So a
 * test of a 14 s Retry-After or of a lease renewed every 10 s takes the time its code runs, not the
 * time it waits, and can never miss a wall-clock budget.
 */
import { useWait } from '../../devkit/processState.cts';
import type { Wait } from '../../devkit/processState.cts';
import { passTime, until } from './exactOrUnknown.cts';

/**
 * Waits shorter than this stay real: yields (sleep(0)), the store lock's millisecond jitter (it
 * sleeps n8n's sleep itself), the short backoffs of tests that shortened their timings. They end on their own within milliseconds,
 * and a test moving the clock for each of them would have to know every one the code makes (one it
 * did not move would hang the run). Longer ones are protocol times the test moves.
 */
const REAL_BELOW_MS = 200;

/** A protocol wait of one process, on the clock's queue. */
export interface QueuedWait {
	/** The process it was made in (as `drive` named it). */
	process: string;
	ms: number;
	/** When it comes due, on n8n's clock (Date). */
	dueAt: number;
	/** Whether it can be stopped early (a lease's renewal pause can; a Retry-After cannot). */
	stoppable: boolean;
}

interface Waiter extends QueuedWait {
	resume(): void;
}

export class TestClock {
	private readonly queue: Waiter[] = [];

	/** Makes the protocol waits of `processState` (this process's package, or anotherProcess's) go
	 * on this clock, as waits of `process`, until its resetProcessState. */
	drive(processState: { useWait(wait: Wait): void }, process: string): void {
		processState.useWait(async (ms, stopped) => await this.wait(process, ms, stopped));
	}

	/** The waits queued now, of `process` or of all, soonest due first. */
	waiting(process?: string): QueuedWait[] {
		return this.queue
			.filter((waiter) => process === undefined || waiter.process === process)
			.sort((a, b) => a.dueAt - b.dueAt)
			.map(({ process: of, ms, dueAt, stoppable }) => ({ process: of, ms, dueAt, stoppable }));
	}

	/** Moves n8n's clock `ms` ahead, then lets every wait due by then go on (soonest first). */
	advance(ms: number): void {
		passTime(Math.max(0, ms));
		const due = this.queue
			.filter((waiter) => waiter.dueAt <= Date.now())
			.sort((a, b) => a.dueAt - b.dueAt);
		for (const waiter of due) {
			this.take(waiter);
			waiter.resume();
		}
	}

	/** Moves n8n's clock to `time` (if it is not there yet) and lets the waits due go on. */
	advanceTo(time: number): void {
		this.advance(time - Date.now());
	}

	/**
	 * Lets `run` go on, moving the clock to the next wait of `process` each time the process is idle
	 * (by default: each time it waits; `idle` says when all its work is waiting, e.g. no store lock
	 * held), never to a wait due after `notAfter`. Returns when `run` ended, or when the next wait is
	 * due after `notAfter` (`run` still under way). Nothing of the run is hurried while it works.
	 */
	async advanceWhileWaiting(
		run: Promise<unknown>,
		process: string,
		{
			idle = () => this.waiting(process).length > 0,
			notAfter = Infinity,
		}: { idle?: () => boolean; notAfter?: number } = {},
	): Promise<void> {
		let ended = false;
		void run.then(
			() => (ended = true),
			() => (ended = true),
		);
		for (;;) {
			await until(() => ended || idle());
			if (ended) return;
			const next = this.waiting(process)[0].dueAt;
			if (next > notAfter) return;
			this.advanceTo(next);
		}
	}

	private async wait(process: string, ms: number, stopped?: AbortSignal): Promise<void> {
		if (ms < REAL_BELOW_MS) return await realWait(ms, stopped);
		stopped?.throwIfAborted();
		await new Promise<void>((resolve, reject) => {
			const onStop = () => {
				this.take(waiter);
				reject(stopped!.reason);
			};
			const waiter: Waiter = {
				process,
				ms,
				dueAt: Date.now() + ms,
				stoppable: stopped !== undefined,
				resume: () => {
					stopped?.removeEventListener('abort', onStop);
					resolve();
				},
			};
			stopped?.addEventListener('abort', onStop, { once: true });
			this.queue.push(waiter);
		});
	}

	/** Takes `waiter` off the queue (it resumes, or was stopped). */
	private take(waiter: Waiter): void {
		const at = this.queue.indexOf(waiter);
		if (at >= 0) this.queue.splice(at, 1);
	}
}

/** This process's name for its own waits on a clock of `onTestClock`. */
const HERE = 'here';

/**
 * Runs what `start` starts (a node run of this process) with the package's waits on a clock of its
 * own, moved to each wait as the run makes it (a Wait for Final Status that follows a send for
 * seconds takes the time its code runs), then puts the waits and n8n's clock (Date) back on real
 * time, also when the run failed.
 */
export async function onTestClock<T>(start: () => Promise<T>): Promise<T> {
	const clock = new TestClock();
	clock.drive({ useWait }, HERE);
	try {
		const run = start();
		await clock.advanceWhileWaiting(run, HERE);
		return await run;
	} finally {
		useWait(realWait);
		jest.useRealTimers();
	}
}

/** A real wait, stopped early like n8n's sleep. */
async function realWait(ms: number, stopped?: AbortSignal): Promise<void> {
	stopped?.throwIfAborted();
	await new Promise<void>((resolve, reject) => {
		const onStop = () => {
			clearTimeout(timer);
			reject(stopped!.reason);
		};
		const timer = setTimeout(() => {
			stopped?.removeEventListener('abort', onStop);
			resolve();
		}, ms);
		stopped?.addEventListener('abort', onStop, { once: true });
	});
}
