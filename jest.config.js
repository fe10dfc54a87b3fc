/** Jest runs TypeScript through ts-jest without type checking (tsc does that in `npm test`). */
module.exports = {
	testEnvironment: 'node',
	// devkit/ holds no tests: it is a root so that watch mode reruns the tests when the engine harness changes.
	roots: ['<rootDir>/test', '<rootDir>/devkit'],
	testMatch: ['**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { diagnostics: false }],
	},
	// n8n-core's user folder and encryption key, set before any test file loads n8n-core.
	setupFiles: ['<rootDir>/devkit/env.ts'],
	// Every test runs with marked secrets; any that shows up in an output, error or log line fails it.
	setupFilesAfterEnv: ['<rootDir>/test/reliability/secret-guard.setup.ts'],
	testTimeout: 60000,
	maxWorkers: 2,
};
