/**
 * `npm start` (scripts/start.js) as a user runs it: it prints the editor URL and the login, the
 * login works, the credential and the examples are there, n8n runs in the computer's time zone, the
 * printed "Try the ERP example" command notifies, and SIGTERM / Ctrl-C stop everything.
 * A restart without --home moves a user folder an earlier version kept in the runtime cache to the
 * data folder, and the printed command notifies again (the new sandbox starts empty).
 * A start with a real service reuses the user folder (nothing imported again) and, with the
 * COMPANION_PUSH_* settings, points the credential at "a real service" (here a sandbox of this
 * test process) without starting a sandbox of its own. Run through npm (`npm start`) as a
 * background job, it stops, n8n's port closed and no process of it left, when npm's pid gets
 * SIGTERM or SIGINT, and when npm is killed outright.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
	expectExampleCredentials,
	findFreePort,
	N8nRestClient,
	OWNER_EMAIL,
	portIsFree,
	ready,
	request,
	runStart,
	stopLeftRunning,
	waitFor,
	type Started,
} from './support/index.cts';
import { startSandbox, type Sandbox } from '../../sandbox/index.cts';
import { locateRuntime } from '../../devkit/n8n/install.cts';

/** Every process below `pid` (by the parent pids of /proc: Linux), children first found first. */
function descendants(pid: number): number[] {
	const parentOf = new Map<number, number>();
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
			// the fields after the command's closing parenthesis: state, then the parent pid
			parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
		} catch {
			// gone meanwhile
		}
	}
	const found: number[] = [];
	for (let queue = [pid]; queue.length > 0; ) {
		const parent = queue.shift()!;
		for (const [child, itsParent] of parentOf)
			if (itsParent === parent && !found.includes(child)) {
				found.push(child);
				queue.push(child);
			}
	}
	return found;
}

/** The sends the sandbox on `port` accepted (its request log). */
async function sandboxSends(port: number): Promise<number> {
	const { requests } = (await request(`http://127.0.0.1:${port}/__sandbox/log`)).json;
	return requests.filter(
		(entry: { method: string; path: string; status: number }) =>
			entry.method === 'POST' && entry.path === '/push-notification/send' && entry.status === 202,
	).length;
}

/**
 * Pastes the start's "Try the ERP example" command into a shell, as a user does, and waits for the
 * send it makes in the sandbox on `sandboxPort`; the sandbox's sends then.
 */
async function tryTheErpExample(output: string, sandboxPort: number): Promise<number> {
	const command = output
		.split('\n')
		.map((line) => line.trim())
		.find((line) => line.startsWith('curl ') && line.includes('/webhook/erp-event'));
	expect(command).toBeDefined();
	const before = await sandboxSends(sandboxPort);
	execFileSync('bash', ['-c', command!], { stdio: 'ignore', timeout: 30_000 });
	return await waitFor(
		'the ERP example to send',
		async () => {
			const sends = await sandboxSends(sandboxPort);
			return sends > before && sends;
		},
		60_000,
		500,
	);
}

const isAlive = (pid: number) => {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
};

