/**
 * `npm start` (scripts/start.js) as a user runs it: it prints the editor URL and the login, the
 * login works, the credential and the examples are there, and SIGTERM / Ctrl-C stop everything.
 * A second start reuses the user folder (nothing imported again) and, with the
 * COMPANION_PUSH_* settings, points the credential at "a real service" (here a sandbox of this
 * test process) without starting a sandbox of its own. Run through npm (`npm start`) as a
 * background job, it stops, n8n's port closed and no process of it left, when npm's pid gets
 * SIGTERM or SIGINT, and when npm is killed outright.
 */
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

	beforeAll(async () => {
		home = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-start-'));
		port = await findFreePort();
		sandboxPort = await findFreePort();
		realService = await startSandbox({ port: 0 });
	});

	afterAll(async () => {
		await stopLeftRunning(running);
		await realService?.stop();
		fs.rmSync(home, { recursive: true, force: true });
	});

	test('first start: editor URL, login and sandbox printed; the login works; credential and examples are there; SIGTERM stops it all', async () => {
		const started = Date.now();
		fs.chmodSync(home, 0o755); // a folder that existed, open to others: npm start closes it
		running = runStart([
			'--skip-build',
			'--home',
			home,
			'--port',
			String(port),
			'--sandbox-port',
			String(sandboxPort),
		]);
		const url = await ready(running);
		const output = running.output();
		expect(url).toBe(`http://127.0.0.1:${port}`);
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

		running.child.kill('SIGTERM');
		expect(await running.exited).toEqual({ code: 0, signal: null });
		expect(running.output()).toMatch(/Stopped\.\s*$/);
		expect(await portIsFree(port)).toBe(true);
		expect(await portIsFree(sandboxPort)).toBe(true);
		expect(await portIsFree(Number(new URL(modelUrl).port))).toBe(true);
		expect(await portIsFree(mailPort)).toBe(true);
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
