#!/usr/bin/env node
// `npm test`: every check, and one summary line that CI reads.
//   1. build      npm run build
// then alone:
//   2. e2e        end-to-end tests in a real n8n and its editor (jest.e2e.config.js): the first run
//                 installs the n8n runtimes (about 4.5 and 5.7 min) and Chromium (about 30 s)
// then, side by side:
//   3. jest       unit and integration tests (jest.config.js, project `unit`)
//      randomized the randomized reliability run (project `randomized`, minutes long on its own)
//   4. lint       node scripts/lint.js (n8n's verification lint on what ships + the dev lint)
//   5. typecheck  tsc --noEmit -p tsconfig.json
// The e2e output shows as it comes; each of the others is printed in one block when it ends.
// A failed build stops there; otherwise every step runs, so one report shows everything.
// The LAST line is exactly `N passed, N failed`: the tests of every jest run, where a failed
// non-jest step (build, lint, typecheck) or a jest run that ended without results counts as one
// failure. The exit code is non-zero when anything failed.
'use strict';

const { spawn } = require('node:child_process');
const { stripVTControlCharacters } = require('node:util');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs a command to its end; its output goes to this console, or into `logFile` when one is given. */
function run(command, args, env = {}, logFile) {
	return new Promise((resolve) => {
		const output = logFile ? fs.openSync(logFile, 'w') : 'inherit';
		const child = spawn(command, args, {
			cwd: ROOT,
			stdio: ['inherit', output, output],
			env: { ...process.env, ...env },
		});
		if (logFile) fs.closeSync(output);
		child.on('error', (error) => {
			console.error(`${command}: ${error.message}`);
			resolve(1);
		});
		child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
	});
}

function readJestResults(file) {
	try {
		return JSON.parse(fs.readFileSync(file, 'utf8'));
	} catch {
		return undefined;
	}
}

/** The first failures of a jest run, a few lines each: the summary is the part of a long log
 * that gets read, so it says what failed and why. */
function firstFailures(results, most = 3) {
	const failures = [];
	for (const file of results.testResults ?? []) {
		const failedTests = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
		for (const test of failedTests)
			failures.push({ name: test.fullName, message: (test.failureMessages ?? [])[0] ?? '' });
		if (failedTests.length === 0 && file.failureMessage)
			failures.push({ name: path.basename(file.name), message: file.failureMessage });
	}
	return failures.slice(0, most).map(({ name, message }) => {
		const lines = stripVTControlCharacters(message)
			.split('\n')
			.map((line) => line.trim())
			.filter(Boolean)
			.slice(0, 6)
			.map((line) => `      ${line.slice(0, 300)}`);
		return [`  - ${name}`, ...lines].join('\n');
	});
}

