/**
 * End-to-end tests in a real n8n 2.41.1 (test/e2e/*.e2e.ts): the packed package installed as a
 * community package, workflows run by n8n's CLI and by `n8n start`, the editor in headless
 * Chromium. Serial (one n8n at a time), long timeouts. The global setup installs the n8n runtime
 * once (cached outside the checkout), builds and packs the package, and installs Chromium when
 * missing. `npm test` runs this after the unit tests; alone: `npx jest -c jest.e2e.config.js`.
 */
const { transform } = require('./jest.config');

module.exports = {
	roots: ['<rootDir>/test/e2e'],
	testMatch: ['**/*.e2e.ts'],
	transform,
	globalSetup: '<rootDir>/test/e2e/global-setup.ts',
	globalTeardown: '<rootDir>/test/e2e/global-teardown.js',
	testSequencer: '<rootDir>/test/e2e/sequencer.js',
	testTimeout: 10 * 60 * 1000,
	maxWorkers: 1,
	verbose: true,
};
