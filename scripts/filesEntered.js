// How many shipped files one Send enters (a plain one, and a keyed one with an Idempotency Key):
// runs test/structure/filesEntered.measure.cts under jest's coverage and prints the files, then
// the two counts. `node scripts/filesEntered.js`; `--list` prints the files too.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-files-entered-'));
try {
	const out = path.join(temp, 'files.json');
	const jest = spawnSync(
		process.execPath,
		[
			path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
			'--selectProjects',
			'unit',
			'-i',
			'--testMatch',
			'**/test/structure/filesEntered.measure.cts',
			'--coverage',
			'--collectCoverageFrom',
			'nodes/**/*.ts',
			'--coverageReporters',
			'json-summary',
			'--coverageDirectory',
			path.join(temp, 'coverage'),
		],
		{
			cwd: root,
			stdio: ['ignore', 'inherit', 'inherit'],
			env: { ...process.env, FILES_ENTERED_OUT: out },
		},
	);
	if (jest.status !== 0 || !fs.existsSync(out)) {
		console.error('the measuring run failed (see above)');
		process.exitCode = 1;
	} else {
		const files = JSON.parse(fs.readFileSync(out, 'utf8'));
		for (const [send, entered] of Object.entries(files)) {
			if (process.argv.includes('--list')) console.log(`${send}:\n  ${entered.join('\n  ')}`);
			console.log(`${send} Send: ${entered.length} files entered`);
		}
	}
} finally {
	fs.rmSync(temp, { recursive: true, force: true });
}
