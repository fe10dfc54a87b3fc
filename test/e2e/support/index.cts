/**
 * The end-to-end tests' one entry: what drives a real n8n (devkit/n8n, shared with `npm start` and
 * the benchmark), and what only these tests need. The jest wiring of jest.e2e.config.js lives here
 * too (global-setup.ts, global-teardown.js, environment.js, sequencer.js).
 *   n8n.ts       N8nHome with the packed package of the global setup, the sandbox's credentials,
 *                builders of Companion Push workflows, what each node asked the sandbox
 *   browser.ts   Debian's Chromium through playwright-core (the editor tests)
 *   screenshots.cts  the editor tests' screenshots, written back to docs/screenshots/ when they change
 *   npmStart.cts `npm start` (plain and --queue) run as a user runs it, its ready block, the examples'
 *                credentials it imported, its ports freed
 * The local mail server (devkit/smtpSink.cts) and the examples' trigger credentials
 * (devkit/exampleTriggers.cts) are shared with `npm start`.
 * The scripted chat model of the AI Agent example is devkit/fakeModel.cts (`npm start` runs it too).
 */
export * from '../../../devkit/n8n/index.cts';
export { waitFor } from '../../../devkit/waitFor.cts';
export {
	FAKE_MODEL_CREDENTIAL,
	FAKE_MODEL_NAME,
	fakeModelCredentialEntry,
	startFakeModel,
	type FakeModel,
	type FakeModelRequest,
} from '../../../devkit/fakeModel.cts';
export {
	DETAIL,
	REFRESH,
	SEND,
	SEND_LIST,
	USER_LIST,
	ACTIVE_USERS,
	CANCEL,
} from '../../../devkit/endpoints.cts';
// Its own N8nHome (the packed package of the global setup, runs as printed) stands for devkit's here.
export { N8nHome } from './n8n.cts';
export * from './n8n.cts';
export * from './browser.cts';
export * from '../../../devkit/smtpSink.cts';
export * from '../../../devkit/exampleTriggers.cts';
export * from './screenshots.cts';
export * from './npmStart.cts';
