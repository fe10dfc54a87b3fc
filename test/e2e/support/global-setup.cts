// Global setup of the end-to-end tests (jest.e2e.config.js), run once before all the files:
// 1. the real n8n runtimes, installed once each into a cache folder outside the checkout, with their
//    progress printed (the first time takes about 4.5 minutes each): Node 24 + n8n 2.41.1 for all the
//    files, Node 22 + n8n 1.123.81 (the 1.x line) for n8n-1x.e2e.ts;
// 2. the package built (unless scripts/test.js just did it) and packed with `npm pack`, exactly
//    what would be published; its path goes to the tests in COMPANION_PUSH_E2E_TARBALL;
// 3. Debian's Chromium for the editor tests, installed with apt-get when missing. If that is
//    impossible the reason goes to the tests (COMPANION_PUSH_E2E_CHROMIUM_ERROR): the browser
//    tests then fail with it, the others still run.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ensureChromium } from '../../../devkit/chromium.cts';
import {
	ensureRuntime,
	packPackage,
	pinnedVersions,
	RUNTIME_LINES,
} from '../../../devkit/n8n/index.cts';

const log = (line: string) => process.stdout.write(`${line}\n`);

export default async function globalSetup(): Promise<void> {
	const started = Date.now();
	log('\n[e2e] preparing a real n8n');
	for (const line of RUNTIME_LINES) {
		const runtime = await ensureRuntime({ log, line });
		log(
			`[e2e] n8n ${pinnedVersions(line).n8n} runtime at ${runtime.runtimeDir} (${Math.round((Date.now() - started) / 1000)} s)`,
		);
	}

	if (process.env.COMPANION_PUSH_E2E_BUILT !== '1') {
		log('[e2e] npm run build');
		const build = spawnSync('npm', ['run', '--silent', 'build'], {
			cwd: path.resolve(__dirname, '..', '..', '..'),
			stdio: 'inherit',
		});
		if (build.status !== 0) throw new Error('npm run build failed');
	}
	const tarball = packPackage();
	process.env.COMPANION_PUSH_E2E_TARBALL = tarball;
	log(
		`[e2e] packed ${path.basename(tarball)} (${(fs.statSync(tarball).size / 1024).toFixed(0)} KB)`,
	);

	try {
		process.env.COMPANION_PUSH_E2E_CHROMIUM = await ensureChromium({ log });
		delete process.env.COMPANION_PUSH_E2E_CHROMIUM_ERROR;
		log(`[e2e] chromium at ${process.env.COMPANION_PUSH_E2E_CHROMIUM}`);
	} catch (error) {
		process.env.COMPANION_PUSH_E2E_CHROMIUM_ERROR = error.message;
		log(`[e2e] NO CHROMIUM: the editor tests will fail. ${error.message}`);
	}
	log(`[e2e] ready in ${Math.round((Date.now() - started) / 1000)} s\n`);
}
