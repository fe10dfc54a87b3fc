/**
 * `npm start -- --queue` (scripts/start.js -> startQueue.cts) as a user runs it: it prints the editor,
 * the login and the layout (main, two workers, Postgres, Redis, sandbox); it runs the examples' mail
 * server and scripted model with their credentials, as plain npm start does; one ERP webhook event is
 * run by a worker and notifies its user once; Ctrl-C (SIGINT) stops everything: exit 0, every printed
 * port free again, no n8n process left.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import {
	expectExampleCredentials,
	findFreePort,
	N8nRestClient,
	OWNER_EMAIL,
	OWNER_PASSWORD,
	portIsFree,
	ready,
	request,
	runStart,
	stopLeftRunning,
	waitFor,
	type Started,
} from './support/index.cts';

/** Redis's first answer to `command`, sent without logging in. */
function redisAnswer(port: number, command: string): Promise<string> {
	return new Promise((resolve, reject) => {
		const socket = net.connect(port, '127.0.0.1', () => socket.write(command));
		socket.setTimeout(10_000, () => socket.destroy(new Error('Redis did not answer')));
		socket.once('data', (data) => {
			resolve(data.toString());
			socket.end();
		});
		socket.once('error', reject);
	});
}

/** Whether a process runs (this VM does not reap orphans: a zombie counts as gone). */
function isRunning(pid: number): boolean {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
	} catch {
		return false;
	}
}

describe('npm start -- --queue', () => {
	let running: Started | undefined;
	// The start's temporary folder: its logs stay there once it stops (for a user to read), so the
	// test gives it one of its own and removes it. Postgres runs as its own user and must pass through.
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-start-queue-'));
	fs.chmodSync(tmp, 0o755);

	afterAll(async () => {
		await stopLeftRunning(running);
		fs.rmSync(tmp, { recursive: true, force: true });
	});

	test('prints editor, login and layout; a worker runs one webhook event; SIGINT stops it all and leaves nothing behind', async () => {
		const started = Date.now();
		const port = await findFreePort();
		const sandboxPort = await findFreePort();
		running = runStart(
			['--queue', '--skip-build', '--port', String(port), '--sandbox-port', String(sandboxPort)],
			{ TMPDIR: tmp },
		);
		const url = await ready(running, { queue: true });
		const output = running.output();
		process.stdout.write(
			`[e2e] npm start -- --queue ready in ${Math.round((Date.now() - started) / 1000)} s\n`,
		);
		expect(url).toBe(`http://127.0.0.1:${port}`);
		expect(output).toContain(`Email:     ${OWNER_EMAIL}`);
		expect(output).toContain(`Password:  ${OWNER_PASSWORD}`);
		const pids = [...output.matchAll(/\(pid (\d+)\)/g)].map((match) => Number(match[1]));
		const workerLines =
			output.match(
				/^ {4}worker-\d +n8n worker --concurrency=10, health http:\/\/127\.0\.0\.1:(\d+)\/healthz/gm,
			) ?? [];
		expect(workerLines).toHaveLength(2);
		expect(pids).toHaveLength(3); // main and two workers
		const pgPort = Number(/Postgres +127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
		const redisPort = Number(/Redis +127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
		const healthPorts = workerLines.map((line) => Number(/:(\d+)\/healthz/.exec(line)![1]));
		// Postgres and Redis ask for the passwords made for this start: another local user without
		// them gets nothing.
		const psqlWithout = spawnSync(
			'psql',
			['-w', '-h', '127.0.0.1', '-p', String(pgPort), '-U', 'n8n', '-d', 'n8n', '-c', 'select 1'],
			{ encoding: 'utf8', env: { ...process.env, PGPASSWORD: '' } },
		);
		expect(psqlWithout.status).not.toBe(0);
		expect(psqlWithout.stderr).toMatch(/password/);
		expect(await redisAnswer(redisPort, 'PING\r\n')).toMatch(/^-NOAUTH/);
		expect(output).toContain(`Sandbox    http://127.0.0.1:${sandboxPort}`);
		const logDir = /Logs: (\S+) /.exec(output)![1];
		expect(logDir.startsWith(tmp)).toBe(true);

		const rest = new N8nRestClient(url);
		await rest.login(OWNER_EMAIL, OWNER_PASSWORD);
		const workflows = await rest.listWorkflows();
		expect(workflows.map((workflow) => [workflow.id, workflow.active]).sort()).toEqual([
			['cpExampleAiAgent', false],
			['cpExampleDigest', false],
			['cpExampleErpEvent', true],
			['cpExampleEscalation', false],
			['cpExampleFollowUp', true],
		]);
		// The examples' credentials as plain npm start makes them, pointing at the mail server and the
		// scripted model this start runs.
		const { erpHeaders } = await expectExampleCredentials(rest, output, logDir);
		for (const healthPort of healthPorts)
			expect((await request(`http://127.0.0.1:${healthPort}/healthz`)).status).toBe(200);

		const userId = /"userId":"([0-9a-f]{24})"/.exec(output)![1];
		const posted = await request(`${url}/webhook/erp-event`, {
			method: 'POST',
			headers: erpHeaders,
			body: { orderId: '5150', status: 'shipped', userId },
		});
		expect(posted.status).toBe(200);
		const sends = await waitFor(
			'the ERP send in the sandbox log',
			async () => {
				const log = await request(`http://127.0.0.1:${sandboxPort}/__sandbox/log`);
				const found = (
					log.json.requests as Array<{
						endpoint: string;
						status: number;
						body: { title: string; target_user_ids: string[] };
					}>
				).filter((entry) => entry.endpoint === 'POST /push-notification/send');
				return found.length > 0 && found;
			},
			60_000,
			500,
		);
		expect(sends.map((send) => [send.status, send.body.title, send.body.target_user_ids])).toEqual([
			[202, 'Order 5150: shipped', [userId]],
		]);
		const [execution] = await waitFor(
			'the execution',
			async () => {
				const list = await rest.listExecutions('cpExampleErpEvent');
				return list.length > 0 && list.every((entry) => entry.status === 'success') && list;
			},
			30_000,
			500,
		);
		const workerLogs = fs.readdirSync(logDir).filter((file) => /^worker-\d\.log$/.test(file));
		const ranOn = workerLogs.filter((file) =>
			fs
				.readFileSync(path.join(logDir, file), 'utf8')
				.includes(`Worker finished execution ${execution.id} `),
		);
		expect(ranOn).toHaveLength(1);

		running.child.kill('SIGINT');
		expect(await running.exited).toEqual({ code: 0, signal: null });
		expect(running.output()).toMatch(/Stopped\.\s*$/);
		const printed = {
			main: port,
			sandbox: sandboxPort,
			postgres: pgPort,
			redis: redisPort,
			...Object.fromEntries(healthPorts.map((health, index) => [`worker-${index + 1}`, health])),
		};
		// The mail server and the scripted model run inside the start's own process, gone with its
		// exit above; their ports are left out, since the plain start's test (running beside this
		// one) may take the same preferred ports the moment they are free.
		const stillTaken: string[] = [];
		for (const [part, printedPort] of Object.entries(printed))
			if (!(await portIsFree(printedPort))) stillTaken.push(`${part} ${printedPort}`);
		expect(stillTaken).toEqual([]);
		await waitFor(
			'main and the workers to be gone',
			() => pids.every((pid) => !isRunning(pid)),
			10_000,
			250,
		);
		process.stdout.write(
			`[e2e] npm start -- --queue: ready, one event through ${ranOn[0].replace('.log', '')}, stopped, in ${Math.round((Date.now() - started) / 1000)} s\n`,
		);
	});
});
