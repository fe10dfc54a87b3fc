// `npm start` (run through start.js): a real n8n 2.41.1 on 127.0.0.1 with this package installed as a community package,
// a Companion Push API credential, the example workflows and (by default) the local sandbox API.
//
//   1. builds the package (npm run build) and packs it (npm pack), as it would be published;
//   2. installs Node 24 and n8n once into a cache folder outside the checkout (devkit/n8n/);
//   3. starts the sandbox in this process on 127.0.0.1:4010 (or a free port), real clock, the
//      scripted chat model of the AI Agent example (devkit/fakeModel.cts) on 127.0.0.1:4011 (or a free port),
//      and the safety alert example's mail server (devkit/smtpSink.cts) on 127.0.0.1:2525 (or a free
//      port): it keeps each mail in <home>/mails/ and prints a line for it;
//   4. prepares the n8n user folder ~/.local/share/n8n-nodes-companion-push/n8n-home (kept between
//      starts and runtimes: owner, credentials, workflows, executions, mails; one that an earlier
//      version kept in the runtime cache is moved there), installs the tarball into it the way n8n
//      installs a community package, imports the credentials (the API's, the scripted model's, the
//      mail server's, and the two that guard the examples' ERP webhook and alert form, their secrets
//      made once and kept in the folder, 0600) and the examples (again only when they changed); with
//      the sandbox, which starts empty, n8n forgets what it remembered of the last one (triggers,
//      Idempotency Keys);
//   5. starts n8n on 127.0.0.1:5678 (or a free port) in this computer's time zone and prints the
//      editor URL and the login.
// Ctrl-C / SIGTERM stops n8n, the sandbox, the scripted model and the mail server. All but the user
// folder and n8n's start (step 4, the end of 5) is devkit/localStart.cts, shared with --queue.
//
// A real service instead of the sandbox: set COMPANION_PUSH_BASE_URL, COMPANION_PUSH_CLIENT_ID,
// COMPANION_PUSH_CLIENT_SECRET and COMPANION_PUSH_REFRESH_TOKEN (no sandbox is started then, and
// the examples are kept unpublished, so nothing is sent unless you run a workflow).
//
// Options (npm start -- <options>):
//   --port N          n8n's port (default 5678, or a free one when taken)
//   --sandbox-port N  the sandbox's port (default 4010, or a free one when taken)
//   --home DIR        the n8n user folder (default under $XDG_DATA_HOME or ~/.local/share; or COMPANION_PUSH_N8N_HOME)
//   --fresh           start from an empty user folder (deletes the owner's workflows and executions)
//   --skip-build      use the dist/ that is there
//   --verbose         show n8n's own log on the console (it is always written to <home>/n8n.log)
//   --queue           n8n in queue mode instead (startQueue.cts): fresh Postgres, Redis, main and workers
//   --workers N       with --queue: how many workers (default 2); --concurrency N: jobs per worker (default 10)
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { alertFormLoginLine, erpTryCommand } from '../devkit/exampleTriggers.cts';
import { FAKE_MODEL_CREDENTIAL } from '../devkit/fakeModel.cts';
import {
	DEFAULT_PORTS,
	servicesLines,
	startLocal,
	step,
	type LocalParts,
} from '../devkit/localStart.cts';
import { carryOverStartHome, removeStartHome, startHomeFolder } from '../devkit/n8n/home.cts';
import * as n8nTools from '../devkit/n8n/index.cts';
import { SMTP_CREDENTIAL } from '../devkit/smtpSink.cts';
import { startQueue } from './startQueue.cts';

const REAL_SERVICE_VARIABLES = [
	'COMPANION_PUSH_BASE_URL',
	'COMPANION_PUSH_CLIENT_ID',
	'COMPANION_PUSH_CLIENT_SECRET',
	'COMPANION_PUSH_REFRESH_TOKEN',
];
/** Examples published (active) in sandbox mode: they react to the sandbox only. */
const PUBLISHED_IN_SANDBOX = ['cpExampleErpEvent', 'cpExampleFollowUp'];

const log = (line = '') => console.log(line);
const sha = (value: unknown) =>
	createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

