/**
 * End-to-end tests in a real n8n 2.41.1 (test/e2e/*.e2e.ts): the packed package installed as a
 * community package, workflows run in a running n8n (`n8n start`, through its REST API) or by n8n's
 * CLI, the editor in headless Chromium. The files run side by side (COMPANION_PUSH_E2E_WORKERS at
 * once, default 3): each has its own n8n user folders, ports, sandbox and temp folders, and most of
 * their time goes to waiting (n8n's polls once a minute, token lives, deliveries); the longest start
 * first (test/e2e/support/sequencer.js). The global setup (test/e2e/support/global-setup.cts) installs
 * the n8n runtimes once (cached outside the checkout), builds and packs the package, and installs
 * Chromium when missing. `npm test` runs this alongside the unit tests; alone:
 * `npx jest -c jest.e2e.config.js`.
 */
const { transform } = require('./jest.config');

module.exports = {
	roots: ['<rootDir>/test/e2e'],
	testMatch: ['**/*.e2e.cts'],
	testEnvironment: '<rootDir>/test/e2e/support/environment.js',
	transform,
	moduleFileExtensions: ['ts', 'cts', 'js', 'json'],
	globalSetup: '<rootDir>/test/e2e/support/global-setup.cts',
	globalTeardown: '<rootDir>/test/e2e/support/global-teardown.js',
	testSequencer: '<rootDir>/test/e2e/support/sequencer.js',
	testTimeout: 10 * 60 * 1000,
	maxWorkers: Number(process.env.COMPANION_PUSH_E2E_WORKERS) || 3,
	verbose: true,
};
