import type { IExecuteFunctions } from 'n8n-workflow';

import { runPool } from '../../common/pool';
import { waitFor } from '../../common/timings';
import { getNotification, listNotifications } from '../../transport';
import type { ListedNotification, NotificationDetail, NotificationRecord } from '../../transport';
import { isMoving } from '../../common/sendStates';

/** What following one send came to. */
export interface WaitResult {
	/** The send's record as last read: from the list, or from its detail. */
	record: NotificationRecord;
	/** Its delivery entries, when its detail was read (Get asks for it). */
	detail?: NotificationDetail;
	/** True when the send reached a final state; false when the timeout passed first. */
	finalStatusReached: boolean;
	waitedSeconds: number;
}

const FIRST_INTERVAL_MS = 1_000;
const LONGEST_INTERVAL_MS = 15_000;
/** Pages of the list read per round at most, looking for the sends followed. */
const MAX_LIST_READ = 1_000;

interface Follow {
	id: string;
	itemIndex: number;
	deadline: number;
	startedAt: number;
	/** Get shows the deliveries: its detail is read once the send is final (or the wait ends). */
	wantsDetail: boolean;
	resolve: (result: WaitResult) => void;
	reject: (error: unknown) => void;
}

/** A record as the list shows it is complete enough for Send's output when it carries these. */
function hasOutputFields(listed: ListedNotification): boolean {
	return typeof listed.status === 'string' && 'stats' in listed && 'sent_at' in listed;
}

/**
 * "Wait for Final Status" for every send of a node run at once: each round reads the list of sends
 * (newest first, which carries each send's status and counters) instead of one detail per send, and
 * rounds come 1, 2, 4 ... up to 15 seconds apart (the API: one read a few seconds after sending is
 * enough). A send the list does not show, or shows without its status, counters or send time (the
 * list's body is not part of the API's documented contract), is read through its detail: never
 * guessed. A send whose deliveries are wanted (Get) gets one detail read at the end. Detail reads
 * of a round run at most `maxParallelReads` at a time; following itself holds no request.
 */
export class FinalStatusWatch {
	private readonly follows = new Set<Follow>();
	private rounds?: Promise<void>;

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly maxParallelReads: number,
	) {}

	/** Resolves when the send leaves "sending"/"scheduled", or when `timeoutSeconds` pass. */
	/** With `wantsDetail` (Get), the result always carries the send's detail, read once it is final. */
	follow(
		id: string,
		timeoutSeconds: number,
		itemIndex: number,
		wantsDetail: true,
	): Promise<WaitResult & { detail: NotificationDetail }>;
	follow(id: string, timeoutSeconds: number, itemIndex: number): Promise<WaitResult>;
	follow(
		id: string,
		timeoutSeconds: number,
		itemIndex: number,
		wantsDetail = false,
	): Promise<WaitResult> {
		return new Promise<WaitResult>((resolve, reject) => {
			const startedAt = Date.now();
			this.follows.add({
				id,
				itemIndex,
				startedAt,
				deadline: startedAt + timeoutSeconds * 1000,
				wantsDetail,
				resolve,
				reject,
			});
			this.rounds ??= this.runRounds().finally(() => (this.rounds = undefined));
		});
	}

	private async runRounds(): Promise<void> {
		// Let every follow of this run join the first round.
		await waitFor(0);
		for (
			let interval = FIRST_INTERVAL_MS;
			this.follows.size > 0;
			interval = Math.min(interval * 2, LONGEST_INTERVAL_MS)
		) {
			await this.round();
			if (this.follows.size === 0) return;
			const nextDeadline = Math.min(...[...this.follows].map((follow) => follow.deadline));
			await waitFor(Math.max(0, Math.min(interval, nextDeadline - Date.now())));
		}
	}

	/** The followed sends as the list shows them now (an empty map when the list cannot be read). */
	private async listed(): Promise<Map<string, ListedNotification>> {
		const wanted = new Set([...this.follows].map((follow) => follow.id));
		const found = new Map<string, ListedNotification>();
		const itemIndex = [...this.follows][0]?.itemIndex;
		try {
			await listNotifications(this.context, {
				max: MAX_LIST_READ,
				itemIndex,
				stopWhen: (send) => {
					if (wanted.has(send.id)) found.set(send.id, send);
					return found.size === wanted.size;
				},
			});
		} catch {
			// The details decide this round.
		}
		return found;
	}

	private async round(): Promise<void> {
		const listed = await this.listed();
		const follows = [...this.follows];
		await runPool(
			follows.length,
			this.maxParallelReads,
			async (index) => await this.settle(follows[index], listed.get(follows[index].id)),
		);
	}

	/** Ends a follow when its send is final or its time is up; reads its detail where the list does not do. */
	private async settle(follow: Follow, listed: ListedNotification | undefined): Promise<void> {
		const timeUp = Date.now() >= follow.deadline;
		try {
			const fromList =
				listed && hasOutputFields(listed) ? (listed as NotificationRecord) : undefined;
			if (fromList && isMoving(fromList.status) && !timeUp) return;
			let record = fromList;
			let detail: NotificationDetail | undefined;
			if (!record || follow.wantsDetail) {
				detail = await getNotification(this.context, follow.id, follow.itemIndex);
				record = detail.notification;
			}
			const finalStatusReached = !isMoving(record.status);
			if (!finalStatusReached && !timeUp) return;
			this.follows.delete(follow);
			follow.resolve({
				record,
				detail,
				finalStatusReached,
				waitedSeconds: Math.round((Date.now() - follow.startedAt) / 100) / 10,
			});
		} catch (error) {
			this.follows.delete(follow);
			follow.reject(error);
		}
	}
}