function parseArgs(argv: string[]) {
	const options = {
		port: undefined as number | undefined,
		sandboxPort: undefined as number | undefined,
		home: process.env.COMPANION_PUSH_N8N_HOME || undefined,
		fresh: false,
		build: true,
		verbose: false,
		homeGiven: false,
		queue: false,
		workers: 2,
		concurrency: 10,
	};
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].split('=', 2);
		const value = () => {
			const next = inline ?? argv[++i];
			if (next === undefined) throw new Error(`${flag} needs a value`);
			return next;
		};
		const port = () => {
			const parsed = Number(value());
			if (!Number.isInteger(parsed) || parsed < 1 || parsed > 65535)
				throw new Error(`${flag} needs a port number`);
			return parsed;
		};
		const count = () => {
			const parsed = Number(value());
			if (!Number.isInteger(parsed) || parsed < 1 || parsed > 50)
				throw new Error(`${flag} needs a number from 1 to 50`);
			return parsed;
		};
		if (flag === '--port') options.port = port();
		else if (flag === '--sandbox-port') options.sandboxPort = port();
		else if (flag === '--home') {
			options.home = path.resolve(value());
			options.homeGiven = true;
		} else if (flag === '--fresh') options.fresh = true;
		else if (flag === '--skip-build') options.build = false;
		else if (flag === '--verbose') options.verbose = true;
		else if (flag === '--queue') options.queue = true;
		else if (flag === '--workers') options.workers = count();
		else if (flag === '--concurrency') options.concurrency = count();
		else if (flag === '--help' || flag === '-h') {
			log(
				'usage: npm start -- [--port 5678] [--sandbox-port 4010] [--home DIR] [--fresh] [--skip-build] [--verbose]',
			);
			log(
				'       npm start -- --queue [--workers 2] [--concurrency 10] [--port 5678] [--sandbox-port 4010] [--skip-build] [--verbose]',
			);
			log(`real service instead of the sandbox: set ${REAL_SERVICE_VARIABLES.join(', ')}`);
			process.exit(0);
		} else throw new Error(`unknown option ${argv[i]} (try --help)`);
	}
	return options;
}

/** The real service's credential from the environment, or undefined for the sandbox. */
function realServiceFromEnv(): n8nTools.CredentialValues | undefined {
	const set = REAL_SERVICE_VARIABLES.filter((name) => process.env[name]);
	if (set.length === 0) return undefined;
	if (set.length < REAL_SERVICE_VARIABLES.length) {
		const missing = REAL_SERVICE_VARIABLES.filter((name) => !process.env[name]);
		throw new Error(
			`To use a real service, set all of ${REAL_SERVICE_VARIABLES.join(', ')} (missing: ${missing.join(', ')}).`,
		);
	}
	const env = process.env as Record<string, string>;
	return {
		baseUrl: env.COMPANION_PUSH_BASE_URL.trim().replace(/\/+$/, ''),
		clientId: env.COMPANION_PUSH_CLIENT_ID,
		clientSecret: env.COMPANION_PUSH_CLIENT_SECRET,
		refreshToken: env.COMPANION_PUSH_REFRESH_TOKEN,
	};
}

const isTimeZone = (zone: string | undefined): zone is string => {
	if (!zone) return false;
	try {
		new Intl.DateTimeFormat('en', { timeZone: zone });
		return true;
	} catch {
		return false;
	}
};

/**
 * n8n's time zone (GENERIC_TIMEZONE: times without a zone, `$now`, schedules): the one set in
 * GENERIC_TIMEZONE, else this computer's (unset, n8n would use America/New_York). The computer's
 * own name for it first (TZ, /etc/localtime): Intl gives some zones an old name (Asia/Calcutta).
 */
function timeZone(): { zone: string; from: string } {
	const given = process.env.GENERIC_TIMEZONE?.trim();
	if (given) return { zone: given, from: 'GENERIC_TIMEZONE' };
	let localtime: string | undefined;
	try {
		localtime = /zoneinfo\/(.+)$/.exec(fs.readlinkSync('/etc/localtime'))?.[1];
	} catch {
		// not a link (or not there): Intl's answer
	}
	const zone =
		[process.env.TZ?.replace(/^:/, ''), localtime].find(isTimeZone) ??
		Intl.DateTimeFormat().resolvedOptions().timeZone;
	return { zone, from: "this computer's" };
}

