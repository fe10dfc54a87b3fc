/**
 * What the "exact or unknown" tests share: short waits, a wait for a state, runs of the action node
 * through n8n's engine, and sends made by another client of the organization (another n8n, another
 * process that has forgotten them, yesterday's run).
 */
import type { IDataObject } from 'n8n-workflow';

import { nodeResult, nodeWorkflow, runWorkflow } from '../../devkit/engine.cts';
import type { NodeRunOptions, NodeRunResult } from '../../devkit/engine.cts';
import { SEND_LIST } from '../../devkit/endpoints.cts';
import { storeFor } from '../../devkit/fixtures.cts';
import { processedDataStore } from '../../devkit/processedData.cts';
import type { MemoryProcessedData } from '../../devkit/processedData.cts';
import { batchContentId } from '../../nodes/CompanionPush/input/recipients';
import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import { entriesOf } from '../../nodes/CompanionPush/neverTwice/keysRow';
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import type { Sandbox } from '../../sandbox/index.cts';
import { send, tokenFor } from './api.cts';
import { sendParameters } from './nodeRuns.cts';
import { NODE_SANDBOX, useSandbox } from './sandboxes.cts';

/** The node's default message (sendParameters), for sends meant to look exactly like the node's. */
export const MESSAGE = { title: 'Shift change', body: 'Your shift starts at 9:00.' };

/** Waits shortened for tests: a lookup reads the list every 120 ms, proves a send absent no sooner
 * than 600 ms after the loss, and waits 2 s at most for a send made after it to be listed (else
 * "unknown"); a claim another run still holds is waited for 300 ms at most; retries back off from
 * 20 ms. In this process, or in the one `inProcess` stands for (anotherProcess). */
export function useShortTimings(
	changes: Parameters<typeof useTimings>[0] = {},
	inProcess: { useTimings: typeof useTimings } = { useTimings },
): void {
	inProcess.useTimings({
		lookupSettleMs: 600,
		lookupEvidenceWaitMs: 2_000,
		heldKeyWaitMs: 300,
		...changes,
		retry: { baseDelayMs: 20, maxDelayMs: 100, ...changes.retry },
	});
}

/**
 * The set-up of the keyed "exact or unknown" tests: a node sandbox reset before each test, six users
 * with one phone, and n8n's processed-data store, emptied with the process state (and the waits
 * shortened) before each test. Read `users` and `store` inside tests and hooks, once set.
 */
export function useKeyedRuns(): { sandbox: Sandbox; users: string[]; store: MemoryProcessedData } {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	const runs = {
		sandbox,
		users: [] as string[],
		store: undefined as unknown as MemoryProcessedData,
	};
	beforeAll(async () => {
		runs.users = sandbox.orgs.primary.usersOfKind('onePhone', 6);
		runs.store = await processedDataStore();
	});
	afterAll(() => resetProcessState());
	afterEach(() => jest.useRealTimers()); // after passTime
	beforeEach(() => {
		runs.store.reset();
		resetProcessState();
		useShortTimings();
	});
	return runs;
}

/**
 * Moves this process's clock (Date only: timers keep real time) `ms` ahead, as if that much time had
 * passed: n8n's clock and the sandbox's alike (the sandbox runs in this process). Until the test ends.
 */
export function passTime(ms: number): void {
	jest.useFakeTimers({
		now: Date.now() + ms,
		advanceTimers: true,
		doNotFake: [
			'hrtime',
			'nextTick',
			'performance',
			'queueMicrotask',
			'setImmediate',
			'clearImmediate',
			'setInterval',
			'clearInterval',
			'setTimeout',
			'clearTimeout',
		],
	});
}

