// Debian's Chromium for the editor tests (dev tooling, never shipped).
//
// `npx playwright install` cannot work on these machines (no access to Playwright's CDN), so the
// browser tests drive Debian's `chromium` through playwright-core. ensureChromium() returns its path,
// installing it with apt-get (as root: `apt-get update`, then `apt-get install -y chromium`, about
// 30 s) when it is missing. When that is impossible (not root, no apt-get, the install fails) it
// throws an error that says what to do: the browser tests then fail, they never pass silently.
// CHROMIUM_PATH points at another Chromium build.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');

const DEFAULT_PATH = '/usr/bin/chromium';

/** The flags every test browser runs with (headless, offline, no background traffic). */
const CHROMIUM_FLAGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

function chromiumPath() {
	return process.env.CHROMIUM_PATH || DEFAULT_PATH;
}

function isExecutable(file) {
	try {
		fs.accessSync(file, fs.constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

function onPath(command) {
	return (process.env.PATH || '').split(':').some((dir) => dir && isExecutable(`${dir}/${command}`));
}

function run(command, args, log) {
	return new Promise((resolve, reject) => {
		const started = Date.now();
		let output = '';
		const child = spawn(command, args, {
			env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		child.stdout.on('data', (chunk) => (output += chunk));
		child.stderr.on('data', (chunk) => (output += chunk));
		const timer = setInterval(() => log(`[chromium]   ${command} ${args[args.length - 1]}: ${Math.round((Date.now() - started) / 1000)}s`), 15_000);
		child.on('error', (error) => {
			clearInterval(timer);
			reject(error);
		});
		child.on('close', (code) => {
			clearInterval(timer);
			if (code === 0) resolve(Date.now() - started);
			else reject(new Error(`\`${command} ${args.join(' ')}\` failed (exit ${code}):\n${output.split('\n').slice(-20).join('\n')}`));
		});
	});
}

/**
 * Debian's Chromium, installed with apt-get when missing (needs root).
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {Promise<string>} the executable's path
 */
async function ensureChromium({ log = (line) => console.log(line) } = {}) {
	const file = chromiumPath();
	if (isExecutable(file)) return file;
	if (process.env.CHROMIUM_PATH) {
		throw new Error(`CHROMIUM_PATH is ${file}, which is not an executable file.`);
	}
	const manual =
		'The editor tests need Debian\'s Chromium at /usr/bin/chromium: install it with `sudo apt-get update && sudo apt-get install -y chromium` ' +
		'(or set CHROMIUM_PATH to a Chromium executable), then run the tests again.';
	if (!onPath('apt-get')) throw new Error(`Chromium is missing and this machine has no apt-get. ${manual}`);
	if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
		throw new Error(`Chromium is missing and this process is not root, so it cannot install it. ${manual}`);
	}
	log('[chromium] /usr/bin/chromium is missing: installing Debian\'s chromium with apt-get (about 30 s)');
	const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
	try {
		let took = await run('apt-get', [...lockWait, '-q', 'update'], log);
		log(`[chromium]   apt-get update done in ${Math.round(took / 1000)}s`);
		took = await run('apt-get', [...lockWait, '-q', '-y', 'install', 'chromium'], log);
		log(`[chromium]   apt-get install chromium done in ${Math.round(took / 1000)}s`);
	} catch (error) {
		throw new Error(`Installing Chromium failed. ${manual}\n${error.message}`);
	}
	if (!isExecutable(file)) throw new Error(`apt-get installed chromium but ${file} is not there. ${manual}`);
	return file;
}

module.exports = { ensureChromium, chromiumPath, CHROMIUM_FLAGS };
