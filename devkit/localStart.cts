/**
 * The start and stop that `npm start` and `npm start -- --queue` share (scripts/start.cts,
 * scripts/startQueue.cts), in this order:
 *   1. builds the package (npm run build, unless --skip-build) and packs it (npm pack), as published;
 *   2. the n8n runtime, installed once into a cache folder (devkit/n8n/);
 *   3. the sandbox in this process on 127.0.0.1:4010 (or a free port), real clock, or the real
 *      service's credential when one is given;
 *   4. the AI Agent example's scripted model (fakeModel.cts) on 127.0.0.1:4011 (or a free port);
 *   5. the caller's preparation (its user folder), then the safety alert example's mail server
 *      (smtpSink.cts) on 127.0.0.1:2525 (or a free port), keeping the mails in the folder it names;
 *   6. n8n, as the caller starts it, with the credentials: the API's, the model's, the mail's, and
 *      the two that guard the examples' ERP webhook and alert form (exampleTriggers.cts), their
 *      secrets kept in the folder the caller names.
 * Ctrl-C, SIGTERM, SIGHUP, npm gone (stopOnSignal.cts) or n8n ending by itself stop every part.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSandbox, type Sandbox } from '../sandbox/index.cts';
import { fakeModelCredentialEntry, startFakeModel, type FakeModel } from './fakeModel.cts';
import * as n8nTools from './n8n/index.cts';
import {
	exampleTriggerCredentialEntries,
	keptExampleTriggerSecrets,
	type ExampleTriggerSecrets,
} from './exampleTriggers.cts';
import {
	mailSummary,
	SMTP_CREDENTIAL,
	smtpCredentialEntry,
	startSmtpSink,
	type SmtpSink,
} from './smtpSink.cts';
import { stopOnSignal } from './stopOnSignal.cts';

const ROOT = path.resolve(__dirname, '..');
export const DEFAULT_PORTS = { n8n: 5678, sandbox: 4010, fakeModel: 4011, smtp: 2525 };

const log = (line = '') => console.log(line);
export const step = (text: string) => log(`\n> ${text}`);

/** What runs before n8n, for the caller to start n8n with and to print. */
export interface LocalParts<Prepared> {
	runtime: n8nTools.N8nRuntime;
	/** The packed package; its folder is the caller's to remove once installed. */
	tarball: string;
	/** The Companion Push credential's values: the sandbox's or the real service's. */
	credential: n8nTools.CredentialValues;
	sandbox?: Sandbox;
	fakeModel: FakeModel;
	smtp: SmtpSink;
	/** For `n8n import:credentials`: the API's, the scripted model's, the mail server's, the
	 * examples' triggers'. */
	credentialEntries: object[];
	/** The secrets of the examples' ERP webhook and alert form, kept in `prepared.secretsFolder`. */
	exampleSecrets: ExampleTriggerSecrets;
	/** What the caller's `prepare` returned. */
	prepared: Prepared;
	/** True once a signal came: the caller starts nothing more. */
	isStopping(): boolean;
}

/** n8n as the caller started it: its process (main's in queue mode) and the stop of all of it. */
export interface LocalN8n {
	process: ChildProcess;
	stop(): Promise<void>;
	/** Where its log is, for the message when it stops by itself. */
	logFile: string;
}

/** What the caller's `prepare` names: where the mails go, where the examples' trigger secrets are kept. */
export interface PreparedFolders {
	mailFolder: string;
	secretsFolder: string;
}

export interface LocalStartOptions<Prepared extends PreparedFolders, N extends LocalN8n> {
	build: boolean;
	realService?: n8nTools.CredentialValues;
	sandboxPort?: number;
	/** What the stop says, e.g. "Stopping n8n and the sandbox ...". */
	stopHeading: string;
	/** The caller's folders, made ready before the mail server keeps mails in `mailFolder`. */
	prepare(runtime: n8nTools.N8nRuntime): Prepared;
	/** Starts n8n; undefined when it saw `isStopping` and started nothing. */
	startN8n(parts: LocalParts<Prepared>): Promise<N | undefined>;
}