/** Polls until `check` holds: a state, never a fixed time. */
export async function until(check: () => boolean): Promise<void> {
	while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * A Send (or, with `fields.operation`, a Schedule) of the given items, one send at a time unless
 * `fields.options` says otherwise, each item's recipients in its `userId`, errors as error items.
 */
export function sendRun(
	sandbox: Sandbox,
	items: IDataObject[],
	fields: IDataObject = {},
	extra: Partial<NodeRunOptions> = {},
): NodeRunOptions {
	const options = { maxParallelRequests: 1, ...(fields.options as IDataObject | undefined) };
	return {
		type: 'companionPush',
		credentials: storeFor(sandbox),
		items,
		parameters: sendParameters({ userIds: '={{ $json.userId }}', ...fields, options }),
		continueOnFail: true,
		...extra,
	};
}

/** The same with an Idempotency Key from each item's `key`. */
export function keyedRun(
	sandbox: Sandbox,
	items: IDataObject[],
	options: IDataObject = {},
	extra: Partial<NodeRunOptions> = {},
): NodeRunOptions {
	return sendRun(
		sandbox,
		items,
		{ options: { idempotencyKey: '={{ $json.key }}', ...options } },
		extra,
	);
}

export async function runOnce(options: NodeRunOptions): Promise<NodeRunResult> {
	return nodeResult(await runWorkflow(nodeWorkflow(options)));
}

/** A send registered by another client of the organization, straight at the API (this process
 * never saw it); `apiClockOffsetMs` makes it as of another time (-24 h: yesterday). */
export async function sendAsAnotherClient(
	sandbox: Sandbox,
	userIds: string[],
	extra: IDataObject = {},
	apiClockOffsetMs = 0,
): Promise<string> {
	sandbox.configure({ clockOffsetMs: apiClockOffsetMs });
	try {
		const token = await tokenFor(sandbox);
		return (await send(sandbox, token, userIds, extra)).id;
	} finally {
		sandbox.configure({ clockOffsetMs: 0 });
	}
}

/**
 * Starts `start` and, once it has read the list of sends (its lookup after a lost answer), runs a
 * send of "Another event" to `userId` in the process and with the credential of `like`: a send made
 * after the lost answer, as a busy n8n makes them. Its listing is what proves a send absent (in a
 * quiet sandbox, nothing else does: the lookup ends "unknown"). `like` needs its own credential store (`extra.credentials`).
 */
export async function whileSendingLater<T>(
	sandbox: Sandbox,
	start: () => Promise<T>,
	like: NodeRunOptions,
	userId: string,
): Promise<{ result: T; later: IDataObject }> {
	const listReads = sandbox.counts()[SEND_LIST] ?? 0;
	const running = start();
	await until(() => (sandbox.counts()[SEND_LIST] ?? 0) > listReads);
	const later = await runOnce(
		sendRun(
			sandbox,
			[{ userId }],
			{ title: 'Another event' },
			{ credentials: like.credentials, type: like.type },
		),
	);
	return { result: await running, later: later.items[0].json };
}

/** `run`, while a later send of its process goes to `userId` (whileSendingLater). */
export async function runWithLaterSend(
	sandbox: Sandbox,
	run: NodeRunOptions,
	userId: string,
): Promise<{ result: NodeRunResult; later: IDataObject }> {
	return await whileSendingLater(sandbox, () => runOnce(run), run, userId);
}

/** The rows n8n's store gives the node of keyedRun (its keys: scope "This Node"). */
export const KEYS_ROW = {
	workflow: { id: 'wf-test', active: true },
	node: { id: 'n-test' } as never,
};

/** Values in keyedRun's keys' row, as a run's write would leave them. */
async function recordInKeysRow(store: MemoryProcessedData, values: string[]): Promise<void> {
	await store.checkProcessedAndRecord(values, 'node', KEYS_ROW, { mode: 'entries' });
}

/** What n8n killed between a key's claim and its send leaves in `store`, `minutesAgo`: the claim,
 * no confirmation. */
export async function leaveCrashedClaim(
	store: MemoryProcessedData,
	key: string,
	userIds: string[],
	minutesAgo: number,
): Promise<void> {
	const left = entriesOf(key, [batchContentId(userIds)]);
	const minute = Math.floor(Date.now() / MINUTE_MS) - minutesAgo;
	await recordInKeysRow(store, [
		left.claimed,
		left.pending,
		left.layout,
		left.claimedIn(Math.floor(minute / 10)),
		left.claimedAt(minute),
	]);
}

/** What n8n killed between the two writes of a key's claim leaves in `store`: the claim and its
 * pending mark, without its batches or its time. */
export async function leaveClaimCutShort(store: MemoryProcessedData, key: string): Promise<void> {
	const left = entriesOf(key, []);
	await recordInKeysRow(store, [left.claimed, left.pending]);
}

/**
 * Another run of this process (the same `credentials`) that sends "Another event" to `userId` each
 * time the list of sends is read after its last send: a busy n8n, whose sends made after each lost
 * answer prove the list up to date once listed. `stop()` ends it (after a send under way).
 */
export function keepSendingWhileLookingUp(
	sandbox: Sandbox,
	credentials: NodeRunOptions['credentials'],
	userId: string,
): { stop(): Promise<void> } {
	const listReads = () => sandbox.counts()[SEND_LIST] ?? 0;
	let stopped = false;
	const sending = (async () => {
		let readsSeen = listReads();
		for (;;) {
			await until(() => stopped || listReads() > readsSeen);
			if (stopped) return;
			await runOnce(sendRun(sandbox, [{ userId }], { title: 'Another event' }, { credentials }));
			readsSeen = listReads();
		}
	})();
	return {
		stop: async () => {
			stopped = true;
			await sending;
		},
	};
}
