#!/usr/bin/env node
// `npm run release -- patch|minor|major [--dry-run]`: makes a release commit and its tag, locally.
//   1. checks: a clean working tree on main, a tag vX.Y.Z not taken yet, notes under Unreleased;
//   2. bumps the version in package.json and package-lock.json;
//   3. moves CHANGELOG.md's Unreleased notes under "## [X.Y.Z] - <today, UTC>";
//   4. commits the three files ("Release vX.Y.Z") and tags vX.Y.Z (annotated, with the notes).
// It pushes nothing: `git push origin main vX.Y.Z` then starts the publish workflow, which tests,
// builds and publishes that tag to npm with provenance. With --dry-run (or `npm run release minor
// --dry-run`, where npm keeps the flag for itself and sets npm_config_dry_run) it prints the same
// plan and changes nothing. Works in the current folder (npm runs scripts in the package root).
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { releaseChangelog } = require('./changelog');

const LEVELS = ['patch', 'minor', 'major'];
const RELEASE_BRANCH = 'main';
const RELEASED_FILES = ['package.json', 'package-lock.json', 'CHANGELOG.md'];

function parseArguments(argv, env) {
	const levels = argv.filter((argument) => LEVELS.includes(argument));
	const unknown = argv.filter((argument) => !LEVELS.includes(argument) && argument !== '--dry-run');
	if (levels.length !== 1 || unknown.length > 0) {
		throw new Error(
			`usage: npm run release -- ${LEVELS.join('|')} [--dry-run]${unknown.length ? ` (unknown: ${unknown.join(' ')})` : ''}`,
		);
	}
	return {
		level: levels[0],
		dryRun: argv.includes('--dry-run') || env.npm_config_dry_run === 'true',
	};
}

function nextVersion(version, level) {
	const parts = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
	if (!parts) throw new Error(`package.json's version "${version}" is not MAJOR.MINOR.PATCH`);
	const [major, minor, patch] = parts.slice(1).map(Number);
	if (level === 'major') return `${major + 1}.0.0`;
	if (level === 'minor') return `${major}.${minor + 1}.0`;
	return `${major}.${minor}.${patch + 1}`;
}

function git(root, args) {
	const result = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
	if (result.error) throw result.error;
	return { ok: result.status === 0, output: result.stdout.trim(), error: result.stderr.trim() };
}

function gitOrFail(root, args) {
	const result = git(root, args);
	if (!result.ok) throw new Error(`git ${args.join(' ')} failed: ${result.error}`);
	return result.output;
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const writeJson = (file, value) => fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/** What the release would do, and the reasons it cannot (empty when it can). */
function planRelease(root, level, date) {
	const from = readJson(path.join(root, 'package.json')).version;
	const version = nextVersion(from, level);
	const tag = `v${version}`;
	const problems = [];
	const status = git(root, ['status', '--porcelain']);
	if (!status.ok) problems.push(`not a git work tree: ${status.error}`);
	else if (status.output)
		problems.push('the working tree has uncommitted changes: commit or stash them first');
	const branch = git(root, ['rev-parse', '--abbrev-ref', 'HEAD']).output;
	if (branch !== RELEASE_BRANCH)
		problems.push(`releases are made from ${RELEASE_BRANCH}, this is ${branch || 'no branch'}`);
	if (git(root, ['rev-parse', '--quiet', '--verify', `refs/tags/${tag}`]).ok)
		problems.push(`the tag ${tag} exists already`);
	let changelog;
	try {
		changelog = releaseChangelog(
			fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8'),
			version,
			date,
		);
	} catch (error) {
		problems.push(error.code === 'ENOENT' ? 'there is no CHANGELOG.md' : error.message);
	}
	const files = RELEASED_FILES.filter((file) => fs.existsSync(path.join(root, file)));
	return { from, version, tag, date, changelog, files, problems };
}

function describe(plan, level) {
	const indent = (text) => text.replace(/^(?=.)/gm, '      ');
	return [
		`  version       ${plan.from} -> ${plan.version} (${level})`,
		`  CHANGELOG.md  the Unreleased notes become "## [${plan.version}] - ${plan.date}":`,
		plan.changelog ? indent(plan.changelog.notes) : '      (none)',
		`  commit        "Release ${plan.tag}" with ${plan.files.join(', ')}`,
		`  tag           ${plan.tag} (annotated, with the notes)`,
		`  then, by you  git push origin ${RELEASE_BRANCH} ${plan.tag}   (the publish workflow publishes ${plan.version} to npm)`,
	].join('\n');
}

function release(root, plan) {
	const packagePath = path.join(root, 'package.json');
	writeJson(packagePath, { ...readJson(packagePath), version: plan.version });
	const lockPath = path.join(root, 'package-lock.json');
	if (fs.existsSync(lockPath)) {
		const lock = readJson(lockPath);
		lock.version = plan.version;
		if (lock.packages?.['']) lock.packages[''].version = plan.version;
		writeJson(lockPath, lock);
	}
	fs.writeFileSync(path.join(root, 'CHANGELOG.md'), plan.changelog.text);
	gitOrFail(root, ['add', '--', ...plan.files]);
	gitOrFail(root, ['commit', '--quiet', '-m', `Release ${plan.tag}`]);
	gitOrFail(root, ['tag', '-a', plan.tag, '-m', `Release ${plan.tag}`, '-m', plan.changelog.notes]);
}

function main() {
	const { level, dryRun } = parseArguments(process.argv.slice(2), process.env);
	const root = process.cwd();
	const plan = planRelease(root, level, new Date().toISOString().slice(0, 10));
	console.log(
		`${dryRun ? 'Dry run, nothing is changed. The release would be:' : 'Release:'}\n${describe(plan, level)}`,
	);
	if (plan.problems.length > 0) {
		console.error(
			`\n${dryRun ? 'It would refuse' : 'Refused, nothing changed'}:\n${plan.problems.map((problem) => `  - ${problem}`).join('\n')}`,
		);
		return 1;
	}
	if (dryRun) return 0;
	release(root, plan);
	console.log(
		`\nCommitted and tagged ${plan.tag}. Publish it with: git push origin ${RELEASE_BRANCH} ${plan.tag}`,
	);
	return 0;
}

try {
	process.exitCode = main();
} catch (error) {
	console.error(error.message);
	process.exitCode = 1;
}
