/**
 * The tests' one entry: every helper the test files share lives once in this folder, and what they
 * need of devkit/ (the engine, the stored credential, the processed-data store, what drives a real
 * n8n; devkit/ is shared with the benchmark, which never imports the tests) is reached from here too.
 *   sandboxes.ts      sandboxes per describe block or per test, stopped when it ends (also on failure)
 *   api.ts            the sandbox's API with plain fetch, as another client of the organization
 *   requestLog.ts     counts and sends read from the sandbox's request log
 *   nodeRuns.ts       the action node run in n8n's engine against a sandbox, its output and context data
 *   probes.ts         transport functions run inside a real node execution
 *   trigger.ts        the trigger polled as an active workflow, against a manual-clock sandbox
 *   fakeApi.ts        APIs answering shapes the sandbox never produces
 *   keys.ts           what n8n's processed-data store holds for an Idempotency Key, and another n8n process sharing it
 *   secrets.ts        what an error exposes, every token n8n stored
 *   credentialTest.ts the credential test as n8n's Test button runs it
 *   secretGuard.ts    the guard run around every jest test (setup/secretGuard.ts): no marked secret in
 *                     any output, error, log, static data, processed-data store or credential field
 *   exactOrUnknown.ts runs and sends of the "exact or unknown" tests
 *   invariants.ts     the reliability invariants the randomized and fault runs check
 *   checkoutCopy.ts   a copy of this checkout as a clone holds it (the packaging tests)
 *   hostTimeZone.ts   n8n's host time zone, set for one test
 *   clock.ts          a clock the test moves, for the package's protocol waits (Retry-After, leases)
 * Jest's setup files are in setup/ (jest.config.js): n8n-core's environment, then the secret guard.
 */
export * from './sandboxes.cts';
export * from './api.cts';
export * from './requestLog.cts';
export * from './nodeRuns.cts';
export * from './probes.cts';
export * from './secrets.cts';
export * from './trigger.cts';
export * from './fakeApi.cts';
export * from './credentialTest.cts';
export * from './keys.cts';
export * from './exactOrUnknown.cts';
export * from './invariants.cts';
export * from './checkoutCopy.cts';
export * from './hostTimeZone.cts';
export * from './clock.cts';
export {
	describeFindings,
	SECRET_MARKER,
	scanned,
	takeFindings,
	watchSecret,
} from './secretGuard.cts';
export * from '../../devkit/endpoints.cts';
export { credentialData, storeFor } from '../../devkit/fixtures.cts';
export {
	buildAdditionalData,
	CredentialStore,
	nodeResult,
	nodeTypes,
	nodeWorkflow,
	registerNodeType,
	retryWorkflow,
	runNode,
	runProbe,
	runWorkflow,
	type NodeRunOptions,
	type NodeRunResult,
	type WorkflowRunOptions,
} from '../../devkit/engine.cts';
export { createPollTarget, runPoll } from '../../devkit/poll.cts';
export { TestCredentialsHelper } from '../../devkit/credentialsHelper.cts';
export { MemoryProcessedData, processedDataStore } from '../../devkit/processedData.cts';
export { cleanEnv, exampleWorkflows, RunResult } from '../../devkit/n8n/index.cts';
export { FAKE_MODEL_NAME, startFakeModel, type FakeModel } from '../../devkit/fakeModel.cts';
export { waitFor } from '../../devkit/waitFor.cts';