describe('npm start', () => {
	let home: string;
	let port: number;
	let sandboxPort: number;
	let running: Started | undefined;
	let realService: Sandbox;
	/** This file's folders: the user folder (home) and the restart's cache and data folders. */
	let folders: string;

	beforeAll(async () => {
		folders = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-start-'));
		home = path.join(folders, 'home');
		fs.mkdirSync(home);
		port = await findFreePort();
		sandboxPort = await findFreePort();
		realService = await startSandbox({ port: 0 });
	});

	afterAll(async () => {
		await stopLeftRunning(running);
		await realService?.stop();
		fs.rmSync(folders, { recursive: true, force: true });
	});

	test('first start: editor URL, login and sandbox printed; the login works; credential and examples are there; SIGTERM stops it all', async () => {
		const started = Date.now();
		fs.chmodSync(home, 0o755); // a folder that existed, open to others: npm start closes it
		running = runStart(
			[
				'--skip-build',
				'--home',
				home,
				'--port',
				String(port),
				'--sandbox-port',
				String(sandboxPort),
			],
			// This computer's time zone, as Node reads it (n8n's own default is America/New_York).
			{ TZ: 'Asia/Kolkata', GENERIC_TIMEZONE: '' },
		);
		const url = await ready(running);
		const output = running.output();
		expect(url).toBe(`http://127.0.0.1:${port}`);
		expect(output).toContain("Time zone: Asia/Kolkata (this computer's;");
		// The Companion Push credential's line names it alone (the mail server has its own line).
		expect(output).toContain(
			`Credential: Companion Push sandbox -> http://127.0.0.1:${sandboxPort}\n`,
		);
		expect(output).toContain(`Email:     ${OWNER_EMAIL}`);
		// The owner's password is made for this folder (not a published one), readable by its owner only.
		const passwordFile = path.join(home, 'owner-password');
		const ownerPassword = fs.readFileSync(passwordFile, 'utf8').trim();
		expect(ownerPassword).not.toBe('CompanionPush-Owner-1');
		expect(ownerPassword.length).toBeGreaterThanOrEqual(20);
		expect(output).toContain(`Password:  ${ownerPassword}`);
		expect(fs.statSync(passwordFile).mode & 0o777).toBe(0o600);
		expect(fs.statSync(home).mode & 0o777).toBe(0o700);
		expect(output).toContain(`Sandbox:   http://127.0.0.1:${sandboxPort}`);
		expect(output).toMatch(
			/Importing the example workflows: ai-agent-notify.json, erp-event-to-push.json, follow-up-report.json, safety-alert-escalation.json, scheduled-digest.json/,
		);
		process.stdout.write(
			`[e2e] npm start (fresh user folder, no build) ready in ${Math.round((Date.now() - started) / 1000)} s\n`,
		);

		expect((await request(`${url}/`)).status).toBe(200); // the editor
		const rest = new N8nRestClient(url);
		const user = await rest.login(OWNER_EMAIL, ownerPassword);
		expect(user.email).toBe(OWNER_EMAIL);
		const workflows = await rest.listWorkflows();
		expect(workflows.map((workflow) => [workflow.id, workflow.active]).sort()).toEqual([
			['cpExampleAiAgent', false],
			['cpExampleDigest', false],
			['cpExampleErpEvent', true],
			['cpExampleEscalation', false],
			['cpExampleFollowUp', true],
		]);
		// The safety alert example's mail server and the AI Agent example's model are the ones npm
		// start runs, and they answer.
		const { mailPort, modelUrl } = await expectExampleCredentials(rest, output, home);
		const modelCredential = await rest.call(
			'GET',
			'/credentials/cpFakeModelCredential?includeData=true',
		);
		expect(modelCredential.data.url).toBe(modelUrl);
		expect((await request(`${modelUrl}/models`)).json.data[0].id).toBe('fake-scripted-model');
		expect((await request(`http://127.0.0.1:${sandboxPort}/__sandbox/credentials`)).status).toBe(
			200,
		);
		expect((await rest.call('GET', '/settings')).timezone).toBe('Asia/Kolkata');
		expect(await tryTheErpExample(output, sandboxPort)).toBe(1);

		running.child.kill('SIGTERM');
		expect(await running.exited).toEqual({ code: 0, signal: null });
		expect(running.output()).toMatch(/Stopped\.\s*$/);
		expect(await portIsFree(port)).toBe(true);
		expect(await portIsFree(sandboxPort)).toBe(true);
		expect(await portIsFree(Number(new URL(modelUrl).port))).toBe(true);
		expect(await portIsFree(mailPort)).toBe(true);
	});

	test('a restart without --home: the user folder of an earlier version, in the runtime cache, is moved to the data folder; the ERP command notifies again', async () => {
		await stopLeftRunning(running);
		// A cache and a data folder of its own: the runtime's files linked in, and this test's user
		// folder put where an earlier version kept it (runtime-<key>/n8n-home of an older runtime).
		const runtime = locateRuntime();
		const cache = path.join(folders, 'cache');
		const data = path.join(folders, 'data');
		const cachedRuntime = path.join(
			cache,
			'n8n-nodes-companion-push',
			path.basename(runtime.runtimeDir),
		);
		fs.mkdirSync(cachedRuntime, { recursive: true });
		for (const entry of fs.readdirSync(runtime.runtimeDir))
			if (entry !== 'n8n-home')
				fs.symlinkSync(path.join(runtime.runtimeDir, entry), path.join(cachedRuntime, entry));
		const oldHome = path.join(
			cache,
			'n8n-nodes-companion-push',
			'runtime-0123456789ab',
			'n8n-home',
		);
		fs.mkdirSync(path.dirname(oldHome), { recursive: true });
		fs.renameSync(home, oldHome);
		const dataHome = path.join(data, 'n8n-nodes-companion-push', 'n8n-home');
		try {
			running = runStart(
				['--skip-build', '--port', String(port), '--sandbox-port', String(sandboxPort)],
				{ XDG_CACHE_HOME: cache, XDG_DATA_HOME: data, COMPANION_PUSH_N8N_HOME: '' },
			);
			const url = await ready(running);
			const output = running.output();
			expect(output).toContain(`moved ${oldHome}`);
			expect(output).toContain(`to ${dataHome}`);
			expect(fs.existsSync(oldHome)).toBe(false);
			// The builder's folder, with the owner's password and the examples as they were.
			expect(output).not.toContain('Importing the example workflows');
			const rest = new N8nRestClient(url);
			await rest.login(
				OWNER_EMAIL,
				fs.readFileSync(path.join(dataHome, 'owner-password'), 'utf8').trim(),
			);
			expect((await rest.listWorkflows()).length).toBe(5);
			// The sandbox is new and empty: the example's key, used before the restart, sends again.
			expect(output).toContain('the Idempotency Keys of 1 Companion Push node(s) are forgotten');
			expect(await tryTheErpExample(output, sandboxPort)).toBe(1);

			running.child.kill('SIGTERM');
			expect(await running.exited).toEqual({ code: 0, signal: null });
		} finally {
			await stopLeftRunning(running);
			// Back where the other tests use it.
			if (fs.existsSync(dataHome)) fs.renameSync(dataHome, home);
		}
	});

	test('second start with COMPANION_PUSH_* set: the folder is reused, the credential points at that service, no sandbox; Ctrl-C stops it', async () => {
		await stopLeftRunning(running);
		const started = Date.now();
		const { clientId, clientSecret, refreshToken } = realService.orgs.primary;
		running = runStart(['--skip-build', '--home', home, '--port', String(port)], {
			COMPANION_PUSH_BASE_URL: realService.baseUrl,
			COMPANION_PUSH_CLIENT_ID: clientId,
			COMPANION_PUSH_CLIENT_SECRET: clientSecret,
			COMPANION_PUSH_REFRESH_TOKEN: refreshToken,
		});
		const url = await ready(running);
		const output = running.output();
		process.stdout.write(
			`[e2e] npm start (reused user folder, no build) ready in ${Math.round((Date.now() - started) / 1000)} s\n`,
		);
		expect(output).toContain(`Real service: ${realService.baseUrl}`);
		expect(output).toContain(
			`Importing the credential "Companion Push sandbox" (${realService.baseUrl})`,
		);
		expect(output).not.toContain('Importing the example workflows');
		expect(output).not.toContain('Sandbox:');

		const rest = new N8nRestClient(url);
		// The owner's password made for this folder at the first start is kept.
		await rest.login(
			OWNER_EMAIL,
			fs.readFileSync(path.join(home, 'owner-password'), 'utf8').trim(),
		);
		// The examples published with the sandbox are unpublished with a real service.
		expect(output).toContain('unpublished the example "Companion Push example: follow-up report"');
		expect(
			(await rest.listWorkflows()).map((workflow) => [workflow.id, workflow.active]).sort(),
		).toEqual([
			['cpExampleAiAgent', false],
			['cpExampleDigest', false],
			['cpExampleErpEvent', false],
			['cpExampleEscalation', false],
			['cpExampleFollowUp', false],
		]);
		const credential = await rest.call('GET', '/credentials/cpSandboxCredential?includeData=true');
		expect(credential.data.baseUrl).toBe(realService.baseUrl);
		const before = realService.requestLog().length;
		const tested = await rest.call('POST', '/credentials/test', {
			credentials: {
				id: credential.id,
				name: credential.name,
				type: credential.type,
				data: credential.data,
			},
		});
		expect(tested).toMatchObject({ status: 'OK' });
		const calls = realService
			.requestLog()
			.slice(before)
			.map((entry) => `${entry.method} ${entry.path} ${entry.status}`);
		expect(calls).toContain('GET /user-device/users 200');

		running.child.kill('SIGINT');
		expect(await running.exited).toEqual({ code: 0, signal: null });
		expect(await portIsFree(port)).toBe(true);
	});

	test.each([['SIGTERM'], ['SIGINT'], ['SIGKILL']] as const)(
		'npm start as a background job, %s sent to npm: n8n, sandbox and model stopped, nothing left',
		async (signal) => {
			await stopLeftRunning(running);
			running = runStart(
				[
					'--skip-build',
					'--home',
					home,
					'--port',
					String(port),
					'--sandbox-port',
					String(sandboxPort),
				],
				{},
				{ throughNpm: true },
			);
			const url = await ready(running);
			expect(url).toBe(`http://127.0.0.1:${port}`);
			// This folder was used with a real service (the test before): its keys stay.
			expect(running.output()).toContain(
				'Idempotency Keys kept: this folder was used with a real service',
			);
			const modelPort = Number(/AI model: +http:\/\/127\.0\.0\.1:(\d+)/.exec(running.output())![1]);
			const processes = descendants(running.child.pid!);
			expect(processes.length).toBeGreaterThanOrEqual(2); // npm start's node and n8n at least

			running.child.kill(signal);
			await running.exited;
			const left = await waitFor(
				'every process of npm start to end',
				() => {
					const alive = processes.filter(isAlive);
					return alive.length === 0 ? alive : undefined;
				},
				30_000,
				250,
			).catch(() => processes.filter(isAlive));
			for (const pid of left) process.kill(pid, 'SIGKILL'); // not to leave them to the next test
			expect(left).toEqual([]);
			expect(await portIsFree(port)).toBe(true);
			expect(await portIsFree(sandboxPort)).toBe(true);
			expect(await portIsFree(modelPort)).toBe(true);
		},
		240_000,
	);
});
