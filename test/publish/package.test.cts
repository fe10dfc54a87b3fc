/**
 * The package as npm would publish it, from a copy of this checkout (as a fresh clone holds it):
 *   - before any build, `npm pack` with scripts on (as the project's tools pack: the project's .npmrc
 *     turns them off) refuses, and so does `npm publish` (publishConfig turns them on), also for
 *     someone whose own npm settings turn scripts off;
 *   - after the build, a local `npm publish` is refused: package.json asks for provenance, which
 *     only the publish workflow can give; nothing reaches the registry (a local stand-in);
 *   - `npm run build` over a dist/ holding files of an older build leaves none of them;
 *   - the tarball: package.json's n8n section complete, n8n's own loader loads both nodes and the
 *     credential with their codex (search words) and icons in both themes, nothing that must not
 *     ship (tests, sandbox, bench, scripts, docs, examples, TypeScript sources, source maps);
 *   - n8n's community package scan (scripts/scanPackage.mjs) passes on the source and the tarball,
 *     and fails a tarball with a console call, an install script and a runtime dependency.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import { PackageDirectoryLoader } from 'n8n-core';

import { cleanEnv, copyCheckout, REPO_ROOT } from '../harness/index.cts';

type Run = { status: number | null; stdout: string; stderr: string };

function run(command: string, args: string[], cwd: string): Run {
	const result = spawnSync(command, args, {
		cwd,
		encoding: 'utf8',
		env: cleanEnv({ keepNpmConfig: true }),
		timeout: 240_000,
	});
	return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function mustRun(command: string, args: string[], cwd: string): string {
	const result = run(command, args, cwd);
	if (result.status !== 0)
		throw new Error(
			`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`,
		);
	return result.stdout;
}

/** `npm pack` into `into`; the tarball's path, or undefined when npm wrote none. */
function pack(stage: string, into: string, extraArgs: string[]): Run & { tarball?: string } {
	fs.mkdirSync(into, { recursive: true });
	const result = run('npm', ['pack', '--json', '--pack-destination', into, ...extraArgs], stage);
	const tarball = fs.readdirSync(into).find((file) => file.endsWith('.tgz'));
	return { ...result, tarball: tarball && path.join(into, tarball) };
}

