import { entriesOf } from '../../nodes/CompanionPush/neverTwice/keysRow';
import { processedDataStore } from '../../devkit/processedData.cts';
import type { MemoryProcessedData } from '../../devkit/processedData.cts';
export { storeContext } from '../../devkit/processedData.cts';
export type { StoreContext } from '../../devkit/processedData.cts';
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import { registerNodeType } from '../../devkit/engine.cts';
import type { Sandbox } from '../../sandbox/index.cts';

/** Whether the keys' row of the test workflow's node holds `key` as a used event: `claimed`
 * without `pending` (see idempotencyKeys.ts). */
export function keptAsUsed(
	store: MemoryProcessedData,
	key: string,
	workflowId = 'wf-test',
	context = 'n:n-test',
): boolean {
	const entries = entriesOf(key, []);
	return (
		store.holds(workflowId, context, entries.claimed) &&
		!store.holds(workflowId, context, entries.pending)
	);
}

/** The process memory module of one n8n process, to shorten its waits or reset it. */
export type ProcessStateModule = typeof import('../../devkit/processState.cts');

/** Another n8n process (a queue-mode worker): its own copy of the package's modules, so its own
 * process memory, sharing n8n's database (the harness store), the credential and n8n-workflow. Its
 * node runs as node type `type`. */
export function anotherProcess(type: string): ProcessStateModule {
	const workflowModule: unknown = jest.requireActual('n8n-workflow');
	let processState: ProcessStateModule | undefined;
	jest.isolateModules(() => {
		jest.doMock('n8n-workflow', () => workflowModule);
		/* eslint-disable @typescript-eslint/no-require-imports */
		const { CompanionPush } = require('../../nodes/CompanionPush/CompanionPush.node');
		processState = require('../../devkit/processState.cts');
		/* eslint-enable @typescript-eslint/no-require-imports */
		registerNodeType(type, new CompanionPush());
	});
	jest.dontMock('n8n-workflow');
	return processState!;
}

/**
 * For a describe block whose node runs in this n8n process and in another one sharing n8n's store
 * (node type `companionPushInAnotherProcess`), against `sandbox`: the organization's users once it
 * started; before each test, the store emptied, both processes' memory reset and their waits
 * shortened (to `timings`); after each, the real clock back; both reset again at the end.
 */
export function useTwoProcesses(
	sandbox: Sandbox,
	timings: Parameters<typeof useTimings>[0] = {
		lookupSettleMs: 200,
		lookupEvidenceWaitMs: 1_000,
		heldKeyWaitMs: 300,
	},
) {
	const shared = {} as {
		store: MemoryProcessedData;
		otherProcess: ProcessStateModule;
		users: string[];
	};
	beforeAll(async () => {
		shared.store = await processedDataStore();
		shared.otherProcess = anotherProcess('companionPushInAnotherProcess');
		shared.users = sandbox.orgs.primary.userIds;
	});
	beforeEach(() => {
		shared.store.reset();
		resetProcessState();
		shared.otherProcess.resetProcessState();
		useTimings(timings);
		shared.otherProcess.useTimings(timings);
	});
	afterEach(() => jest.useRealTimers());
	afterAll(() => {
		resetProcessState();
		shared.otherProcess.resetProcessState();
	});
	return shared;
}
