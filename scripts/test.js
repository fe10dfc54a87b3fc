#!/usr/bin/env node
// `npm test`: every check, in order, and one summary line that CI reads.
//   1. build      npm run build
//   2. lint       node scripts/lint.js (n8n's verification lint on what ships + the dev lint)
//   3. typecheck  tsc --noEmit -p tsconfig.json
//   4. jest       unit and integration tests (jest.config.js, project `unit`), and at the same time
//      randomized the randomized reliability run (project `randomized`, minutes long on its own):
//                 its output is shown when it ends
//   5. e2e        end-to-end tests in a real n8n and its editor (jest.e2e.config.js): the first run
//                 installs the n8n runtime (about 4.5 min) and Chromium (about 30 s)
// A failed build stops there; otherwise every step runs, so one report shows everything.
// The LAST line is exactly `N passed, N failed`: the tests of every jest run, where a failed
// non-jest step (build, lint, typecheck) or a jest run that ended without results counts as one
// failure. The exit code is non-zero when anything failed.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs a command; its output goes to the terminal, or when `quiet` into `output` (the step that
 * runs beside another shows its output once it ends, so the two do not interleave). */
function run(command, args, env = {}, quiet = false) {
	return new Promise((resolve) => {
		const output = [];
		const child = spawn(command, args, { cwd: ROOT, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit', env: { ...process.env, ...env } });
		if (quiet) {
			child.stdout.on('data', (chunk) => output.push(chunk));
			child.stderr.on('data', (chunk) => output.push(chunk));
		}
		child.on('error', (error) => {
			console.error(`${command}: ${error.message}`);
			resolve({ code: 1, output });
		});
		child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
	});
}

function readJestResults(file) {
	try {
		return JSON.parse(fs.readFileSync(file, 'utf8'));
	} catch {
		return undefined;
	}
}

function duration(ms) {
	const seconds = Math.round(ms / 1000);
	return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

async function main() {
	const resultsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-test-'));
	const steps = [
		{ name: 'build', command: npm, args: ['run', '--silent', 'build'], stopOnFailure: true },
		{ name: 'lint', command: process.execPath, args: [path.join(__dirname, 'lint.js')] },
		{ name: 'typecheck', command: bin('tsc'), args: ['--noEmit', '-p', 'tsconfig.json'] },
		{
			name: 'jest',
			command: bin('jest'),
			args: ['--selectProjects', 'unit', '--json', `--outputFile=${path.join(resultsDir, 'jest.json')}`],
			results: 'jest.json',
			// Started with the unit tests, in its own jest process (its own worker), not in their pool.
			beside: {
				name: 'randomized',
				command: bin('jest'),
				args: ['--selectProjects', 'randomized', '--json', `--outputFile=${path.join(resultsDir, 'randomized.json')}`],
				results: 'randomized.json',
			},
		},
		{
			name: 'e2e',
			command: bin('jest'),
			args: ['-c', 'jest.e2e.config.js', '--json', `--outputFile=${path.join(resultsDir, 'e2e.json')}`],
			results: 'e2e.json',
			env: { COMPANION_PUSH_E2E_BUILT: '1' },
		},
	];

	let passed = 0;
	let failed = 0;
	const report = [];
	const started = Date.now();
	const commandLine = (step) => [path.basename(step.command), ...step.args.filter((arg) => !arg.startsWith('--outputFile'))].join(' ');

	/** Adds a finished step to the report and the totals; false when nothing more can run. */
	function record(step, code, took) {
		if (step.results) {
			const results = readJestResults(path.join(resultsDir, step.results));
			if (results) {
				passed += results.numPassedTests;
				failed += results.numFailedTests;
				const broken = results.numRuntimeErrorTestSuites + (code !== 0 && results.numFailedTests === 0 && results.numRuntimeErrorTestSuites === 0 ? 1 : 0);
				failed += broken;
				report.push(
					`${step.name.padEnd(10)} ${code === 0 ? 'ok  ' : 'FAIL'}  ${results.numPassedTests} passed, ${results.numFailedTests} failed` +
						`${results.numPendingTests ? `, ${results.numPendingTests} skipped` : ''}${broken ? `, ${broken} suite(s) could not run` : ''}` +
						` (${results.numTotalTestSuites} files, ${took})`,
				);
			} else {
				failed += 1;
				report.push(`${step.name.padEnd(10)} FAIL  ended without results (exit ${code}, ${took})`);
			}
			return true;
		}
		if (code !== 0) failed += 1;
		report.push(`${step.name.padEnd(10)} ${code === 0 ? 'ok  ' : 'FAIL'}  (exit ${code}, ${took})`);
		if (code !== 0 && step.stopOnFailure) {
			report.push(`(stopped: nothing can be tested without a build)`);
			return false;
		}
		return true;
	}

	for (const step of steps) {
		console.log(`\n=== ${step.name}: ${commandLine(step)}${step.beside ? `\n=== ${step.beside.name} (beside it, output when it ends): ${commandLine(step.beside)}` : ''}`);
		const stepStarted = Date.now();
		const beside = step.beside && run(step.beside.command, step.beside.args, step.beside.env, true).then((outcome) => ({ ...outcome, took: duration(Date.now() - stepStarted) }));
		const { code } = await run(step.command, step.args, step.env);
		const took = duration(Date.now() - stepStarted);
		if (!record(step, code, took)) break;
		if (beside) {
			const outcome = await beside;
			console.log(`\n=== ${step.beside.name}: output`);
			process.stdout.write(Buffer.concat(outcome.output));
			record(step.beside, outcome.code, outcome.took);
		}
	}
	fs.rmSync(resultsDir, { recursive: true, force: true });

	console.log(`\n=== summary (${duration(Date.now() - started)})`);
	for (const line of report) console.log(line);
	console.log(`${passed} passed, ${failed} failed`);
	process.exitCode = failed > 0 ? 1 : 0;
}

main().catch((error) => {
	console.error(error);
	console.log('0 passed, 1 failed');
	process.exitCode = 1;
});
