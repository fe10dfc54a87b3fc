/**
 * How `npm start` ends (devkit/stopOnSignal.cts), in a real process tree: a process that uses it
 * under an intermediate parent (standing for npm) stops its parts and exits when that parent is
 * killed outright (SIGKILL forwards nothing) and when it gets SIGHUP; it keeps running while its
 * parent lives.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { waitFor } from '../harness/index.cts';

const ROOT = path.resolve(__dirname, '..', '..');

/** The process under test: one part whose stop writes `stopped` to the report file. */
const STOPPABLE = `
require('ts-node').register({ transpileOnly: true, project: ${JSON.stringify(path.join(ROOT, 'tsconfig.json'))} });
const fs = require('node:fs');
const { stopOnSignal } = require(${JSON.stringify(path.join(ROOT, 'devkit', 'stopOnSignal.cts'))});
const report = process.argv[1];
stopOnSignal((line) => fs.appendFileSync(report, line + '\\n'), 'Stopping ...', () => [
	['the part', async () => fs.appendFileSync(report, 'stopped\\n')],
]);
fs.appendFileSync(report, 'running ' + process.pid + '\\n');
setInterval(() => {}, 1000);
`;

/** The stand-in for npm: starts the process under test and stays until killed. */
const PARENT = `
const { spawn } = require('node:child_process');
spawn(process.execPath, ['-e', process.argv[1], process.argv[2]], { stdio: 'ignore' });
setInterval(() => {}, 1000);
`;

const isAlive = (pid: number) => {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
};

describe('stopOnSignal', () => {
	let work: string;
	const started: number[] = [];

	beforeEach(() => {
		work = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-stop-'));
	});
	afterEach(() => {
		for (const pid of started.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
		fs.rmSync(work, { recursive: true, force: true });
	});

	/** Parent and process under test; resolves once the latter runs, with both pids. */
	async function startTree(): Promise<{ parent: number; child: number; report: string }> {
		const report = path.join(work, 'report.txt');
		const parent = spawn(process.execPath, ['-e', PARENT, STOPPABLE, report], { stdio: 'ignore' });
		started.push(parent.pid!);
		const child = await waitFor(
			'the process under test to run',
			() => {
				const text = fs.existsSync(report) ? fs.readFileSync(report, 'utf8') : '';
				const pid = /^running (\d+)$/m.exec(text)?.[1];
				return pid ? Number(pid) : undefined;
			},
			20_000,
			100,
		);
		started.push(child);
		return { parent: parent.pid!, child, report };
	}

	const stopsWithin = (pid: number, ms: number) =>
		waitFor(`process ${pid} to exit`, () => !isAlive(pid) || undefined, ms, 100);

	test('the parent killed with SIGKILL: the parts are stopped and the process exits', async () => {
		const { parent, child, report } = await startTree();
		await new Promise((resolve) => setTimeout(resolve, 1500));
		expect(isAlive(child)).toBe(true); // a living parent stops nothing
		process.kill(parent, 'SIGKILL');
		await stopsWithin(child, 10_000);
		const text = fs.readFileSync(report, 'utf8');
		expect(text).toContain(`The process that started this one (pid ${parent}) is gone.`);
		expect(text).toMatch(/stopped\n[\s\S]*Stopped\.\n$/);
	}, 30_000);

	test('SIGHUP (the terminal closed): the parts are stopped and the process exits', async () => {
		const { child, report } = await startTree();
		process.kill(child, 'SIGHUP');
		await stopsWithin(child, 10_000);
		expect(fs.readFileSync(report, 'utf8')).toMatch(/Stopping \.\.\.\n[\s\S]*stopped\n/);
	}, 30_000);
});
