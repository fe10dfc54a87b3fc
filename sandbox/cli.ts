/**
 * `npm run sandbox [-- --port N] [--users N] [--clock manual] [--seed N]`: starts the sandbox on
 * 127.0.0.1, prints the base URL, working credentials and an example call, and stops on Ctrl-C.
 */
import { startSandbox, type SandboxOptions } from './index';

function parseArgs(argv: string[]): SandboxOptions {
	const options: SandboxOptions = { port: 4010 };
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].split('=', 2);
		const value = () => inline ?? argv[++i];
		const number = (name: string) => {
			const parsed = Number(value());
			if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} needs a non-negative integer`);
			return parsed;
		};
		if (flag === '--port') options.port = number('--port');
		else if (flag === '--users') options.seedUsers = number('--users');
		else if (flag === '--seed') options.seed = number('--seed');
		else if (flag === '--clock') {
			const mode = value();
			if (mode !== 'real' && mode !== 'manual') throw new Error('--clock is real or manual');
			options.clock = mode;
		} else if (flag === '--help' || flag === '-h') {
			console.log('usage: npm run sandbox -- [--port 4010] [--users 200] [--clock real|manual] [--seed 1]');
			process.exit(0);
		} else throw new Error(`unknown option ${argv[i]} (try --help)`);
	}
	return options;
}

async function main(): Promise<void> {
	const sandbox = await startSandbox(parseArgs(process.argv.slice(2)));
	const { primary } = sandbox.orgs;
	const refreshBody = JSON.stringify({ client_id: primary.clientId, client_secret: primary.clientSecret, refresh_token: primary.refreshToken });
	console.log(`Push API sandbox listening on ${sandbox.baseUrl}`);
	console.log('');
	console.log(`  Base URL:       ${sandbox.baseUrl}`);
	console.log(`  Client ID:      ${primary.clientId}`);
	console.log(`  Client Secret:  ${primary.clientSecret}`);
	console.log(`  Refresh Token:  ${primary.refreshToken}`);
	console.log(`  Organization:   ${primary.id} (${primary.userIds.length} users); a second one for cross-tenant checks`);
	console.log('');
	console.log('Get a token:');
	console.log(`  curl -s -X POST ${sandbox.baseUrl}/auth/oauth/v2/refresh -H 'content-type: application/json' -d '${refreshBody}'`);
	console.log('Then, e.g.:');
	console.log(`  curl -s ${sandbox.baseUrl}/user/list?limit=5 -H 'authorization: Bearer <access_token>'`);
	console.log(`Admin API (clock, faults, taps, log, all credentials): ${sandbox.baseUrl}/__sandbox/credentials`);
	console.log('Ctrl-C to stop.');

	let stopping = false;
	const stop = () => {
		if (stopping) return;
		stopping = true;
		sandbox.stop().then(() => process.exit(0));
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
}

main().catch((error) => {
	console.error(`sandbox: ${(error as Error).message}`);
	process.exit(1);
});
