// Lint for the dev-only code (sandbox, tests, devkit, benchmarks, scripts). These never ship, so n8n's
// Cloud rules (no process, no setTimeout, restricted imports) do not apply to them; the shipped
// code is checked by the unchanged official config in eslint.config.mjs (see scripts/lint.js).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
	{ ignores: ['dist/**', 'node_modules/**'] },
	{
		files: ['**/*.cts'],
		extends: [js.configs.recommended, tseslint.configs.recommended],
		rules: {
			'@typescript-eslint/no-explicit-any': 'off',
			'@typescript-eslint/no-unused-vars': [
				'error',
				{ argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
			],
		},
	},
	{
		files: ['**/*.js', '**/*.mjs'],
		extends: [js.configs.recommended],
		languageOptions: { globals: { ...globals.node } },
		rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_' }] },
	},
);