/** A secret of the user folder, made once and kept in `file`, readable by its owner only. */
function keptSecret(file: string, make: () => string): string {
	if (!fs.existsSync(file)) fs.writeFileSync(file, make(), { mode: 0o600 });
	fs.chmodSync(file, 0o600);
	return fs.readFileSync(file, 'utf8').trim();
}

/**
 * The user folder, its encryption key (n8n refuses a folder opened with another key) and the
 * owner's password. Credentials of a real service may be imported there, so the folder is its
 * owner's alone (also when it existed before), and the password is made for this folder, not a
 * published one.
 */
function prepareHome(
	home: string,
	fresh: boolean,
): { encryptionKey: string; ownerPassword: string } {
	if (fresh && fs.existsSync(home)) {
		log(`  --fresh: removing ${home}`);
		removeStartHome(home);
	}
	fs.mkdirSync(home, { recursive: true, mode: 0o700 });
	fs.chmodSync(home, 0o700);
	return {
		encryptionKey: keptSecret(path.join(home, 'encryption-key'), () =>
			randomBytes(24).toString('hex'),
		),
		ownerPassword: keptSecret(
			path.join(home, 'owner-password'),
			() => `Owner-${randomBytes(15).toString('base64url')}`,
		),
	};
}

/** What preloaded.json remembers of earlier starts in a user folder. */
interface StartState {
	/** Hash of the imported credentials. */
	credential?: string;
	/** Hash of each imported example, by file. */
	examples?: Record<string, string>;
	/** A start used a real service: its Idempotency Keys are never forgotten. */
	realServiceUsed?: boolean;
}

function readState(file: string): StartState {
	try {
		return JSON.parse(fs.readFileSync(file, 'utf8'));
	} catch {
		return {};
	}
}

/**
 * The sandbox starts empty on every start, while n8n keeps what it remembered of the previous
 * sandbox's sends: what its Companion Push triggers saw (workflow static data) and, with
 * `forgetKeys`, the Idempotency Keys of the Companion Push nodes (processed data of the node's
 * scope). Forgotten, so that the triggers start over and a key used with the old sandbox sends to
 * the new one: the ERP example's printed command notifies after every start, as on the first.
 * Done in n8n's sqlite database with the runtime's own sqlite3, before n8n starts.
 */
function forgetSandboxMemory(
	runtime: n8nTools.N8nRuntime,
	home: string,
	{ forgetKeys }: { forgetKeys: boolean },
): { triggers: number; keyedNodes: number } {
	const database = path.join(home, '.n8n', 'database.sqlite');
	if (!fs.existsSync(database)) return { triggers: 0, keyedNodes: 0 };
	const sqlite3 = path.join(runtime.runtimeDir, 'node_modules', 'sqlite3');
	const keyedTypes = [n8nTools.NODE_TYPE, `${n8nTools.NODE_TYPE}Tool`];
	// n8n's processed data of a node's scope is the row (workflowId, 'n:<node id>').
	const script = `
		const sqlite3 = require(${JSON.stringify(sqlite3)});
		const db = new sqlite3.Database(${JSON.stringify(database)});
		const counts = { triggers: 0, keyedNodes: 0 };
		const done = (error) => {
			if (error) { console.error(error.message); process.exitCode = 1; } else console.log(JSON.stringify(counts));
			db.close();
		};
		db.run("UPDATE workflow_entity SET staticData = NULL WHERE staticData IS NOT NULL AND nodes LIKE ?", ['%${n8nTools.TRIGGER_TYPE}%'], function (error) {
			if (error) return done(error);
			counts.triggers = this.changes;
			if (!${forgetKeys}) return done();
			db.all("SELECT id, nodes FROM workflow_entity WHERE nodes LIKE ?", ['%${n8nTools.NODE_TYPE}%'], (error, rows) => {
				if (error) return done(error);
				const keyed = rows.flatMap((row) => JSON.parse(row.nodes)
					.filter((node) => ${JSON.stringify(keyedTypes)}.includes(node.type))
					.map((node) => row.id + ' n:' + node.id));
				if (keyed.length === 0) return done();
				db.run("DELETE FROM processed_data WHERE workflowId || ' ' || context IN (" + keyed.map(() => '?').join(', ') + ")", keyed, function (error) {
					counts.keyedNodes = this.changes;
					done(error);
				});
			});
		});`;
	const result = spawnSync(runtime.nodeBin, ['-e', script], { encoding: 'utf8' });
	if (result.status !== 0)
		throw new Error(
			`Could not reset what n8n remembered of the sandbox in ${database}: ${result.stderr}`,
		);
	return JSON.parse(result.stdout.trim());
}

