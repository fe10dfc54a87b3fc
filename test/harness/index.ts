/**
 * The tests' one helper module: every helper the test files share lives once in this folder and is
 * imported from here. Sandboxes per describe block or per test (sandboxes.ts), the sandbox's API
 * with plain fetch (api.ts), counts from its request log (requestLog.ts), the action node run in
 * n8n's engine (nodeRuns.ts), transport functions run in a node context (probes.ts), secret checks
 * (secrets.ts), the credential test as n8n's Test button runs it (credentialTest.ts), the trigger
 * polled as an active workflow (trigger.ts) and APIs answering shapes the sandbox never produces
 * (fakeApi.ts). Whatever a test or a describe block starts through them
 * is stopped when it ends, also when a test failed. The engine itself is devkit/ (the benchmark
 * uses it too).
 */
export * from './sandboxes';
export * from './api';
export * from './requestLog';
export * from './nodeRuns';
export * from './probes';
export * from './secrets';
export * from './trigger';
export * from './fakeApi';
export * from './credentialTest';
export * from './keys';
export * from '../../devkit/endpoints';
export { credentialData, storeFor } from '../../devkit/fixtures';
