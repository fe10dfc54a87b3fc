import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

/** Starts `sandbox/cli.ts` as `npm run sandbox` does, and resolves once it printed its banner. */
function startCli(args: string[]): Promise<{ child: ChildProcess; output: string }> {
	const child = spawn(process.execPath, [path.join(root, 'node_modules/ts-node/dist/bin.js'), '--transpile-only', 'sandbox/cli.ts', ...args], {
		cwd: root,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
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

describe('npm run sandbox (sandbox/cli.ts)', () => {
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
				body: JSON.stringify({ client_id: clientId, client_secret: clientSecret, refresh_token: refreshToken }),
			});
			const { access_token } = (await refreshed.json()) as { access_token: string };
			const users = await fetch(`${baseUrl}/user/list?limit=1000`, { headers: { authorization: `Bearer ${access_token}` } });
			expect(((await users.json()) as unknown[]).length).toBe(25);
			const clock = (await (await fetch(`${baseUrl}/__sandbox/clock`)).json()) as { mode: string };
			expect(clock.mode).toBe('manual');
		} finally {
			const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
			child.kill('SIGTERM');
			expect(await exited).toBe(0);
		}
	});

	test('refuses an unknown option with a clear message', async () => {
		await expect(startCli(['--colour', 'blue'])).rejects.toThrow(/unknown option --colour/);
	});
});
