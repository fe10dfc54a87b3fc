/**
 * Jest runs TypeScript through ts-jest without type checking (tsc does that in `npm test`).
 * Two projects: `unit` (every *.test.cts; `npm run test:unit`) and `randomized` (the randomized
 * reliability run, minutes long on its own). `npx jest` runs both; `npm test` runs each alone
 * (`--selectProjects`) at the same time, so the long run goes on beside the unit tests instead of
 * holding one of their workers.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// One temp folder per run for the n8n user folders of the test files (devkit/env.cts makes one per
// file, inside it), removed when this main jest process exits, failed tests or not: a worker's own
// exit is not reliably reached. Workers inherit the variable, so they make no folder of their own.
if (!process.env.COMPANION_PUSH_USER_FOLDERS) {
	const runFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-run-'));
	process.env.COMPANION_PUSH_USER_FOLDERS = runFolder;
	process.on('exit', () => fs.rmSync(runFolder, { recursive: true, force: true }));
}

const transform = { '^.+\\.c?ts$': ['ts-jest', { diagnostics: false }] };

const shared = {
	testEnvironment: 'node',
	transform,
	// The harness's setup files: n8n-core's user folder and encryption key, set before any test file
	// loads n8n-core; then the secret guard (every test runs with marked secrets, and any that shows up
	// in an output, error, log line, static data, the processed-data store or a wrong credential field fails it).
	// The dev code is `.cts` (only what ships is `.ts`): see scripts/lint.js.
	moduleFileExtensions: ['ts', 'cts', 'js', 'json'],
	setupFiles: ['<rootDir>/test/harness/setup/n8nEnv.cts'],
	setupFilesAfterEnv: ['<rootDir>/test/harness/setup/secretGuard.cts'],
};

module.exports = {
	// Also read by jest.e2e.config.js.
	transform,
	testTimeout: 60000,
	maxWorkers: 2,
	projects: [
		{
			...shared,
			displayName: 'unit',
			// devkit/ holds no tests: it is a root so that watch mode reruns the tests when the engine harness changes.
			roots: ['<rootDir>/test', '<rootDir>/devkit'],
			testMatch: ['**/*.test.cts'],
			testPathIgnorePatterns: ['/node_modules/', '/test/reliability/randomized\\.test\\.cts$'],
		},
		{
			...shared,
			displayName: 'randomized',
			roots: ['<rootDir>/test/reliability'],
			testMatch: ['<rootDir>/test/reliability/randomized.test.cts'],
		},
	],
};
