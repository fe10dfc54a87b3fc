/**
 * The sandbox over https (`tls: true`): a certificate authority made at start signs a server
 * certificate for 127.0.0.1 and localhost. A client that trusts that authority gets answers; one
 * that does not (the default trust store, or another run's authority) is refused before any
 * request reaches the sandbox. A Node process trusts it through NODE_EXTRA_CA_CERTS, as n8n does.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';

import { checkBaseUrl } from '../../credentials/companionPushApi/baseUrl';
import { useSandbox, useTestSandboxes } from '../harness/index.cts';

const run = promisify(execFile);

/** The first error code along an error's causes (fetch wraps the TLS error). */
function codeOf(error: unknown): string | undefined {
	for (
		let current = error as { code?: string; cause?: unknown } | undefined;
		current;
		current = current.cause as typeof current
	) {
		if (typeof current.code === 'string') return current.code;
	}
	return undefined;
}

describe('the sandbox over https', () => {
	const sandbox = useSandbox({ tls: true, seedUsers: 20, resetBeforeEach: true });
	const testSandboxes = useTestSandboxes();
	let trusting: Agent;
	let caDir: string;
	beforeAll(() => {
		trusting = new Agent({ connect: { ca: sandbox.caCertificate } });
		caDir = mkdtempSync(join(tmpdir(), 'companion-push-tls-test-'));
	});
	afterAll(async () => {
		await trusting.close();
		rmSync(caDir, { recursive: true, force: true });
	});

	const refreshBody = () => {
		const { clientId, clientSecret, refreshToken } = sandbox.orgs.primary;
		return JSON.stringify({
			client_id: clientId,
			client_secret: clientSecret,
			refresh_token: refreshToken,
		});
	};

	test('serves https on 127.0.0.1, a base URL the credential accepts, and hands out its authority', () => {
		expect(sandbox.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
		expect(checkBaseUrl(sandbox.baseUrl)).toBe(sandbox.baseUrl);
		expect(sandbox.caCertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
	});

	test('a client trusting the authority gets a token and calls the API, at 127.0.0.1 and at localhost', async () => {
		const refreshed = await undiciFetch(`${sandbox.baseUrl}/auth/oauth/v2/refresh`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: refreshBody(),
			dispatcher: trusting,
		});
		expect(refreshed.status).toBe(200);
		const { access_token: token } = (await refreshed.json()) as { access_token: string };
		const localhostUrl = sandbox.baseUrl.replace('127.0.0.1', 'localhost');
		const users = await undiciFetch(`${localhostUrl}/user/list?limit=5`, {
			headers: { authorization: `Bearer ${token}` },
			dispatcher: trusting,
		});
		expect(users.status).toBe(200);
		expect((await users.json()) as unknown[]).toHaveLength(5);
		expect(
			sandbox.requestLog().map((entry) => `${entry.method} ${entry.path} ${entry.status}`),
		).toEqual(['POST /auth/oauth/v2/refresh 200', 'GET /user/list 200']);
	});

	test('a client without the authority is refused, and nothing reaches the API', async () => {
		const error = await fetch(`${sandbox.baseUrl}/auth/oauth/v2/refresh`, {
			method: 'POST',
			body: refreshBody(),
		}).catch((caught: unknown) => caught);
		expect(codeOf(error)).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
		expect(sandbox.requestLog()).toEqual([]);
	});

	test("another run's authority does not do: each start makes its own", async () => {
		const other = await testSandboxes.start({ tls: true, seedUsers: 1 });
		expect(other.caCertificate).not.toBe(sandbox.caCertificate);
		const error = await undiciFetch(`${other.baseUrl}/user/list`, { dispatcher: trusting }).catch(
			(caught: unknown) => caught,
		);
		expect(codeOf(error)).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
	});

	test('a Node process trusts it through NODE_EXTRA_CA_CERTS (how n8n is told), and refuses it without', async () => {
		const caFile = join(caDir, 'sandbox-ca.pem');
		writeFileSync(caFile, sandbox.caCertificate!);
		const probe = `require('node:https').get(process.argv[1], (res) => { console.log(res.statusCode); res.resume(); }).on('error', (error) => console.log(error.code));`;
		const statusOf = async (env: NodeJS.ProcessEnv) =>
			(
				await run(process.execPath, ['-e', probe, `${sandbox.baseUrl}/user/list`], { env })
			).stdout.trim();
		const { NODE_EXTRA_CA_CERTS: _ignored, ...withoutCa } = process.env;
		expect(await statusOf({ ...withoutCa, NODE_EXTRA_CA_CERTS: caFile })).toBe('401'); // reached the API: no token
		expect(await statusOf(withoutCa)).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
		expect(sandbox.requestLog().map((entry) => entry.status)).toEqual([401]);
	});
});