/**
 * n8n 2.41 does not retry, at a later start, a published workflow whose trigger failed to
 * activate (it stays "failed" until it is published again). Says which ones failed and, with the
 * sandbox (which starts empty, so an old failure is stale), publishes them once more.
 */
async function checkTriggers(
	rest: n8nTools.N8nRestClient,
	{ republish }: { republish: boolean },
): Promise<void> {
	for (const workflow of await rest.listWorkflows()) {
		if (!workflow.active) continue;
		const status = await rest.call(
			'GET',
			`/workflows/${encodeURIComponent(workflow.id)}/publication-status`,
		);
		if (!status || status.status !== 'failed') continue;
		const reason = (status.triggers || [])
			.map((trigger: { errorMessage?: string }) => trigger.errorMessage)
			.filter(Boolean)
			.join('; ');
		log(`  "${workflow.name}": its trigger failed to start (${reason || 'no reason given'})`);
		if (!republish) continue;
		try {
			await rest.activateWorkflow(workflow.id);
			log('    published it again');
		} catch (error) {
			log(`    publishing it again failed: ${error.message}`);
		}
	}
}

/** The user folder kept outside the runtime cache, with the one an earlier version kept there moved in. */
function defaultHome(): string {
	const home = startHomeFolder();
	const carried = carryOverStartHome(home);
	if (carried) {
		log(`  moved ${carried.from}`);
		log(`     to ${home} (a cache folder is no place for your workflows)`);
		for (const older of carried.leftOver)
			log(`  an older one stays where it was: ${older} (delete it when you no longer need it)`);
	}
	return home;
}

/** The user folder of this start, made ready (prepareHome); the mails go to its mails/. */
interface UserFolder {
	home: string;
	mailFolder: string;
	/** The examples' trigger secrets are kept here: the user folder. */
	secretsFolder: string;
	encryptionKey: string;
	ownerPassword: string;
}

/**
 * n8n in `home`: the package installed as a community package, the credentials and the examples
 * imported when they changed since the last start, the triggers' state forgotten with a fresh
 * sandbox, then `n8n start` with its log in <home>/n8n.log. Undefined when a signal came meanwhile.
 */
