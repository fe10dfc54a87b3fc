/**
 * `npm run sandbox [-- --port N] [--users N] [--clock manual] [--seed N] [--https [--ca-file PATH]] [switches]`:
 * starts the sandbox on 127.0.0.1, prints the base URL, working credentials and an example call,
 * and stops on Ctrl-C. With --https it serves https with a certificate made at start and writes the
 * authority that signed it to a file (for NODE_EXTRA_CA_CERTS), removed at stop unless --ca-file
 * named it. Switches: --latency MS --jitter MS --rate-limit PER_SECOND --max-in-flight N
 * --token-lifetime SECONDS --refresh-revokes-previous (see sandbox/README.md).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import {
	DEFAULT_SETTINGS,
	startSandbox,
	type SandboxOptions,
	type SandboxSettings,
} from './index.cts';

const USAGE =
	'usage: npm run sandbox -- [--port 4010] [--users 200] [--clock real|manual] [--seed 1] [--https [--ca-file PATH]]\n' +
	'  [--latency MS] [--jitter MS] [--rate-limit PER_SECOND] [--max-in-flight N] [--token-lifetime SECONDS] [--refresh-revokes-previous]';

interface CliOptions extends SandboxOptions {
	/** Where the https sandbox's certificate authority is written (kept at stop). */
	caFile?: string;
}

function parseArgs(argv: string[]): CliOptions {
	const options: CliOptions = { port: 4010 };
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].split('=', 2);
		const value = () => inline ?? argv[++i];
		const number = (name: string) => {
			const parsed = Number(value());
			if (!Number.isInteger(parsed) || parsed < 0)
				throw new Error(`${name} needs a non-negative integer`);
			return parsed;
		};
		const positive = (name: string) => {
			const parsed = Number(value());
			if (!Number.isFinite(parsed) || parsed <= 0)
				throw new Error(`${name} needs a number above 0`);
			return parsed;
		};
		if (flag === '--port') options.port = number('--port');
		else if (flag === '--users') options.seedUsers = number('--users');
		else if (flag === '--seed') options.seed = number('--seed');
		else if (flag === '--latency') options.latencyMs = number('--latency');
		else if (flag === '--jitter') options.latencyJitterMs = number('--jitter');
		else if (flag === '--rate-limit') options.rateLimitPerSecond = positive('--rate-limit');
		else if (flag === '--max-in-flight') options.maxInFlight = number('--max-in-flight');
		else if (flag === '--token-lifetime') options.tokenLifetimeSeconds = number('--token-lifetime');
		else if (flag === '--refresh-revokes-previous' && inline === undefined)
			options.refreshRevokesPreviousTokens = true;
		else if (flag === '--https' && inline === undefined) options.tls = true;
		else if (flag === '--ca-file') options.caFile = resolve(value());
		else if (flag === '--clock') {
			const mode = value();
			if (mode !== 'real' && mode !== 'manual') throw new Error('--clock is real or manual');
			options.clock = mode;
		} else if (flag === '--help' || flag === '-h') {
			console.log(USAGE);
			process.exit(0);
		} else throw new Error(`unknown option ${argv[i]} (try --help)`);
	}
	if (options.caFile && !options.tls) throw new Error('--ca-file needs --https');
	return options;
}

/** Writes the https sandbox's certificate authority where n8n (NODE_EXTRA_CA_CERTS) can read it; returns
 * the file and how to remove what was written. */
function writeCaFile(ca: string, wanted?: string): { file: string; remove: () => void } {
	if (wanted) {
		writeFileSync(wanted, ca);
		return { file: wanted, remove: () => undefined };
	}
	const dir = mkdtempSync(join(tmpdir(), 'companion-push-sandbox-ca-'));
	const file = join(dir, 'sandbox-ca.pem');
	writeFileSync(file, ca);
	return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The settings that differ from the defaults, e.g. `latencyMs=40, rateLimitPerSecond=50`. */
function changedSettings(settings: SandboxSettings): string {
	return (Object.keys(DEFAULT_SETTINGS) as Array<keyof SandboxSettings>)
		.filter((key) => JSON.stringify(settings[key]) !== JSON.stringify(DEFAULT_SETTINGS[key])) // lists compare by content
		.map((key) => `${key}=${settings[key]}`)
		.join(', ');
}

async function main(): Promise<void> {
	const { caFile, ...options } = parseArgs(process.argv.slice(2));
	const sandbox = await startSandbox(options);
	const ca = sandbox.caCertificate ? writeCaFile(sandbox.caCertificate, caFile) : undefined;
	const { primary } = sandbox.orgs;
	const refreshBody = JSON.stringify({
		client_id: primary.clientId,
		client_secret: primary.clientSecret,
		refresh_token: primary.refreshToken,
	});
	console.log(`Push API sandbox listening on ${sandbox.baseUrl}`);
	console.log('');
	console.log(`  Base URL:       ${sandbox.baseUrl}`);
	console.log(`  Client ID:      ${primary.clientId}`);
	console.log(`  Client Secret:  ${primary.clientSecret}`);
	console.log(`  Refresh Token:  ${primary.refreshToken}`);
	console.log(
		`  Organization:   ${primary.id} (${primary.userIds.length} users); a second one for cross-tenant checks`,
	);
	const switches = changedSettings(sandbox.settings());
	if (switches) console.log(`  Switches:       ${switches}`);
	if (ca) {
		console.log(`  CA certificate: ${ca.file}`);
		console.log('');
		console.log(
			'https with a certificate authority made for this run: trust it, nothing else changes.',
		);
		console.log(
			`  n8n:  NODE_EXTRA_CA_CERTS=${ca.file} n8n start   (read at start: restart n8n when the sandbox restarts)`,
		);
	}
	const curl = ca ? `curl --cacert ${ca.file}` : 'curl';
	console.log('');
	console.log('Get a token:');
	console.log(
		`  ${curl} -s -X POST ${sandbox.baseUrl}/auth/oauth/v2/refresh -H 'content-type: application/json' -d '${refreshBody}'`,
	);
	console.log('Then, e.g.:');
	console.log(
		`  ${curl} -s ${sandbox.baseUrl}/user/list?limit=5 -H 'authorization: Bearer <access_token>'`,
	);
	console.log(
		`Admin API (clock, faults, taps, log, all credentials): ${sandbox.baseUrl}/__sandbox/credentials`,
	);
	console.log('Ctrl-C to stop.');

	let stopping = false;
	const stop = () => {
		if (stopping) return;
		stopping = true;
		sandbox.stop().then(() => {
			ca?.remove();
			process.exit(0);
		});
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
}

main().catch((error) => {
	console.error(`sandbox: ${(error as Error).message}`);
	process.exit(1);
});
