// `npm start -- --queue` (see start.ts): the same local setup in n8n's queue mode (devkit/n8n/queueMode.cts),
// everything fresh for this run and on 127.0.0.1: Postgres, Redis, n8n main (editor, webhooks,
// triggers) and workers that run the executions, the sandbox API in this process, the credential and
// the examples (published with the sandbox). Ctrl-C / SIGTERM stops all of it and removes its folders;
// the processes' logs stay in <tmp>/companion-push-queue-logs (replaced at the next start).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSandbox, type Sandbox } from '../sandbox/index.cts';
import * as n8nTools from '../devkit/n8n/index.cts';
import { stopOnSignal } from '../devkit/stopOnSignal.cts';
import { fakeModelCredentialEntry, startFakeModel, type FakeModel } from '../devkit/fakeModel.cts';

export interface QueueStartOptions {
	port?: number;
	sandboxPort?: number;
	workers: number;
	concurrency: number;
	verbose: boolean;
	/** Builds the package (npm run build), or undefined to use the dist/ that is there. */
	build?: () => void;
	/** The real service's credential, or undefined for the sandbox. */
	realService?: n8nTools.CredentialValues;
	/** Example workflow ids published with the sandbox. */
	publishedInSandbox: string[];
	defaultPorts: { n8n: number; sandbox: number };
}

const log = (line = '') => console.log(line);
const step = (text: string) => log(`\n> ${text}`);

export async function startQueue(options: QueueStartOptions): Promise<void> {
	const started = Date.now();
	let sandbox: Sandbox | undefined;
	let cluster: n8nTools.QueueCluster | undefined = undefined; // set once it runs; stopAll reads it
	let fakeModel: FakeModel | undefined = undefined; // the AI Agent example's scripted model; stopAll reads it
	// A cluster still starting is ended by queueMode's exit hook.
	const { stopAll, isStopping } = stopOnSignal(
		log,
		'Stopping n8n (main and workers), Postgres, Redis and the sandbox ...',
		() => [
			['the queue-mode cluster', cluster?.stop],
			['the sandbox', sandbox?.stop],
			['the scripted model', fakeModel?.stop],
		],
	);

	if (options.build) {
		step('Building the package (npm run build)');
		options.build();
	}
	step('Packing it (npm pack), as it is published');
	const tarball = n8nTools.packPackage();
	log(`  ${tarball}`);

	step('The n8n runtime (Node 24 + n8n, installed once into a cache folder)');
	const runtime = await n8nTools.ensureRuntime({ log: (line) => log(`  ${line}`) });
	log(`  n8n ${n8nTools.pinnedVersions().n8n} at ${runtime.runtimeDir}`);

	let credential: n8nTools.CredentialValues;
	if (options.realService) {
		step(`Real service: ${options.realService.baseUrl} (from COMPANION_PUSH_BASE_URL; no sandbox)`);
		credential = options.realService;
	} else {
		step('Starting the sandbox API in this process');
		sandbox = await startSandbox({
			port: options.sandboxPort ?? (await n8nTools.findFreePort(options.defaultPorts.sandbox)),
			clock: 'real',
			deliveryMs: 1500,
		});
		const { primary } = sandbox.orgs;
		credential = {
			baseUrl: sandbox.baseUrl,
			clientId: primary.clientId,
			clientSecret: primary.clientSecret,
			refreshToken: primary.refreshToken,
		};
		log(
			`  ${sandbox.baseUrl} (${primary.userIds.length} users, real clock, deliveries settle in 1.5 s)`,
		);
	}
	if (isStopping()) return;

	const port = options.port ?? (await n8nTools.findFreePort(options.defaultPorts.n8n));
	const logDir = path.join(os.tmpdir(), 'companion-push-queue-logs');
	fs.rmSync(logDir, { recursive: true, force: true });
	step(
		`Queue mode: Postgres, Redis, n8n main on 127.0.0.1:${port} and ${options.workers} workers (fresh for this run)`,
	);
	const examples = n8nTools.exampleWorkflows();
	// The AI Agent example's model: the same scripted, offline one as plain npm start.
	fakeModel = await startFakeModel({ port: await n8nTools.findFreePort() });
	if (isStopping()) return;
	cluster = await n8nTools.startQueueCluster({
		tarball,
		runtime,
		port,
		workers: options.workers,
		concurrency: options.concurrency,
		credentials: [
			n8nTools.credentialEntry(credential),
			fakeModelCredentialEntry(fakeModel.baseUrl),
		],
		workflows: examples.map(({ workflow }) => workflow),
		publish: sandbox
			? examples
					.map(({ workflow }) => workflow.id)
					.filter((id) => options.publishedInSandbox.includes(id))
			: [],
		logDir,
		handleSignals: false, // stopAll above stops it
		log: (line) => log(`  ${line.replace(/^\[queue\] /, '')}`),
		onOutput: options.verbose
			? (name, chunk) => process.stdout.write(chunk.replace(/^(?=.)/gm, `[${name}] `))
			: undefined,
	});
	fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
	if (isStopping()) return;
	cluster.main.process.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
		if (isStopping()) return;
		console.error(
			`\nn8n main stopped by itself (${code ?? signal}); its log: ${path.join(logDir, 'main.log')}`,
		);
		stopAll(1);
	});

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
		`    Postgres   127.0.0.1:${cluster.pgPort}   database n8n, user n8n (psql -h 127.0.0.1 -p ${cluster.pgPort} -U n8n n8n)`,
	);
	log(`    Redis      127.0.0.1:${cluster.redisPort}   the Bull queue`);
	if (sandbox) {
		log(
			`    Sandbox    ${sandbox.baseUrl}   (admin API: ${sandbox.baseUrl}/__sandbox/credentials, request log: ${sandbox.baseUrl}/__sandbox/log)`,
		);
		log('');
		log('  Try the ERP example (published): a worker notifies the user named in the event');
		log(`  (which one: "Worker finished execution N" in ${logDir}/worker-*.log):`);
		log(
			`    curl -s -X POST ${cluster.url}/webhook/erp-event -H 'content-type: application/json' ` +
				`-d '{"orderId":"1042","status":"shipped","userId":"${sandbox.orgs.primary.userIds[1]}"}'`,
		);
	}
	log('');
	log(`  Logs: ${logDir} (main.log, worker-N.log, postgres.log, redis.log)`);
	log('  Everything (database included) is removed on stop.');
	log('Ctrl-C to stop.');
	log(line);
}
