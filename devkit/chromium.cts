// Debian's Chromium for the editor tests (dev tooling, never shipped).
//
// `npx playwright install` cannot work on these machines (no access to Playwright's CDN), so the
// browser tests drive Debian's `chromium` through playwright-core. ensureChromium() returns its path,
// installing it with apt-get (as root: `apt-get update`, then `apt-get install -y chromium`, about
// 30 s) when it is missing. When that is impossible (not root, no apt-get, the install fails) it
// throws an error that says what to do: the browser tests then fail, they never pass silently.
// CHROMIUM_PATH points at another Chromium build.
import { aptGet, isExecutable, onPath } from './aptGet.cts';

/** The flags every test browser runs with (headless, offline, no background traffic). */
export const CHROMIUM_FLAGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

/** Debian's Chromium, installed with apt-get when missing (needs root); returns the executable's path. */
export async function ensureChromium({
	log = console.log,
}: { log?: (line: string) => void } = {}): Promise<string> {
	const file = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
	if (isExecutable(file)) return file;
	if (process.env.CHROMIUM_PATH)
		throw new Error(`CHROMIUM_PATH is ${file}, which is not an executable file.`);
	const manual =
		"The editor tests need Debian's Chromium at /usr/bin/chromium: install it with `sudo apt-get update && sudo apt-get install -y chromium` " +
		'(or set CHROMIUM_PATH to a Chromium executable), then run the tests again.';
	if (!onPath('apt-get')) {
		throw new Error(`Chromium is missing and this machine has no apt-get. ${manual}`);
	}
	if (process.getuid?.() !== 0)
		throw new Error(
			`Chromium is missing and this process is not root, so it cannot install it. ${manual}`,
		);

	log(
		"[chromium] /usr/bin/chromium is missing: installing Debian's chromium with apt-get (about 30 s)",
	);
	const timedAptGet = async (...args: string[]) => {
		const started = Date.now();
		await aptGet(...args);
		log(
			`[chromium]   apt-get ${args.join(' ')} done in ${Math.round((Date.now() - started) / 1000)}s`,
		);
	};
	try {
		await timedAptGet('update');
		await timedAptGet('-y', 'install', 'chromium');
	} catch (error) {
		throw new Error(`Installing Chromium failed. ${manual}\n${error.message}`); // the message ends with apt-get's stderr
	}
	if (!isExecutable(file))
		throw new Error(`apt-get installed chromium but ${file} is not there. ${manual}`);
	return file;
}
