/** Jest runs TypeScript through ts-jest without type checking (tsc does that in `npm test`). */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { diagnostics: false }],
	},
	setupFiles: ['<rootDir>/test/setup-env.js'],
	// Every test runs with marked secrets; any that shows up in an output, error or log line fails it.
	setupFilesAfterEnv: ['<rootDir>/test/reliability/secret-guard.setup.ts'],
	testTimeout: 60000,
	maxWorkers: 2,
};
