#!/usr/bin/env node
// The lint gate, in three parts, each ending with 0 errors and 0 warnings:
// 1. n8n's verification, as reviewers run it: `n8n-node lint` at the root (strict mode: it checks
//    eslint.config.mjs is the unchanged template, then runs `eslint .` with the Cloud rules on every
//    `*.ts`). Only the shipped code (nodes/, credentials/) is `.ts`; the dev code is `.cts`, which
//    that config does not match.
// 2. The dev code (sandbox, tests, dev kit, benchmarks, scripts) with eslint.dev.config.mjs.
// 3. The format: `prettier --check .` (.prettierrc.js, .prettierignore). `npm run format` writes it.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

function run(command, args) {
	const result = spawnSync(command, args, {
		cwd: root,
		stdio: 'inherit',
		env: { ...process.env, FORCE_COLOR: '0' },
	});
	if (result.status !== 0) process.exit(result.status ?? 1);
}

// A dev file named `.ts` would be checked with the Cloud rules and typed by nothing (tsconfig.json
// takes only `.cts` in the dev folders): say so before n8n's lint reports its `process` or `fs`.
const listed = spawnSync(
	'git',
	['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'],
	{ cwd: root, encoding: 'utf8' },
);
const misplaced = listed.stdout
	.split('\n')
	.filter((file) => file && !/^(nodes|credentials)\//.test(file));
if (misplaced.length > 0) {
	console.error(
		`Dev TypeScript is .cts (only nodes/ and credentials/ ship as .ts): rename ${misplaced.join(', ')}`,
	);
	process.exit(1);
}

console.log('n8n verification lint (strict, Cloud rules), at the root');
run(bin('n8n-node'), ['lint']);
run(bin('eslint'), ['--max-warnings=0', '.']);

const devPaths = [
	'sandbox',
	'test',
	'devkit',
	'bench',
	'scripts',
	'gulpfile.js',
	'.prettierrc.js',
].filter((p) => fs.existsSync(path.join(root, p)));
console.log(`dev lint on ${devPaths.join(', ')}`);
run(bin('eslint'), ['--max-warnings=0', '--config', 'eslint.dev.config.mjs', ...devPaths]);

console.log('format check (prettier --check; npm run format writes it)');
run(bin('prettier'), ['--check', '.']);
