/**
 * Certificates for the sandbox's https, made at run time with Debian's `openssl`: a certificate
 * authority of its own and a server certificate it signs for 127.0.0.1, ::1 and localhost. Nothing
 * is kept: every call makes a new authority, so only a client told about this one (its `ca`, or
 * NODE_EXTRA_CA_CERTS for a whole Node process such as n8n) trusts the sandbox.
 *
 * Keys are ECDSA P-256: the handshakes' server half runs on the same machine as the client here
 * (in production it is another machine), and P-256 keeps that half cheap.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { SandboxTls } from './types.cts';

const run = promisify(execFile);

/** How long the certificates are valid: longer than any run, short enough not to matter if one leaks. */
const VALID_DAYS = '7';

const SERVER_EXTENSIONS = [
	'basicConstraints = critical, CA:FALSE',
	'keyUsage = critical, digitalSignature',
	'extendedKeyUsage = serverAuth',
	'subjectAltName = IP:127.0.0.1, IP:::1, DNS:localhost',
].join('\n');

async function openssl(cwd: string, args: string[]): Promise<void> {
	try {
		await run('openssl', args, { cwd });
	} catch (error) {
		const { code, stderr } = error as { code?: string; stderr?: string };
		if (code === 'ENOENT')
			throw new Error('The sandbox needs `openssl` for https (Debian: apt-get install openssl).');
		throw new Error(`openssl ${args[0]} failed: ${(stderr ?? String(error)).trim().slice(0, 500)}`);
	}
}

/** A new certificate authority and a server certificate it signed, as PEM. */
export async function makeSandboxCertificates(): Promise<SandboxTls> {
	const dir = await mkdtemp(join(tmpdir(), 'companion-push-sandbox-tls-'));
	try {
		const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
		await openssl(dir, [
			'req',
			'-x509',
			...ecKey,
			'-keyout',
			'ca.key',
			'-out',
			'ca.pem',
			'-days',
			VALID_DAYS,
			'-subj',
			'/CN=Companion Push sandbox test CA',
			'-addext',
			'basicConstraints = critical, CA:TRUE',
			'-addext',
			'keyUsage = critical, keyCertSign, cRLSign',
		]);
		await openssl(dir, [
			'req',
			'-new',
			...ecKey,
			'-keyout',
			'server.key',
			'-out',
			'server.csr',
			'-subj',
			'/CN=127.0.0.1',
		]);
		await writeFile(join(dir, 'server.ext'), `${SERVER_EXTENSIONS}\n`);
		await openssl(dir, [
			'x509',
			'-req',
			'-in',
			'server.csr',
			'-CA',
			'ca.pem',
			'-CAkey',
			'ca.key',
			'-out',
			'server.pem',
			'-days',
			VALID_DAYS,
			'-set_serial',
			`0x${randomBytes(8).toString('hex')}`,
			'-extfile',
			'server.ext',
		]);
		const [ca, cert, key] = await Promise.all(
			['ca.pem', 'server.pem', 'server.key'].map((file) => readFile(join(dir, file), 'utf8')),
		);
		return { ca, cert, key };
	} finally {
		// The authority's key goes with the folder: nobody can sign another certificate with it.
		await rm(dir, { recursive: true, force: true });
	}
}
