/**
 * `npm run release` (scripts/release.js) in a tiny git repository made for each test, offline:
 * the dry run prints the plan and changes nothing (also in the `npm run release minor --dry-run`
 * form, where npm keeps the flag); a real run bumps package.json and package-lock.json, moves the
 * changelog's Unreleased notes under the version with today's date, commits and tags; each refusal
 * changes nothing. Also: this repository's CHANGELOG.md is in the form the release reads.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { cleanEnv, REPO_ROOT } from '../harness/index.cts';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { releaseChangelog, unreleasedNotes } = require('../../scripts/changelog') as {
	releaseChangelog: (
		text: string,
		version: string,
		date: string,
	) => { text: string; notes: string };
	unreleasedNotes: (text: string) => { notes: string };
};

const RELEASE_SCRIPT = path.join(REPO_ROOT, 'scripts', 'release.js');
const NOTES = '### Fixed\n\n- The widget no longer spins forever.';
const CHANGELOG = `# Changelog\n\nIntro text.\n\n## [Unreleased]\n\n${NOTES}\n\n## [1.4.2] - 2026-01-05\n\n### Added\n\n- The widget.\n`;

const today = () => new Date().toISOString().slice(0, 10);

function git(cwd: string, ...args: string[]): string {
	const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
	if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
	return result.stdout.trim();
}

/** A repository on main with one commit: package.json and its lockfile at 1.4.2, and CHANGELOG.md. */
function makeFixture(): string {
	const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-release-'));
	git(repo, 'init', '--quiet', '--initial-branch=main');
	for (const [key, value] of [
		['user.name', 'Release Test'],
		['user.email', 'release-test@example.invalid'],
		['commit.gpgsign', 'false'],
		['tag.gpgsign', 'false'],
	]) {
		git(repo, 'config', key, value);
	}
	const manifest = {
		name: 'fixture-package',
		version: '1.4.2',
		description: 'kept as it is',
		scripts: { release: `node ${JSON.stringify(RELEASE_SCRIPT)}` },
	};
	fs.writeFileSync(path.join(repo, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
	const lock = {
		name: 'fixture-package',
		version: '1.4.2',
		lockfileVersion: 3,
		requires: true,
		packages: { '': { name: 'fixture-package', version: '1.4.2' } },
	};
	fs.writeFileSync(path.join(repo, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
	fs.writeFileSync(path.join(repo, 'CHANGELOG.md'), CHANGELOG);
	git(repo, 'add', '.');
	git(repo, 'commit', '--quiet', '-m', 'Initial');
	return repo;
}

/** Everything a release could change: the three files, HEAD, the tags, the work tree's status. */
function snapshot(repo: string) {
	const read = (file: string) => fs.readFileSync(path.join(repo, file), 'utf8');
	return {
		files: ['package.json', 'package-lock.json', 'CHANGELOG.md'].map(read),
		head: git(repo, 'rev-parse', 'HEAD'),
		tags: git(repo, 'tag', '--list'),
		status: git(repo, 'status', '--porcelain'),
	};
}

function release(repo: string, args: string[]) {
	const result = spawnSync(process.execPath, [RELEASE_SCRIPT, ...args], {
		cwd: repo,
		encoding: 'utf8',
		env: cleanEnv(),
	});
	return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('npm run release', () => {
	let repo: string;
	beforeEach(() => {
		repo = makeFixture();
	});
	afterEach(() => fs.rmSync(repo, { recursive: true, force: true }));

	test('--dry-run prints the version, the changelog heading with the notes, the commit and tag, and changes nothing', () => {
		const before = snapshot(repo);
		const dayBefore = today();
		const result = release(repo, ['minor', '--dry-run']);
		expect(result.stderr).toBe('');
		expect(result.status).toBe(0);
		expect(result.stdout).toContain('Dry run, nothing is changed.');
		expect(result.stdout).toContain('1.4.2 -> 1.5.0 (minor)');
		expect(
			[dayBefore, today()].some((day) => result.stdout.includes(`"## [1.5.0] - ${day}"`)),
		).toBe(true);
		expect(result.stdout).toContain('- The widget no longer spins forever.');
		expect(result.stdout).toContain(
			'"Release v1.5.0" with package.json, package-lock.json, CHANGELOG.md',
		);
		expect(result.stdout).toContain('git push origin main v1.5.0');
		expect(snapshot(repo)).toEqual(before);
	});

	test('patch and major levels', () => {
		expect(release(repo, ['patch', '--dry-run']).stdout).toContain('1.4.2 -> 1.4.3 (patch)');
		expect(release(repo, ['major', '--dry-run']).stdout).toContain('1.4.2 -> 2.0.0 (major)');
	});

	test('`npm run release minor --dry-run` (npm keeps the flag and sets npm_config_dry_run) is a dry run too', () => {
		const before = snapshot(repo);
		const result = spawnSync('npm', ['run', '--silent', 'release', 'minor', '--dry-run'], {
			cwd: repo,
			encoding: 'utf8',
			env: cleanEnv({ keepNpmConfig: true }),
		});
		expect(result.status).toBe(0);
		expect(result.stdout).toContain('Dry run, nothing is changed.');
		expect(snapshot(repo)).toEqual(before);
	});

	test('a real run bumps both manifests, moves the notes under the version, commits the three files and tags vX.Y.Z', () => {
		const before = git(repo, 'rev-parse', 'HEAD');
		const dayBefore = today();
		const result = release(repo, ['minor']);
		expect(result.stderr).toBe('');
		expect(result.status).toBe(0);
		expect(result.stdout).toContain('Committed and tagged v1.5.0.');
		const day = [dayBefore, today()].find((candidate) =>
			fs
				.readFileSync(path.join(repo, 'CHANGELOG.md'), 'utf8')
				.includes(`## [1.5.0] - ${candidate}`),
		);
		expect(day).toBeDefined();

		const manifest = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
		expect(manifest).toEqual(
			expect.objectContaining({
				name: 'fixture-package',
				version: '1.5.0',
				description: 'kept as it is',
			}),
		);
		const lock = JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8'));
		expect([lock.version, lock.packages[''].version]).toEqual(['1.5.0', '1.5.0']);
		expect(fs.readFileSync(path.join(repo, 'CHANGELOG.md'), 'utf8')).toBe(
			`# Changelog\n\nIntro text.\n\n## [Unreleased]\n\n## [1.5.0] - ${day}\n\n${NOTES}\n\n## [1.4.2] - 2026-01-05\n\n### Added\n\n- The widget.\n`,
		);

		expect(git(repo, 'rev-parse', 'HEAD~1')).toBe(before);
		expect(git(repo, 'log', '-1', '--format=%s')).toBe('Release v1.5.0');
		expect(git(repo, 'show', '--name-only', '--format=', 'HEAD').split('\n').sort()).toEqual([
			'CHANGELOG.md',
			'package-lock.json',
			'package.json',
		]);
		expect(git(repo, 'status', '--porcelain')).toBe('');
		expect(git(repo, 'cat-file', '-t', 'v1.5.0')).toBe('tag'); // annotated, so `git push --follow-tags` takes it too
		expect(git(repo, 'rev-parse', 'v1.5.0^{commit}')).toBe(git(repo, 'rev-parse', 'HEAD'));
		expect(git(repo, 'tag', '-l', '--format=%(contents)', 'v1.5.0')).toContain(
			'- The widget no longer spins forever.',
		);
	});

	test.each<[string, (repo: string) => void, string]>([
		[
			'uncommitted changes',
			(repo) => fs.writeFileSync(path.join(repo, 'notes.txt'), 'draft'),
			'the working tree has uncommitted changes',
		],
		[
			'not on main',
			(repo) => git(repo, 'checkout', '--quiet', '-b', 'feature'),
			'releases are made from main, this is feature',
		],
		[
			'the tag exists already',
			(repo) => git(repo, 'tag', 'v1.4.3'),
			'the tag v1.4.3 exists already',
		],
	])('refuses, changing nothing: %s', (_case, setUp, reason) => {
		setUp(repo);
		const before = snapshot(repo);
		const result = release(repo, ['patch']);
		expect(result.status).toBe(1);
		expect(result.stderr).toContain('Refused, nothing changed');
		expect(result.stderr).toContain(reason);
		expect(snapshot(repo)).toEqual(before);
	});

	test('refuses a second release with nothing under Unreleased, and the dry run says it would', () => {
		expect(release(repo, ['patch']).status).toBe(0);
		const before = snapshot(repo);
		for (const args of [['patch'], ['patch', '--dry-run']]) {
			const result = release(repo, args);
			expect(result.status).toBe(1);
			expect(result.stderr).toContain('the Unreleased section of CHANGELOG.md is empty');
		}
		expect(snapshot(repo)).toEqual(before);
	});

	test('a missing or unknown level is a usage error', () => {
		for (const args of [[], ['huge'], ['minor', '--force']]) {
			const result = release(repo, args);
			expect(result.status).toBe(1);
			expect(result.stderr).toContain('usage: npm run release -- patch|minor|major [--dry-run]');
		}
	});
});

describe("this repository's CHANGELOG.md", () => {
	const text = fs.readFileSync(path.join(REPO_ROOT, 'CHANGELOG.md'), 'utf8');

	test('has an Unreleased section and a 0.1.0 entry, and a release keeps every earlier entry', () => {
		expect(unreleasedNotes(text).notes).not.toBe('');
		expect(text).toMatch(/^## \[0\.1\.0\] - \d{4}-\d{2}-\d{2}$/m);
		const released = releaseChangelog(text, '9.9.9', '2099-01-01').text;
		expect(released).toContain('## [Unreleased]\n\n## [9.9.9] - 2099-01-01\n');
		expect(released.slice(released.indexOf('## [0.1.0]'))).toBe(
			text.slice(text.indexOf('## [0.1.0]')),
		);
	});
});