function build() {
	const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
	const result = spawnSync(npm, ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
	if (result.status !== 0) throw new Error('npm run build failed');
}

/**
 * Steps 1 to 6 above. Resolves with every part and n8n once n8n is up, or undefined when a signal
 * stopped the start on the way (the parts started so far are stopped, and the process exits).
 */
export async function startLocal<Prepared extends PreparedFolders, N extends LocalN8n>(
	options: LocalStartOptions<Prepared, N>,
): Promise<(LocalParts<Prepared> & { n8n: N }) | undefined> {
	// Each set once it runs; stopAll reads them.
	let sandbox: Sandbox | undefined = undefined;
	let fakeModel: FakeModel | undefined = undefined;
	let smtp: SmtpSink | undefined = undefined;
	let n8n: N | undefined = undefined;
	const { stopAll, isStopping } = stopOnSignal(log, options.stopHeading, () => [
		['n8n', n8n?.stop],
		['the sandbox', sandbox?.stop],
		['the scripted model', fakeModel?.stop],
		['the mail server', smtp?.stop],
	]);

	if (options.build) {
		step('Building the package (npm run build)');
		build();
	}
	step('Packing it (npm pack), as it is published');
	const tarball = n8nTools.packPackage();
	log(`  ${tarball}`);
	// Removed once installed (startN8n); this for a start stopped or failed before that.
	process.on('exit', () => fs.rmSync(path.dirname(tarball), { recursive: true, force: true }));

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
			port: options.sandboxPort ?? (await n8nTools.findFreePort(DEFAULT_PORTS.sandbox)),
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
	// The AI Agent example's OpenAI Chat Model talks to this scripted model, so it runs offline.
	step('Starting the scripted chat model of the AI Agent example (offline, OpenAI-compatible)');
	fakeModel = await startFakeModel({
		port: await n8nTools.findFreePort(DEFAULT_PORTS.fakeModel),
	});
	log(`  ${fakeModel.baseUrl}`);
	if (isStopping()) return undefined;

	const prepared = options.prepare(runtime);
	// The safety alert example e-mails whoever its trigger escalates: here to a local mail server that
	// keeps every mail and says so on the console, so the whole loop is visible.
	step(
		'Starting a local mail server for the safety alert example (it keeps the mails, sends none on)',
	);
	smtp = await startSmtpSink({
		port: await n8nTools.findFreePort(DEFAULT_PORTS.smtp),
		mailFolder: prepared.mailFolder,
		// One line per batch: the alert ladder mails everyone it escalates at once.
		onMail: mailSummary({ log, mailFolder: prepared.mailFolder }).onMail,
	});
	log(`  smtp://127.0.0.1:${smtp.port}, mails kept in ${prepared.mailFolder}`);
	if (isStopping()) return undefined;

	const exampleSecrets = keptExampleTriggerSecrets(prepared.secretsFolder);
	const parts: LocalParts<Prepared> = {
		runtime,
		tarball,
		credential,
		sandbox,
		fakeModel,
		smtp,
		credentialEntries: [
			n8nTools.credentialEntry(credential),
			fakeModelCredentialEntry(fakeModel.baseUrl),
			smtpCredentialEntry(smtp.port),
			...exampleTriggerCredentialEntries(exampleSecrets),
		],
		exampleSecrets,
		prepared,
		isStopping,
	};
	const running = await options.startN8n(parts);
	n8n = running;
	if (!running || isStopping()) return undefined;
	running.process.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
		if (isStopping()) return;
		console.error(`\nn8n stopped by itself (${code ?? signal}); its log: ${running.logFile}`);
		void stopAll(1);
	});
	return { ...parts, n8n: running };
}

/** The ready block's lines for the scripted model and the mail server. */
export function servicesLines({ fakeModel, smtp, prepared }: LocalParts<{ mailFolder: string }>) {
	return [
		`  AI model:  ${fakeModel.baseUrl}   (scripted, offline, for the AI Agent example; request log: ${fakeModel.baseUrl.replace(/\/v1$/, '')}/__fake/log)`,
		`  Mail:      smtp://127.0.0.1:${smtp.port} (local, keeps the mails and sends none on; credential "${SMTP_CREDENTIAL.name}")   mails: ${prepared.mailFolder}`,
	];
}