/** A stand-in npm registry on 127.0.0.1 that knows no package and records every request. */
async function startFakeRegistry(): Promise<{
	url: string;
	requests: string[];
	close: () => Promise<void>;
}> {
	const requests: string[] = [];
	const server = http.createServer((request, response) => {
		requests.push(`${request.method} ${request.url}`);
		request.resume();
		response.writeHead(request.method === 'GET' ? 404 : 500, {
			'content-type': 'application/json',
		});
		response.end('{}');
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/`,
		requests,
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

/** What tells npm (its ci-info) it runs in a CI, GitHub Actions or GitLab among them. */
const CI_VARIABLES =
	/^(CI|CONTINUOUS_INTEGRATION|BUILD_NUMBER|RUN_ID)$|^(GITHUB|GITLAB|ACTIONS|RUNNER)_/;

/**
 * `npm publish` as a developer would run it on their machine, against `registry`: not in a CI
 * (npm decides from these variables whether provenance is possible), logged in with a made-up
 * token, and with `userSettings` as their own npm settings. Asynchronous, so the stand-in
 * registry in this process can answer.
 */
function publishLocally(stage: string, registry: string, userSettings: string[]): Promise<Run> {
	const userconfig = path.join(stage, '..', 'user-npmrc');
	const host = registry.replace(/^http:/, '');
	fs.writeFileSync(
		userconfig,
		[`${host}:_authToken=made-up-token`, 'update-notifier=false', ...userSettings, ''].join('\n'),
	);
	const env = cleanEnv({ keepNpmConfig: true });
	for (const name of Object.keys(env)) if (CI_VARIABLES.test(name)) delete env[name];
	return new Promise((resolve) => {
		const child = spawn(
			'npm',
			['publish', '--registry', registry, '--userconfig', userconfig, '--loglevel', 'error'],
			{ cwd: stage, env },
		);
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk) => (stdout += chunk));
		child.stderr.on('data', (chunk) => (stderr += chunk));
		child.on('close', (status) => resolve({ status, stdout, stderr }));
	});
}

const tarEntries = (tarball: string) =>
	mustRun('tar', ['-tzf', tarball], os.tmpdir())
		.split('\n')
		.filter(Boolean)
		.map((entry) => entry.replace(/^package\//, ''));

const STALE_FILES = [
	'dist/nodes/Removed.node.js',
	'dist/nodes/CompanionPush/CompanionPush.node.js.map',
];

describe('the published package, from a clean build', () => {
	let work: string;
	let stage: string;
	let packedBeforeBuild: ReturnType<typeof pack>;
	let publishedBeforeBuild: Run;
	let requestsBeforeBuild: string[];
	let publishedAfterBuild: Run;
	let registry: Awaited<ReturnType<typeof startFakeRegistry>>;
	let tarball: string;
	let entries: string[];
	let unpacked: string;
	let manifest: {
		name: string;
		main?: string;
		dependencies?: object;
		scripts: Record<string, string>;
		n8n: { nodes: string[]; credentials: string[] };
	};

	beforeAll(async () => {
		work = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-package-'));
		stage = path.join(work, 'checkout');
		copyCheckout(stage);

		registry = await startFakeRegistry();

		packedBeforeBuild = pack(stage, path.join(work, 'before-build'), ['--ignore-scripts=false']);
		publishedBeforeBuild = await publishLocally(stage, registry.url, ['ignore-scripts=true']);
		requestsBeforeBuild = [...registry.requests];

		for (const file of STALE_FILES) {
			fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
			fs.writeFileSync(path.join(stage, file), '// from an older build');
		}
		mustRun('npm', ['run', '--silent', 'build'], stage);
		const packed = pack(stage, path.join(work, 'packed'), ['--ignore-scripts=false']);
		if (packed.status !== 0 || !packed.tarball)
			throw new Error(`npm pack after the build failed:\n${packed.stderr}`);
		tarball = packed.tarball;
		entries = tarEntries(tarball);
		publishedAfterBuild = await publishLocally(stage, registry.url, []);

		// Unpacked beside a node_modules that has what n8n provides (n8n-workflow, zod, luxon).
		unpacked = path.join(work, 'installed', 'n8n-nodes-companion-push');
		fs.mkdirSync(unpacked, { recursive: true });
		mustRun('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1'], work);
		fs.symlinkSync(
			path.join(REPO_ROOT, 'node_modules'),
			path.join(work, 'installed', 'node_modules'),
			'dir',
		);
		manifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'package.json'), 'utf8'));
	}, 300_000);

	afterAll(async () => {
		await registry?.close();
		if (work) fs.rmSync(work, { recursive: true, force: true });
	});

	describe('packing', () => {
		test('before a build, npm pack with scripts on refuses and says why, and writes no tarball', () => {
			expect(packedBeforeBuild.status).not.toBe(0);
			expect(packedBeforeBuild.stderr).toContain(
				'Refusing to pack: dist/ is not a fresh build of the sources.',
			);
			expect(packedBeforeBuild.stderr).toContain('dist/ does not exist');
			expect(packedBeforeBuild.stderr).toContain('Run `npm run build` first.');
			expect(packedBeforeBuild.tarball).toBeUndefined();
		});

		test('before a build, npm publish refuses even with scripts turned off in the user npm settings, before any request', () => {
			expect(publishedBeforeBuild.status).not.toBe(0);
			expect(publishedBeforeBuild.stderr).toContain(
				'Refusing to pack: dist/ is not a fresh build of the sources.',
			);
			expect(requestsBeforeBuild).toEqual([]);
		});

		test('after a build, a local npm publish is refused for want of provenance, and nothing is uploaded', () => {
			expect(publishedAfterBuild.status).not.toBe(0);
			expect(publishedAfterBuild.stderr).toContain(
				'Automatic provenance generation not supported for provider: null',
			);
			expect(publishedAfterBuild.stderr).not.toContain('made-up-token');
			expect(registry.requests.filter((request) => !request.startsWith('GET '))).toEqual([]);
		});

		test('the build empties dist/ first: files of an older build are neither in dist/ nor in the tarball', () => {
			for (const file of STALE_FILES) {
				expect(fs.existsSync(path.join(stage, file))).toBe(false);
				expect(entries).not.toContain(file);
			}
		});
	});

	describe('the tarball', () => {
		test('holds package.json, README.md, LICENSE and dist/ only', () => {
			expect(entries.filter((entry) => !entry.startsWith('dist/')).sort()).toEqual([
				'LICENSE',
				'README.md',
				'package.json',
			]);
			expect(entries.filter((entry) => entry.startsWith('dist/nodes/')).length).toBeGreaterThan(10);
		});

		test('nothing that must not ship: no tests, sandbox, bench, scripts, docs, examples, TypeScript sources or source maps', () => {
			const unwanted = entries.filter(
				(entry) =>
					/(^|\/)(test|sandbox|bench|scripts|docs|examples|\.github)\//.test(entry) ||
					/\.(ts|map|png|tgz)$/.test(entry) ||
					entry.includes('node_modules/'),
			);
			expect(unwanted).toEqual([]);
		});

		test('every node and credential file of the n8n section, and each node codex file beside it', () => {
			const listed = [...manifest.n8n.nodes, ...manifest.n8n.credentials];
			expect(listed.length).toBe(3);
			expect(listed.filter((file) => !entries.includes(file))).toEqual([]);
			const codexFiles = manifest.n8n.nodes.map((file) => `${file}on`);
			expect(codexFiles.filter((file) => !entries.includes(file))).toEqual([]);
		});

		test('package.json as published: no main, no runtime dependencies, no install-time scripts', () => {
			expect(manifest.main).toBeUndefined();
			expect(manifest.dependencies).toBeUndefined();
			const installTime = ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish'];
			expect(Object.keys(manifest.scripts).filter((name) => installTime.includes(name))).toEqual(
				[],
			);
		});
	});

	describe("loaded by n8n's own package loader (n8n-core's PackageDirectoryLoader)", () => {
		let loader: PackageDirectoryLoader;
		beforeAll(async () => {
			loader = new PackageDirectoryLoader(unpacked);
			await loader.loadAll();
		});

		/** A loaded icon URL (icons/<package>/<path in the package>) as a tarball entry. */
		const iconEntry = (url: string) => url.replace(`icons/${manifest.name}/`, '');

		test('both nodes and the credential load', () => {
			expect(loader.types.nodes.map((node) => node.name).sort()).toEqual([
				'companionPush',
				'companionPushTrigger',
			]);
			expect(loader.types.credentials.map((credential) => credential.name)).toEqual([
				'companionPushApi',
			]);
		});

		test('each node has its codex: category and the search words the node panel finds it by', () => {
			for (const node of loader.types.nodes) {
				expect(node.codex?.categories).toEqual(['Communication']);
				const alias = (node.codex?.alias ?? []).map((word) => word.toLowerCase());
				expect(alias).toEqual(
					expect.arrayContaining(['push', 'notification', 'mobile', 'alert', 'phone', 'app']),
				);
			}
		});

		test('each node and the credential have a light and a dark icon, both in the tarball', () => {
			const owners = [...loader.types.nodes, ...loader.types.credentials] as Array<{
				name: string;
				iconUrl?: unknown;
			}>;
			for (const { name, iconUrl } of owners) {
				expect({ name, iconUrl }).toEqual({
					name,
					iconUrl: { light: expect.any(String), dark: expect.any(String) },
				});
				const { light, dark } = iconUrl as { light: string; dark: string };
				expect(light).not.toBe(dark);
				expect(
					[iconEntry(light), iconEntry(dark)].filter((file) => !entries.includes(file)),
				).toEqual([]);
			}
		});
	});

	describe("n8n's community package scan (scripts/scanPackage.mjs, offline)", () => {
		const scan = (source: string, packed: string) =>
			run(
				process.execPath,
				[
					path.join(REPO_ROOT, 'scripts', 'scanPackage.mjs'),
					'--source',
					source,
					'--tarball',
					packed,
				],
				REPO_ROOT,
			);

		test('passes on the source and on the tarball', () => {
			const result = scan(stage, tarball);
			expect(result.stderr).toBe('');
			expect(result.stdout).toContain('PASS n8n scan of the source');
			expect(result.stdout).toContain('PASS n8n scan of the published files');
			expect(result.status).toBe(0);
		}, 120_000);

		test('fails a tarball with a console call, an install script and a runtime dependency, naming the rules', () => {
			const broken = path.join(work, 'broken');
			fs.cpSync(unpacked, path.join(broken, 'package'), { recursive: true });
			fs.appendFileSync(
				path.join(broken, 'package', manifest.n8n.nodes[0]),
				'\nconsole.log("debug");\n',
			);
			const brokenManifest = {
				...manifest,
				scripts: { ...manifest.scripts, postinstall: 'node setup.js' },
				dependencies: { 'left-pad': '1.3.0' },
			};
			fs.writeFileSync(
				path.join(broken, 'package', 'package.json'),
				JSON.stringify(brokenManifest, null, 2),
			);
			mustRun('tar', ['-czf', 'broken.tgz', 'package'], broken);

			const result = scan(stage, path.join(broken, 'broken.tgz'));
			expect(result.status).toBe(1);
			expect(result.stdout).toContain('PASS n8n scan of the source');
			expect(result.stdout).toContain(
				'FAIL n8n scan of the published files (broken.tgz): ESLint violations found',
			);
			for (const rule of [
				'no-console',
				'@n8n/community-nodes/no-forbidden-lifecycle-scripts',
				'@n8n/community-nodes/no-runtime-dependencies',
			]) {
				expect(result.stdout).toContain(rule);
			}
		}, 120_000);
	});
});
