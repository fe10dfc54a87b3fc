#!/usr/bin/env node
// The lint gate, in two parts:
// 1. n8n's verification: the real `n8n-node lint` (strict mode: it first checks eslint.config.mjs
//    is the unchanged template, then runs `eslint .` with the Cloud rules) over exactly what ships:
//    package.json, eslint.config.mjs, tsconfig, credentials/, nodes/ and icons/, staged in a temp folder.
// 2. The dev code (sandbox, tests, the dev kit they share with the benchmarks, benchmarks, scripts)
//    with eslint.dev.config.mjs.
// 3. The format: `prettier --check .` with the n8n starter's settings (.prettierrc.js; what it skips:
//    .prettierignore). `npm run format` writes it.
// All three must end with 0 errors and 0 warnings.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

function run(command, args, cwd) {
	const result = spawnSync(command, args, {
		cwd,
		stdio: 'inherit',
		env: { ...process.env, FORCE_COLOR: '0' },
	});
	if (result.status !== 0) process.exit(result.status ?? 1);
}

const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-lint-'));
try {
	for (const entry of [
		'package.json',
		'eslint.config.mjs',
		'tsconfig.json',
		'credentials',
		'nodes',
		'icons',
	]) {
		fs.cpSync(path.join(root, entry), path.join(stage, entry), { recursive: true });
	}
	fs.symlinkSync(path.join(root, 'node_modules'), path.join(stage, 'node_modules'), 'dir');
	console.log('n8n verification lint (strict, Cloud rules) on the shipped code');
	run(bin('n8n-node'), ['lint'], stage);
	run(bin('eslint'), ['--max-warnings=0', '.'], stage);
} finally {
	fs.rmSync(stage, { recursive: true, force: true });
}

const devFolders = [
	'sandbox',
	'test',
	'devkit',
	'bench',
	'scripts',
	'gulpfile.js',
	'.prettierrc.js',
].filter((p) => fs.existsSync(path.join(root, p)));
console.log(`dev lint on ${devFolders.join(', ')}`);
run(bin('eslint'), ['--max-warnings=0', '--config', 'eslint.dev.config.mjs', ...devFolders], root);

console.log('format check (prettier --check; npm run format writes it)');
run(bin('prettier'), ['--check', '.'], root);