async function startN8nInHome(
	parts: LocalParts<UserFolder>,
	options: ReturnType<typeof parseArgs>,
) {
	const { runtime, tarball, credential, sandbox, fakeModel, smtp } = parts;
	const { home, encryptionKey, ownerPassword } = parts.prepared;
	const port = options.port ?? (await n8nTools.findFreePort(DEFAULT_PORTS.n8n));
	const brokerPort = await n8nTools.findFreePort();
	const made = n8nTools.createN8nHome({
		port,
		brokerPort,
		runtime,
		extraEnv: {
			N8N_USER_FOLDER: home,
			N8N_ENCRYPTION_KEY: encryptionKey,
			GENERIC_TIMEZONE: timeZone().zone,
		},
		ownerPassword,
	});
	fs.rmSync(made.userFolder, { recursive: true, force: true }); // the temp folder it made is not used
	const env = made.env;
	log(`  ${home}`);

	const installed = n8nTools.installPackageTarball(home, tarball);
	log(
		`  installed ${installed.name}@${installed.version} as a community package (${installed.packageDir})`,
	);
	fs.rmSync(path.dirname(tarball), { recursive: true, force: true });

	// Import what is new or changed since the last start (each CLI call costs a few seconds).
	const stateFile = path.join(home, 'preloaded.json');
	const state = readState(stateFile);
	const dbExists = fs.existsSync(path.join(home, '.n8n', 'database.sqlite'));
	const credentialHash = sha(parts.credentialEntries);
	if (!dbExists || state.credential !== credentialHash) {
		step(
			`Importing the credential "${n8nTools.CREDENTIAL_NAME}" (${credential.baseUrl}), "${FAKE_MODEL_CREDENTIAL.name}" (${fakeModel.baseUrl}) and "${SMTP_CREDENTIAL.name}" (smtp://127.0.0.1:${smtp.port})`,
		);
		await n8nTools.importCredentials(env, parts.credentialEntries, { runtime });
		state.credential = credentialHash;
		fs.writeFileSync(stateFile, JSON.stringify(state, null, 2));
	}
	const examples = n8nTools.exampleWorkflows();
	const changed = examples.filter(
		({ file, workflow }) => !dbExists || (state.examples || {})[file] !== sha(workflow),
	);
	const toPublish: string[] = [];
	if (changed.length > 0) {
		step(`Importing the example workflows: ${changed.map(({ file }) => file).join(', ')}`);
		await n8nTools.importWorkflows(
			env,
			changed.map(({ workflow }) => workflow),
			{ runtime },
		);
		state.examples = { ...(state.examples || {}) };
		for (const { file, workflow } of changed) {
			state.examples[file] = sha(workflow);
			if (sandbox && PUBLISHED_IN_SANDBOX.includes(workflow.id)) toPublish.push(workflow.id);
		}
		fs.writeFileSync(stateFile, JSON.stringify(state, null, 2));
	}
	if (sandbox) {
		// Keys remembered while a real service was used (COMPANION_PUSH_BASE_URL) stay: forgetting them
		// could send again to that service.
		const forgetKeys = !state.realServiceUsed;
		const forgotten = forgetSandboxMemory(runtime, home, { forgetKeys });
		if (forgotten.triggers > 0)
			log(
				`  the sandbox starts empty: ${forgotten.triggers} trigger workflow(s) start watching afresh`,
			);
		if (forgotten.keyedNodes > 0)
			log(
				`  the sandbox starts empty: the Idempotency Keys of ${forgotten.keyedNodes} Companion Push node(s) are forgotten`,
			);
		if (!forgetKeys)
			log(
				'  Idempotency Keys kept: this folder was used with a real service, so an event sent there is not sent again (use --home for a sandbox-only folder)',
			);
	} else if (!state.realServiceUsed) {
		state.realServiceUsed = true;
		fs.writeFileSync(stateFile, JSON.stringify(state, null, 2));
	}
	if (parts.isStopping()) return undefined;

	step(`Starting n8n on 127.0.0.1:${port}`);
	const logFile = path.join(home, 'n8n.log');
	const logStream = fs.createWriteStream(logFile, { flags: 'a' });
	logStream.write(`\n----- n8n start ${new Date().toISOString()} -----\n`);
	const n8n = await n8nTools.startN8n(env, {
		runtime,
		onOutput: (chunk) => {
			logStream.write(chunk);
			if (options.verbose) process.stdout.write(chunk);
		},
	});
	return { process: n8n.process, stop: n8n.stop, url: n8n.url, logFile, examples, toPublish };
}

