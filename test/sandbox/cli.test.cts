import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';

const root = path.resolve(__dirname, '../..');

/** Starts `sandbox/cli.cts` as `npm run sandbox` does, and resolves once it printed its banner. */
function startCli(args: string[]): Promise<{ child: ChildProcess; output: string }> {
	const child = spawn(
		process.execPath,
		[
			path.join(root, 'node_modules/ts-node/dist/bin.js'),
			'--transpile-only',
			'sandbox/cli.cts',
			...args,
		],
		{
			cwd: root,
			stdio: ['ignore', 'pipe', 'pipe'],
		},
	);
	return new Promise((resolve, reject) => {
		let output = '';
		child.stdout?.on('data', (chunk) => {
			output += chunk;
			if (output.includes('Ctrl-C to stop.')) resolve({ child, output });
		});
		child.stderr?.on('data', (chunk) => (output += chunk));
		child.on('exit', (code) => reject(new Error(`cli exited with ${code}: ${output}`)));
	});
}

describe('npm run sandbox (sandbox/cli.cts)', () => {
	test('prints the base URL and working credentials of the primary org, and stops on SIGTERM', async () => {
		const { child, output } = await startCli(['--port', '0', '--users', '25', '--clock', 'manual']);
		try {
			const baseUrl = /Base URL:\s+(\S+)/.exec(output)?.[1] as string;
			const clientId = /Client ID:\s+(\S+)/.exec(output)?.[1];
			const clientSecret = /Client Secret:\s+(\S+)/.exec(output)?.[1];
			const refreshToken = /Refresh Token:\s+(\S+)/.exec(output)?.[1];
			expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
			expect(output).toContain('curl -s -X POST');
			const refreshed = await fetch(`${baseUrl}/auth/oauth/v2/refresh`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({
					client_id: clientId,
					client_secret: clientSecret,
					refresh_token: refreshToken,
				}),
			});
			const { access_token } = (await refreshed.json()) as { access_token: string };
			const users = await fetch(`${baseUrl}/user/list?limit=1000`, {
				headers: { authorization: `Bearer ${access_token}` },
			});
			expect(((await users.json()) as unknown[]).length).toBe(25);
			const clock = (await (await fetch(`${baseUrl}/__sandbox/clock`)).json()) as { mode: string };
			expect(clock.mode).toBe('manual');
		} finally {
			const exited = new Promise<number | null>((resolve) =>
				child.once('exit', (code) => resolve(code)),
			);
			child.kill('SIGTERM');
			expect(await exited).toBe(0);
		}
	});

	test('switch flags: --latency --jitter --rate-limit --max-in-flight --token-lifetime --refresh-revokes-previous', async () => {
		const { child, output } = await startCli([
			'--port',
			'0',
			'--users',
			'5',
			'--clock',
			'manual',
			'--latency',
			'30',
			'--jitter',
			'10',
			'--rate-limit',
			'2',
			'--max-in-flight',
			'3',
			'--token-lifetime',
			'60',
			'--refresh-revokes-previous',
		]);
		try {
			expect(output).toContain(
				'Switches:       tokenLifetimeSeconds=60, refreshRevokesPreviousTokens=true, latencyMs=30, latencyJitterMs=10, rateLimitPerSecond=2, maxInFlight=3',
			);
			const baseUrl = /Base URL:\s+(\S+)/.exec(output)?.[1] as string;
			const settings = (
				(await (await fetch(`${baseUrl}/__sandbox/settings`)).json()) as {
					settings: Record<string, unknown>;
				}
			).settings;
			expect(settings).toMatchObject({
				latencyMs: 30,
				latencyJitterMs: 10,
				rateLimitPerSecond: 2,
				maxInFlight: 3,
				tokenLifetimeSeconds: 60,
				refreshRevokesPreviousTokens: true,
			});
			const credentials = (await (await fetch(`${baseUrl}/__sandbox/credentials`)).json()) as {
				orgs: { primary: Record<string, string> };
			};
			const { clientId, clientSecret, refreshToken } = credentials.orgs.primary;
			const refresh = () =>
				fetch(`${baseUrl}/auth/oauth/v2/refresh`, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({
						client_id: clientId,
						client_secret: clientSecret,
						refresh_token: refreshToken,
					}),
				});
			const first = (await (await refresh()).json()) as {
				access_token: string;
				expires_in: number;
			};
			expect(first.expires_in).toBe(60);
			await refresh(); // revokes the first token, and uses the rest of the burst of 2
			const revoked = await fetch(`${baseUrl}/user/list`, {
				headers: { authorization: `Bearer ${first.access_token}` },
			});
			expect(revoked.status).toBe(401);
			const third = await refresh(); // the manual clock stands still: no refill
			expect(third.status).toBe(429);
			expect(third.headers.get('retry-after')).toBe('1');
			const { requests } = (await (await fetch(`${baseUrl}/__sandbox/log`)).json()) as {
				requests: Array<{ latencyMs: number }>;
			};
			expect(requests).toHaveLength(4);
			for (const request of requests) {
				expect(request.latencyMs).toBeGreaterThanOrEqual(30);
				expect(request.latencyMs).toBeLessThanOrEqual(40);
			}
		} finally {
			const exited = new Promise<number | null>((resolve) =>
				child.once('exit', (code) => resolve(code)),
			);
			child.kill('SIGTERM');
			expect(await exited).toBe(0);
		}
	});

	test('--https: an https base URL, the authority written to a file for NODE_EXTRA_CA_CERTS, removed at stop', async () => {
		const { child, output } = await startCli(['--port', '0', '--users', '3', '--https']);
		const caFile = /CA certificate:\s+(\S+)/.exec(output)?.[1] as string;
		try {
			const baseUrl = /Base URL:\s+(\S+)/.exec(output)?.[1] as string;
			expect(baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
			expect(output).toContain(`NODE_EXTRA_CA_CERTS=${caFile}`);
			expect(output).toContain(
				`curl --cacert ${caFile} -s -X POST ${baseUrl}/auth/oauth/v2/refresh`,
			);
			const trusting = new Agent({ connect: { ca: readFileSync(caFile, 'utf8') } });
			try {
				const clock = await undiciFetch(`${baseUrl}/__sandbox/clock`, { dispatcher: trusting });
				expect(clock.status).toBe(200);
			} finally {
				await trusting.close();
			}
		} finally {
			const exited = new Promise<number | null>((resolve) =>
				child.once('exit', (code) => resolve(code)),
			);
			child.kill('SIGTERM');
			expect(await exited).toBe(0);
		}
		expect(existsSync(caFile)).toBe(false);
	});

	test('refuses a bad switch value with a clear message', async () => {
		await expect(startCli(['--port', '0', '--rate-limit', '0'])).rejects.toThrow(
			/--rate-limit needs a number above 0/,
		);
		await expect(startCli(['--port', '0', '--max-in-flight', '0'])).rejects.toThrow(
			/invalid sandbox setting maxInFlight/,
		);
		await expect(startCli(['--port', '0', '--refresh-revokes-previous=no'])).rejects.toThrow(
			/unknown option --refresh-revokes-previous=no/,
		);
		await expect(startCli(['--port', '0', '--ca-file', '/tmp/unused.pem'])).rejects.toThrow(
			/--ca-file needs --https/,
		);
	}, 240_000); // four starts of ts-node, one after the other: each can take tens of seconds on a loaded machine

	test('refuses an unknown option with a clear message', async () => {
		await expect(startCli(['--colour', 'blue'])).rejects.toThrow(/unknown option --colour/);
	});
});
