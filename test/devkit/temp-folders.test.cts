/**
 * A jest run leaves no temp folder behind: every test file makes an n8n user folder (devkit/env.cts,
 * before n8n-core writes its config there), inside the run's one folder that the run removes at its
 * end (jest.config.js). A small run of two files, in two workers, with its own temp folder (TMPDIR),
 * so that what other runs on the machine make does not count.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { defaults } from 'jest-config';

const ROOT = path.resolve(__dirname, '..', '..');
const TWO_TEST_FILES = ['test/harness/attribution.test.cts', 'test/transport/parsing.test.cts'];

describe('temp folders of a jest run', () => {
	let runTmp: string;
	beforeEach(() => {
		runTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'temp-folders-test-'));
	});
	afterEach(() => fs.rmSync(runTmp, { recursive: true, force: true }));

	test('a run of two test files leaves no companion-push-* entry in its temp folder', () => {
		// Not this run's folders: the child must make its own, as a run started by hand does.
		const {
			COMPANION_PUSH_USER_FOLDERS: _runFolder,
			N8N_USER_FOLDER: _userFolder,
			JEST_WORKER_ID: _worker,
			...env
		} = process.env;
		const run = spawnSync(
			path.join(ROOT, 'node_modules', '.bin', 'jest'),
			[
				...TWO_TEST_FILES,
				'--selectProjects',
				'unit',
				'--maxWorkers=2',
				// The usual transform cache (its default follows TMPDIR): a cold one takes minutes.
				`--cacheDirectory=${defaults.cacheDirectory}`,
			],
			{ cwd: ROOT, env: { ...env, TMPDIR: runTmp }, encoding: 'utf8', timeout: 150_000 },
		);
		expect({ status: run.status, output: run.stderr.slice(-2000) }).toEqual({
			status: 0,
			output: expect.stringContaining('Tests:'),
		});
		expect(run.stderr).toMatch(/Test Suites: 2 passed, 2 total/);
		expect(fs.readdirSync(runTmp).filter((entry) => entry.startsWith('companion-push-'))).toEqual(
			[],
		);
	}, 180_000);

	test("this file's n8n user folder is inside this run's folder, itself in the temp folder", () => {
		const runFolder = process.env.COMPANION_PUSH_USER_FOLDERS!;
		expect(path.dirname(runFolder)).toBe(os.tmpdir());
		expect(path.basename(runFolder)).toMatch(/^companion-push-run-/);
		expect(path.dirname(process.env.N8N_USER_FOLDER!)).toBe(runFolder);
	});
});
