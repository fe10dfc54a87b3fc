/**
 * Jest runs TypeScript through ts-jest without type checking (tsc does that in `npm test`).
 * Two projects: `unit` (every *.test.ts) and `randomized` (the randomized reliability run, minutes
 * long on its own). `npx jest` runs both; `npm test` runs each alone (`--selectProjects`) at the
 * same time, so the long run goes on beside the unit tests instead of holding one of their workers.
 */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };

const shared = {
	testEnvironment: 'node',
	transform,
	// n8n-core's user folder and encryption key, set before any test file loads n8n-core.
	setupFiles: ['<rootDir>/devkit/env.ts'],
	// Every test runs with marked secrets; any that shows up in an output, error or log line fails it.
	setupFilesAfterEnv: ['<rootDir>/test/reliability/secret-guard.setup.ts'],
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
			testMatch: ['**/*.test.ts'],
			testPathIgnorePatterns: ['/node_modules/', '/test/reliability/randomized\\.test\\.ts$'],
		},
		{
			...shared,
			displayName: 'randomized',
			roots: ['<rootDir>/test/reliability'],
			testMatch: ['<rootDir>/test/reliability/randomized.test.ts'],
		},
	],
};
