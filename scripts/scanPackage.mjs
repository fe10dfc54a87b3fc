#!/usr/bin/env node
// `npm run scan`: n8n's own community package scan (@n8n/scan-community-package, the check behind
// n8n's verification) run here, offline, on this checkout and its packed tarball. The published scan
// (`npx @n8n/scan-community-package n8n-nodes-companion-push`) first needs the version on npm with
// provenance and then fetches the GitHub source its provenance names; those network steps cannot run
// before a release. What it then decides is this: its analyzePackage (ESLint with n8n's
// community-nodes plugin and eslint-plugin-n8n-nodes-base, inline eslint-disable comments ignored)
//   1. on the source: package.json and nodes/, credentials/ (.js, .ts, .json), here this checkout;
//   2. on the published files: every .js and the package.json of the unpacked tarball.
// A package passes when neither has an error (warnings do not fail it).
//
// usage: node scripts/scanPackage.mjs [--tarball <file.tgz>] [--source <folder>]
//   without --tarball it packs this package first (npm pack, prepack check on: build it before).
// Prints each side's verdict and ESLint's report; exit code 1 when the scan fails.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const scannerPath = require.resolve('@n8n/scan-community-package/scanner/scanner.mjs');

// The scanner makes a temp folder when it loads (for its downloads) and removes it at exit only in
// tmp's graceful mode; switched on in its own copy of tmp, so no run leaves a folder behind.
createRequire(scannerPath)('tmp').setGracefulCleanup();
const { analyzePackage, SOURCE_FILE_PATTERNS } = await import(pathToFileURL(scannerPath).href);
// The scanner's patterns for the unpacked tarball (written inline in its analyzePackageByName).
const PUBLISHED_FILE_PATTERNS = ['**/*.js', 'package.json'];

function option(name) {
	const index = process.argv.indexOf(name);
	if (index === -1) return undefined;
	const value = process.argv[index + 1];
	if (!value || value.startsWith('--')) throw new Error(`${name} needs a value`);
	return path.resolve(value);
}

function run(command, args, cwd) {
	const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
	if (result.status !== 0)
		throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}`);
	return result.stdout;
}

async function main() {
	const source = option('--source') ?? ROOT;
	const work = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-scan-'));
	try {
		let tarball = option('--tarball');
		if (!tarball) {
			const [packed] = JSON.parse(
				run('npm', ['pack', '--json', '--ignore-scripts=false', '--pack-destination', work], ROOT),
			);
			tarball = path.join(work, packed.filename);
		}
		const unpacked = path.join(work, 'package');
		fs.mkdirSync(unpacked);
		run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);

		let passed = true;
		for (const [side, folder, patterns] of [
			['source', source, SOURCE_FILE_PATTERNS],
			[`published files (${path.basename(tarball)})`, unpacked, PUBLISHED_FILE_PATTERNS],
		]) {
			const result = await analyzePackage(folder, patterns);
			console.log(
				`${result.passed ? 'PASS' : 'FAIL'} n8n scan of the ${side}${result.message ? `: ${result.message}` : ''}`,
			);
			if (result.details) console.log(result.details);
			passed &&= result.passed;
		}
		console.log(
			passed
				? "The package passes n8n's community package scan (offline part)."
				: "The package FAILS n8n's community package scan.",
		);
		return passed;
	} finally {
		fs.rmSync(work, { recursive: true, force: true });
	}
}

main().then(
	(passed) => {
		process.exitCode = passed ? 0 : 1;
	},
	(error) => {
		console.error(error.message);
		process.exitCode = 1;
	},
);
