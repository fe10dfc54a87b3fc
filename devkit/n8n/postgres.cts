// A fresh Postgres 15 for n8n on this machine (dev tooling, never shipped): Debian's binaries run
// as the postgres user, a new data folder, on 127.0.0.1 only, a database `n8n` owned by the user
// `n8n`, whose password is made anew for each start (any local user could use a database without one). Used by the queue-mode cluster (queueMode.ts) and by the benchmark's
// regular-mode n8n on Postgres. stop() shuts it down; killNow() is for this process's exit.
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

import { isExecutable } from '../aptGet.cts';
import { findFreePort } from './run.cts';

const PG_BIN = process.env.COMPANION_PUSH_PG_BIN || '/usr/lib/postgresql/15/bin';
const PG_USER = 'postgres'; // Postgres refuses to run as root

const run = promisify(execFile);

/** Postgres's binaries, or the reason they are missing. */
export function checkPostgres(): void {
	for (const name of ['initdb', 'pg_ctl', 'postgres', 'psql']) {
		const file =
			name === 'psql' && !isExecutable(path.join(PG_BIN, name))
				? '/usr/bin/psql'
				: path.join(PG_BIN, name);
		if (!isExecutable(file))
			throw new Error(
				`n8n on Postgres needs PostgreSQL's ${name} (looked at ${file}): install postgresql (Debian 12: postgresql-15) or set COMPANION_PUSH_PG_BIN.`,
			);
	}
	if (spawnSync('id', ['-u', PG_USER]).status !== 0)
		throw new Error(`Postgres runs as the "${PG_USER}" user, which does not exist here.`);
}

const asPostgres = (command: string, args: string[]) =>
	(process.getuid?.() === 0
		? ['runuser', ['-u', PG_USER, '--', command, ...args]]
		: [command, args]) as [string, string[]];

export type RunningPostgres = Awaited<ReturnType<typeof startPostgres>>;

/**
 * Starts Postgres with its data folder and log inside `root` (which the postgres user must be able
 * to enter), `-c` settings added to the command line. Resolves once the database `n8n` exists.
 */
export async function startPostgres({
	root,
	log = () => undefined,
	settings = {},
}: {
	root: string;
	log?: (line: string) => void;
	settings?: Record<string, string>;
}) {
	checkPostgres();
	const dataDir = path.join(root, 'postgres');
	const logFile = path.join(root, 'postgres.log');
	const port = await findFreePort();
	const startedAt = Date.now();

	fs.mkdirSync(dataDir, { mode: 0o700 });
	spawnSync('chown', [PG_USER, dataDir]);
	// The password reaches initdb in a file only the postgres user reads, removed at once (never on a
	// command line, which every local user sees).
	const password = randomBytes(18).toString('hex');
	const passwordFile = path.join(root, 'postgres-password');
	fs.writeFileSync(passwordFile, password, { mode: 0o600 });
	spawnSync('chown', [PG_USER, passwordFile]);
	try {
		await run(
			...asPostgres(path.join(PG_BIN, 'initdb'), [
				'-D',
				dataDir,
				'-A',
				'scram-sha-256',
				`--pwfile=${passwordFile}`,
				'-U',
				'n8n',
				'--no-sync',
			]),
		);
	} finally {
		fs.rmSync(passwordFile, { force: true });
	}
	// Postgres writes its log as the postgres user.
	fs.writeFileSync(logFile, '');
	spawnSync('chown', [PG_USER, logFile]);
	const extra = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`);
	const options = [
		`-p ${port}`,
		`-k ${dataDir}`,
		'-c listen_addresses=127.0.0.1',
		'-c fsync=off',
		'-c max_connections=100',
		...extra,
	].join(' ');
	let stopped = false;
	const stop = async () => {
		if (stopped) return;
		stopped = true;
		await run(
			...asPostgres(path.join(PG_BIN, 'pg_ctl'), [
				'-D',
				dataDir,
				'-m',
				'fast',
				'-w',
				'-t',
				'30',
				'stop',
			]),
		).catch((error) => log(`[postgres] pg_ctl stop: ${error.message}`));
	};

	const psqlBin = isExecutable(path.join(PG_BIN, 'psql'))
		? path.join(PG_BIN, 'psql')
		: '/usr/bin/psql';
	const psqlArgs = [
		'-h',
		'127.0.0.1',
		'-p',
		String(port),
		'-U',
		'n8n',
		'-v',
		'ON_ERROR_STOP=1',
		'-At',
		'-F',
		'\t',
	];
	/** A query; rows of tab-separated fields. */
	const psql = async (sql: string, database = 'n8n'): Promise<string[][]> => {
		const { stdout } = await run(psqlBin, [...psqlArgs, '-d', database, '-c', sql], {
			maxBuffer: 64 * 1024 * 1024,
			env: { ...process.env, PGPASSWORD: password },
		});
		return stdout
			.split('\n')
			.filter((line) => line !== '')
			.map((line) => line.split('\t'));
	};
	try {
		await run(
			...asPostgres(path.join(PG_BIN, 'pg_ctl'), [
				'-D',
				dataDir,
				'-l',
				logFile,
				'-w',
				'-t',
				'60',
				'-o',
				options,
				'start',
			]),
		).catch((error) => {
			throw new Error(
				`Postgres did not start: ${error.message}\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`,
			);
		});
		await psql('create database n8n', 'postgres');
	} catch (error) {
		await stop();
		throw error;
	}
	log(`[postgres] on 127.0.0.1:${port} (${Date.now() - startedAt} ms)`);

	return {
		port,
		dataDir,
		logFile,
		psqlBin,
		psql,
		/** What n8n needs to use this database. */
		n8nEnv: {
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(port),
			DB_POSTGRESDB_DATABASE: 'n8n',
			DB_POSTGRESDB_USER: 'n8n',
			DB_POSTGRESDB_PASSWORD: password,
		} as Record<string, string>,
		/** A fast shutdown, waited for. */
		stop,
		/** An immediate shutdown, synchronously (for this process's exit). */
		killNow: () => {
			const pidFile = path.join(dataDir, 'postmaster.pid');
			const pid = fs.existsSync(pidFile)
				? Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0])
				: 0;
			try {
				if (pid) process.kill(pid, 'SIGQUIT'); // Postgres's immediate shutdown
			} catch {
				// already gone
			}
		},
	};
}