async function main() {
	const options = parseArgs(process.argv.slice(2));
	const realService = realServiceFromEnv();
	if (options.queue) {
		if (options.homeGiven || options.fresh)
			throw new Error(
				'--home and --fresh do not apply to --queue (every queue-mode start is fresh)',
			);
		return await startQueue({ ...options, realService, publishedInSandbox: PUBLISHED_IN_SANDBOX });
	}
	const started = Date.now();
	const local = await startLocal({
		build: options.build,
		realService,
		sandboxPort: options.sandboxPort,
		stopHeading: 'Stopping n8n and the sandbox ...',
		prepare: (): UserFolder => {
			step('The n8n user folder');
			const home = options.home ?? defaultHome();
			return {
				home,
				mailFolder: path.join(home, 'mails'),
				secretsFolder: home,
				...prepareHome(home, options.fresh),
			};
		},
		startN8n: (parts) => startN8nInHome(parts, options),
	});
	if (!local) return;
	const { n8n, sandbox, credential, exampleSecrets } = local;
	const { home, ownerPassword } = local.prepared;
	const { examples, toPublish, logFile } = n8n;

	const rest = new n8nTools.N8nRestClient(n8n.url);
	await rest.login(n8nTools.OWNER_EMAIL, ownerPassword);
	for (const id of toPublish) {
		try {
			await rest.activateWorkflow(id);
			log(`  published "${examples.find(({ workflow }) => workflow.id === id)?.workflow.name}"`);
		} catch (error) {
			console.error(`  could not publish ${id}: ${error.message}`);
		}
	}
	if (realService) {
		// Published examples would act on the real service (the follow-up report sends a report for
		// every send of the organization): with a real service they stay unpublished.
		const exampleIds = new Set(examples.map(({ workflow }) => workflow.id));
		for (const workflow of await rest.listWorkflows()) {
			if (!workflow.active || !exampleIds.has(workflow.id)) continue;
			await rest.deactivateWorkflow(workflow.id);
			log(`  unpublished the example "${workflow.name}" (a real service is used)`);
		}
	}
	await checkTriggers(rest, { republish: Boolean(sandbox) });
	const workflows = await rest.listWorkflows();
	const credentials = await rest.listCredentials();

	const line = '='.repeat(78);
	log(`\n${line}`);
	log(`n8n is ready: ${n8n.url}   (started in ${Math.round((Date.now() - started) / 1000)} s)`);
	log('');
	log(`  Editor:    ${n8n.url}`);
	log(`  Email:     ${n8nTools.OWNER_EMAIL}`);
	log(
		`  Password:  ${ownerPassword}   (made for this user folder: ${path.join(home, 'owner-password')})`,
	);
	log(
		`  Workflows: ${workflows.map((workflow: { name: string; active: boolean }) => `${workflow.name}${workflow.active ? ' (published)' : ''}`).join('; ')}`,
	);
	// The Companion Push credential(s) only: the model's and the mail server's have their own lines.
	const pushCredentials = credentials.filter(
		(item: { type: string }) => item.type === 'companionPushApi',
	);
	log(
		`  Credential: ${pushCredentials.map((item: { name: string }) => item.name).join(', ')} -> ${credential.baseUrl}`,
	);
	const zone = timeZone();
	log(
		`  Time zone: ${zone.zone} (${zone.from}; for times without a zone and $now; GENERIC_TIMEZONE=<zone> npm start for another)`,
	);
	for (const line of servicesLines(local)) log(line);
	if (sandbox) {
		log(
			`  Sandbox:   ${sandbox.baseUrl}   (admin API: ${sandbox.baseUrl}/__sandbox/credentials, request log: ${sandbox.baseUrl}/__sandbox/log)`,
		);
		log('');
		log('  Try the ERP example (published): it notifies the user named in the event;');
		log('  a minute later the follow-up report example sends the counters to the ops user.');
		log('  Its webhook answers only with the secret header (credential "ERP webhook secret"):');
		log(`    ${erpTryCommand(n8n.url, exampleSecrets, sandbox.orgs.primary.userIds[1])}`);
	}
	log('');
	log(
		'  Try the AI Agent example: open it and click "Execute workflow"; the agent sends with the Companion Push tool.',
	);
	log(
		'  Try the safety alert example: publish it, then click "Execute workflow" and submit the form that opens:',
	);
	log(
		'  everyone gets the alert; whoever no phone reached gets it by e-mail, and whoever has not opened it gets a',
	);
	log(
		'  reminder push at 15 minutes, an e-mail at 30, the team lead a push at 45 (set 1, 2, 3 to see it in minutes).',
	);
	log(
		'  The mails show up here as [mail] lines, one per batch; POST /__sandbox/tap opens the alert as someone.',
	);
	log(
		`  The form asks for a login (credential "Safety alert form login"): ${alertFormLoginLine(exampleSecrets)}.`,
	);
	log('');
	log(`  n8n's log: ${logFile}`);
	log('Ctrl-C to stop.');
	log(line);
}

main().catch((error) => {
	console.error(`\nnpm start failed: ${error.message}`);
	process.exit(1);
});