function duration(ms) {
	const seconds = Math.round(ms / 1000);
	return seconds < 60
		? `${seconds}s`
		: `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** `=== name: command args` (without the results file). */
const heading = (step) =>
	`=== ${step.name}: ${[path.basename(step.command), ...step.args.filter((arg) => !arg.startsWith('--outputFile'))].join(' ')}`;

async function main() {
	const resultsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-test-'));
	const build = {
		name: 'build',
		command: npm,
		args: ['run', '--silent', 'build'],
		stopOnFailure: true,
	};
	const lint = { name: 'lint', command: process.execPath, args: [path.join(__dirname, 'lint.js')] };
	const typecheck = {
		name: 'typecheck',
		command: bin('tsc'),
		args: ['--noEmit', '-p', 'tsconfig.json'],
	};
	const jest = {
		name: 'jest',
		command: bin('jest'),
		args: [
			'--selectProjects',
			'unit',
			'--json',
			`--outputFile=${path.join(resultsDir, 'jest.json')}`,
		],
		results: 'jest.json',
	};
	// In its own jest process (its own worker), not in the unit tests' pool.
	const randomized = {
		name: 'randomized',
		command: bin('jest'),
		args: [
			'--selectProjects',
			'randomized',
			'--json',
			`--outputFile=${path.join(resultsDir, 'randomized.json')}`,
		],
		results: 'randomized.json',
	};
	const e2e = {
		name: 'e2e',
		command: bin('jest'),
		args: [
			'-c',
			'jest.e2e.config.js',
			'--json',
			`--outputFile=${path.join(resultsDir, 'e2e.json')}`,
		],
		results: 'e2e.json',
		env: { COMPANION_PUSH_E2E_BUILT: '1' },
	};
	// The stages run one after the other, the steps of a stage side by side. The end-to-end tests run
	// alone: on 2 cores, the unit tests beside them made their bounded waits (a poll's gap, a
	// deployment's start) miss by seconds, and theirs too; alone, both stages fit well inside CI's
	// time. The first step of a stage prints as it runs, the others into a file, printed when they
	// end.
	const stages = [[build], [e2e], [jest, randomized, lint, typecheck]];
	const steps = [build, lint, typecheck, jest, randomized, e2e]; // the order of the summary

	let passed = 0;
	let failed = 0;
	const report = new Map();
	const failuresOf = new Map();
	const started = Date.now();

	const runStep = async (step, logFile) => {
		if (!logFile) console.log(`\n${heading(step)}`);
		const stepStarted = Date.now();
		const code = await run(step.command, step.args, step.env, logFile);
		const took = duration(Date.now() - stepStarted);
		if (logFile) {
			console.log(
				`\n${heading(step)}   (ran alongside, ${took})\n${fs.readFileSync(logFile, 'utf8').trimEnd()}`,
			);
			console.log(`=== ${step.name}: end`);
		}
		if (!step.results) {
			if (code !== 0) failed += 1;
			report.set(
				step,
				`${step.name.padEnd(10)} ${code === 0 ? 'ok  ' : 'FAIL'}  (exit ${code}, ${took})`,
			);
			return code;
		}
		const results = readJestResults(path.join(resultsDir, step.results));
		if (!results) {
			failed += 1;
			report.set(
				step,
				`${step.name.padEnd(10)} FAIL  ended without results (exit ${code}, ${took})`,
			);
			return code;
		}
		passed += results.numPassedTests;
		failed += results.numFailedTests;
		failuresOf.set(step, firstFailures(results));
		const broken =
			results.numRuntimeErrorTestSuites +
			(code !== 0 && results.numFailedTests === 0 && results.numRuntimeErrorTestSuites === 0
				? 1
				: 0);
		failed += broken;
		report.set(
			step,
			`${step.name.padEnd(10)} ${code === 0 ? 'ok  ' : 'FAIL'}  ${results.numPassedTests} passed, ${results.numFailedTests} failed` +
				`${results.numPendingTests ? `, ${results.numPendingTests} skipped` : ''}${broken ? `, ${broken} suite(s) could not run` : ''}` +
				` (${results.numTotalTestSuites} files, ${took})`,
		);
		return code;
	};

	let stopped = false;
	for (const stage of stages) {
		const codes = await Promise.all(
			stage.map((step, index) =>
				runStep(step, index === 0 ? undefined : path.join(resultsDir, `${step.name}.log`)),
			),
		);
		if (stage.some((step, index) => step.stopOnFailure && codes[index] !== 0)) {
			stopped = true;
			break;
		}
	}
	fs.rmSync(resultsDir, { recursive: true, force: true });

	console.log(`\n=== summary (${duration(Date.now() - started)})`);
	for (const step of steps) if (report.has(step)) console.log(report.get(step));
	for (const step of steps)
		if (failuresOf.get(step)?.length)
			console.log(`${step.name}, first failures:\n${failuresOf.get(step).join('\n')}`);
	if (stopped) console.log('(stopped: nothing can be tested without a build)');
	console.log(`${passed} passed, ${failed} failed`);
	process.exitCode = failed > 0 ? 1 : 0;
}

main().catch((error) => {
	console.error(error);
	console.log('0 passed, 1 failed');
	process.exitCode = 1;
});
