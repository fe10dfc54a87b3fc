// `npm start -- --queue` (see start.cts): the same local setup (devkit/localStart.cts: the sandbox API
// in this process, the scripted model and the mail server of the examples, their credentials, the
// examples published with the sandbox) in n8n's queue mode (devkit/n8n/queueMode.cts), everything
// fresh for this run and on 127.0.0.1: Postgres, Redis, n8n main (editor, webhooks, triggers) and
// workers that run the executions. Ctrl-C / SIGTERM stops all of it and removes its folders; the
// processes' logs and the mails stay in <tmp>/companion-push-queue-logs (replaced at the next start).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { erpTryCommand } from '../devkit/exampleTriggers.cts';
import { DEFAULT_PORTS, servicesLines, startLocal, step } from '../devkit/localStart.cts';
import * as n8nTools from '../devkit/n8n/index.cts';

export interface QueueStartOptions {
	port?: number;
	sandboxPort?: number;
	workers: number;
	concurrency: number;
	verbose: boolean;
	/** False to use the dist/ that is there. */
	build: boolean;
	/** The real service's credential, or undefined for the sandbox. */
	realService?: n8nTools.CredentialValues;
	/** Example workflow ids published with the sandbox. */
	publishedInSandbox: string[];
}

const log = (line = '') => console.log(line);

export async function startQueue(options: QueueStartOptions): Promise<void> {
	const started = Date.now();
	const logDir = path.join(os.tmpdir(), 'companion-push-queue-logs');
	const local = await startLocal({
		build: options.build,
		realService: options.realService,
		sandboxPort: options.sandboxPort,
		// A cluster still starting is ended by queueMode's exit hook.
		stopHeading: 'Stopping n8n (main and workers), Postgres, Redis and the sandbox ...',
		prepare: () => {
			fs.rmSync(logDir, { recursive: true, force: true });
			// The examples' trigger secrets too: new at every start, like everything else here.
			return { mailFolder: path.join(logDir, 'mails'), secretsFolder: logDir };
		},
		startN8n: async ({ tarball, runtime, sandbox, credentialEntries }) => {
			const port = options.port ?? (await n8nTools.findFreePort(DEFAULT_PORTS.n8n));
			step(
				`Queue mode: Postgres, Redis, n8n main on 127.0.0.1:${port} and ${options.workers} workers (fresh for this run)`,
			);
			const examples = n8nTools.exampleWorkflows();
			const cluster = await n8nTools.startQueueCluster({
				tarball,
				runtime,
				port,
				workers: options.workers,
				concurrency: options.concurrency,
				credentials: credentialEntries,
				workflows: examples.map(({ workflow }) => workflow),
				publish: sandbox
					? examples
							.map(({ workflow }) => workflow.id)
							.filter((id) => options.publishedInSandbox.includes(id))
					: [],
				logDir,
				handleSignals: false, // startLocal's stop stops it
				log: (line) => log(`  ${line.replace(/^\[queue\] /, '')}`),
				onOutput: options.verbose
					? (name, chunk) => process.stdout.write(chunk.replace(/^(?=.)/gm, `[${name}] `))
					: undefined,
			});
			fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
			return {
				process: cluster.main.process,
				stop: cluster.stop,
				logFile: path.join(logDir, 'main.log'),
				cluster,
			};
		},
	});
	if (!local) return;
	const { sandbox, credential, exampleSecrets } = local;
	const { cluster } = local.n8n;

	const workflows = await cluster.rest.listWorkflows();
	const line = '='.repeat(78);
	log(`\n${line}`);
	log(
		`n8n is ready (queue mode): ${cluster.url}   (started in ${Math.round((Date.now() - started) / 1000)} s)`,
	);
	log('');
	log(`  Editor:    ${cluster.url}`);
	log(`  Email:     ${n8nTools.OWNER_EMAIL}`);
	log(`  Password:  ${n8nTools.OWNER_PASSWORD}`);
	log(
		`  Workflows: ${workflows.map((workflow: { name: string; active: boolean }) => `${workflow.name}${workflow.active ? ' (published)' : ''}`).join('; ')}`,
	);
	log(`  Credential: ${n8nTools.CREDENTIAL_NAME} -> ${credential.baseUrl}`);
	for (const line of servicesLines(local)) log(line);
	log('');
	log(
		'  Layout (all on 127.0.0.1, one encryption key, each n8n process in its own user folder with the package):',
	);
	log(
		`    main       ${cluster.url}   editor, REST API, webhooks, triggers; puts executions on the queue (pid ${cluster.main.process.pid})`,
	);
	for (const worker of cluster.workers) {
		log(
			`    ${worker.name.padEnd(10)} n8n worker --concurrency=${options.concurrency}, health http://127.0.0.1:${worker.healthPort}/healthz (pid ${worker.pid})`,
		);
	}
	log(
		`    Postgres   127.0.0.1:${cluster.pgPort}   database n8n, user n8n (PGPASSWORD="$(cat '${cluster.pgPasswordFile}')" psql -h 127.0.0.1 -p ${cluster.pgPort} -U n8n n8n)`,
	);
	log(`    Redis      127.0.0.1:${cluster.redisPort}   the Bull queue`);
	if (sandbox) {
		log(
			`    Sandbox    ${sandbox.baseUrl}   (admin API: ${sandbox.baseUrl}/__sandbox/credentials, request log: ${sandbox.baseUrl}/__sandbox/log)`,
		);
		log('');
		log('  Try the ERP example (published): a worker notifies the user named in the event');
		log(`  (which one: "Worker finished execution N" in ${logDir}/worker-*.log):`);
		log(`    ${erpTryCommand(cluster.url, exampleSecrets, sandbox.orgs.primary.userIds[1])}`);
	}
	log('');
	log(`  Logs: ${logDir} (main.log, worker-N.log, postgres.log, redis.log; mails/)`);
	log('  Everything (database included) is removed on stop.');
	log('Ctrl-C to stop.');
	log(line);
}
