#!/usr/bin/env node
// The check before packing (`prepack`): dist/ must be exactly what `npm run build` makes of the
// current sources, or nothing is packed. Without it a plain `npm pack` ships a package.json and a
// README (dist/ missing), an old build (sources changed since) or leftovers of removed files.
//   complete: every compiled source has its .js, every asset its copy, every n8n.nodes and
//             n8n.credentials entry of package.json exists;
//   fresh:    no .js older than its .ts, every asset copy identical to its source;
//   nothing else: no file in dist/ without a source (the build empties dist/ first).
// npm runs it on every `npm pack` and `npm publish` (`.npmrc` keeps only the dependencies' install
// scripts off, and package.json's publishConfig turns scripts on for a publish even where the
// user's own npm settings turn them off). Exit code 1 and one line per problem when it fails.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { DIST, ASSET_EXTENSIONS, compiledFolders } = require('./packageLayout');

function filesUnder(root, folder) {
	const start = path.join(root, folder);
	if (!fs.existsSync(start)) return [];
	return fs
		.readdirSync(start, { recursive: true, withFileTypes: true })
		.filter((entry) => entry.isFile())
		.map((entry) =>
			path
				.relative(root, path.join(entry.parentPath ?? entry.path, entry.name))
				.split(path.sep)
				.join('/'),
		);
}

/** What a build of the sources under `root` puts in dist/: dist path -> { source, compiled }. */
function expectedDist(root) {
	const expected = new Map();
	for (const folder of compiledFolders(root)) {
		for (const source of filesUnder(root, folder)) {
			if (source.endsWith('.ts') && !source.endsWith('.d.ts')) {
				expected.set(`${DIST}/${source.replace(/\.ts$/, '.js')}`, { source, compiled: true });
			}
		}
	}
	for (const [folder, extensions] of Object.entries(ASSET_EXTENSIONS)) {
		for (const source of filesUnder(root, folder)) {
			if (extensions.includes(path.extname(source).slice(1)))
				expected.set(`${DIST}/${source}`, { source, compiled: false });
		}
	}
	return expected;
}

/** The problems that make dist/ unfit to pack; empty when it is complete and fresh. */
function checkDist(root) {
	if (!fs.existsSync(path.join(root, DIST))) return [`${DIST}/ does not exist`];
	const problems = [];
	const expected = expectedDist(root);
	for (const [built, { source, compiled }] of expected) {
		const builtPath = path.join(root, built);
		const sourcePath = path.join(root, source);
		if (!fs.existsSync(builtPath)) {
			problems.push(`${built} is missing (from ${source})`);
		} else if (compiled && fs.statSync(builtPath).mtimeMs < fs.statSync(sourcePath).mtimeMs) {
			problems.push(`${built} is older than ${source}`);
		} else if (!compiled && !fs.readFileSync(builtPath).equals(fs.readFileSync(sourcePath))) {
			problems.push(`${built} differs from ${source}`);
		}
	}
	for (const built of filesUnder(root, DIST)) {
		if (!expected.has(built)) problems.push(`${built} has no source (left from an earlier build?)`);
	}
	const { n8n = {} } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
	for (const listed of [...(n8n.nodes ?? []), ...(n8n.credentials ?? [])]) {
		if (!fs.existsSync(path.join(root, listed)))
			problems.push(`${listed}, listed in package.json's n8n section, is not built`);
	}
	return problems;
}

module.exports = { checkDist, expectedDist };

if (require.main === module) {
	const root = process.cwd();
	const problems = checkDist(root);
	if (problems.length > 0) {
		console.error(`Refusing to pack: ${DIST}/ is not a fresh build of the sources.`);
		const shown = 20;
		for (const problem of problems.slice(0, shown)) console.error(`  - ${problem}`);
		if (problems.length > shown) console.error(`  ... and ${problems.length - shown} more`);
		console.error('Run `npm run build` first.');
		process.exit(1);
	}
	// stderr: npm passes a lifecycle script's stdout through, and `npm pack --json` must stay JSON.
	console.error(`${DIST}/ is a fresh build of the sources (${expectedDist(root).size} files).`);
}
