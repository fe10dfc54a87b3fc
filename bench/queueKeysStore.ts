/**
 * n8n's processed-data store (table `processed_data`, one row per workflow and scope, the whole set
 * of keys in one JSON value) read and timed with psql, for the queue-keys benchmark:
 * - the rows of a workflow (entries, bytes);
 * - every write to the table, logged by a trigger this benchmark adds to its throwaway database:
 *   which row, how many entries before and after, and which entries the write dropped (a write of a
 *   stale copy of the row drops what another process added since: a lost update);
 * - how long one whole-row read and one whole-row UPDATE take at a given number of entries, on a
 *   scratch copy of the table.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

import { entryHash } from './queueKeysFormat';

const run = promisify(execFile);

/** psql as the cluster's own helper finds it (Debian's Postgres 15, or COMPANION_PUSH_PG_BIN). */
function psqlBinary(): string {
	const pgBin = process.env.COMPANION_PUSH_PG_BIN || '/usr/lib/postgresql/15/bin';
	return fs.existsSync(path.join(pgBin, 'psql')) ? path.join(pgBin, 'psql') : '/usr/bin/psql';
}

/** psql against n8n's database of a queue-mode cluster (user n8n, trust auth on 127.0.0.1). */
export class Psql {
	private readonly binary = psqlBinary();

	constructor(private readonly pgPort: number) {}

	private args(): string[] {
		return ['-h', '127.0.0.1', '-p', String(this.pgPort), '-U', 'n8n', '-d', 'n8n', '-v', 'ON_ERROR_STOP=1', '-X', '-q', '-At', '-F', '\t'];
	}

	/** Rows of tab-separated fields. */
	async query(sql: string): Promise<string[][]> {
		const { stdout } = await run(this.binary, [...this.args(), '-c', sql], { maxBuffer: 256 * 1024 * 1024 });
		return stdout
			.split('\n')
			.filter((line) => line !== '')
			.map((line) => line.split('\t'));
	}

	/** Runs a script (for statements too long for a command line); its standard output. */
	async script(text: string): Promise<string> {
		const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-queue-keys-'));
		try {
			const file = path.join(folder, 'script.sql');
			fs.writeFileSync(file, text);
			const { stdout } = await run(this.binary, [...this.args(), '-f', file], { maxBuffer: 256 * 1024 * 1024 });
			return stdout;
		} finally {
			fs.rmSync(folder, { recursive: true, force: true });
		}
	}
}

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

export interface StoreRow {
	/** '' = workflow scope, 'n:<node id>' = node scope. */
	context: string;
	mode: string;
	/** Entries (`entries` mode), or undefined when the row holds one value (the latest* modes). */
	entries?: number;
	/** The value's text, in bytes. */
	textBytes: number;
	/** What Postgres stores for it (pg_column_size: after TOAST compression). */
	storedBytes: number;
}

/** The workflow's rows of processed_data, with the hashes of the `entries` rows. */
export async function readStoreRows(psql: Psql, workflowId: string): Promise<{ rows: StoreRow[]; hashes: string[] }> {
	const result = await psql.query(
		`select context, octet_length(value::text), pg_column_size(value), value::text from processed_data where "workflowId" = ${literal(workflowId)} order by context`,
	);
	const hashes: string[] = [];
	const rows = result.map(([context, textBytes, storedBytes, text]) => {
		const value = JSON.parse(text) as { mode: string; data: unknown };
		if (Array.isArray(value.data)) hashes.push(...(value.data as string[]));
		return {
			context,
			mode: value.mode,
			entries: Array.isArray(value.data) ? value.data.length : undefined,
			textBytes: Number(textBytes),
			storedBytes: Number(storedBytes),
		};
	});
	return { rows, hashes };
}

/** Adds the write log (a table and a trigger on processed_data). Idempotent. */
export async function installWriteLog(psql: Psql): Promise<void> {
	await psql.script(`
create table if not exists queue_keys_writes (
	id bigserial primary key,
	"workflowId" varchar(36) not null,
	context varchar(255) not null,
	op char(1) not null,
	entries_before int,
	entries_after int,
	dropped text[]
);
create or replace function queue_keys_log_write() returns trigger language plpgsql as $$
declare
	data_before jsonb := case when tg_op <> 'INSERT' then (old.value::text::jsonb) -> 'data' end;
	data_after jsonb := case when tg_op <> 'DELETE' then (new.value::text::jsonb) -> 'data' end;
begin
	if jsonb_typeof(data_before) <> 'array' then data_before := null; end if;
	if jsonb_typeof(data_after) <> 'array' then data_after := null; end if;
	insert into queue_keys_writes ("workflowId", context, op, entries_before, entries_after, dropped)
	values (
		coalesce(new."workflowId", old."workflowId"),
		coalesce(new.context, old.context),
		left(tg_op, 1),
		jsonb_array_length(data_before),
		jsonb_array_length(data_after),
		case when data_before is not null then array(
			select jsonb_array_elements_text(data_before)
			except
			select jsonb_array_elements_text(coalesce(data_after, '[]'::jsonb))
		) end
	);
	return null;
end $$;
drop trigger if exists queue_keys_log_write on processed_data;
create trigger queue_keys_log_write after insert or update or delete on processed_data
	for each row execute function queue_keys_log_write();
`);
}

export interface StoreWrites {
	inserts: number;
	updates: number;
	deletes: number;
	/** Hashes that writes dropped from a row, each with how many times. */
	dropped: Map<string, number>;
	/** The id of the last write read: the next read starts after it. */
	lastId: number;
}

/** The writes to the workflow's rows logged after write `afterId`. */
export async function readWrites(psql: Psql, workflowId: string, afterId = 0): Promise<StoreWrites> {
	const rows = await psql.query(
		`select id, op, coalesce(array_to_string(dropped, ' '), '') from queue_keys_writes where "workflowId" = ${literal(workflowId)} and id > ${Number(afterId)} order by id`,
	);
	const writes: StoreWrites = { inserts: 0, updates: 0, deletes: 0, dropped: new Map(), lastId: afterId };
	for (const [id, op, dropped] of rows) {
		writes.lastId = Math.max(writes.lastId, Number(id));
		if (op === 'I') writes.inserts++;
		else if (op === 'U') writes.updates++;
		else if (op === 'D') writes.deletes++;
		for (const hash of dropped.split(' ').filter(Boolean)) writes.dropped.set(hash, (writes.dropped.get(hash) ?? 0) + 1);
	}
	return writes;
}

/** The highest write id logged so far (0 without any). */
export async function lastWriteId(psql: Psql): Promise<number> {
	return Number((await psql.query('select coalesce(max(id), 0) from queue_keys_writes'))[0][0]);
}

/** A row value as n8n writes it in `entries` mode, with `count` distinct entries (`shift` moves the window by that many). */
export function entriesValue(count: number, shift = 0): string {
	const data = Array.from({ length: count }, (_, index) => entryHash(`synthetic key ${index + shift}`));
	return JSON.stringify({ mode: 'entries', data });
}

export interface RowCost {
	entries: number;
	textBytes: number;
	storedBytes: number;
	/** Median wall time (ms) of one whole-row UPDATE seen by psql (the value sent as a literal, as n8n sends it as a parameter). */
	updateMs: number;
	/** Median server time (ms) of the same UPDATE (EXPLAIN ANALYZE's Execution Time). */
	updateServerMs: number;
	/** Median wall time (ms) of reading the whole row (n8n reads it before every write). */
	readMs: number;
	reps: number;
}

const median = (values: number[]) => {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * One whole-row UPDATE and one whole-row read of a row of `entries` entries, timed on a scratch copy
 * of processed_data (same columns and primary key, no foreign key): each UPDATE writes the window
 * moved by one entry, as a claim that appends one key to a full row does.
 */
export async function timeRowCost(psql: Psql, entries: number, reps = 5): Promise<RowCost> {
	const table = `queue_keys_scratch_${randomBytes(4).toString('hex')}`;
	const where = `"workflowId" = 'scratch' and context = 'n:scratch'`;
	const values = [entriesValue(entries), entriesValue(entries, 1)];
	const lines = [
		`create table ${table} (like processed_data including all);`,
		`\\set value0 ${literal(values[0])}`,
		`\\set value1 ${literal(values[1])}`,
		`insert into ${table} ("workflowId", context, value) values ('scratch', 'n:scratch', :'value0');`,
		`\\o /dev/null`,
		`\\timing on`,
		'\\echo phase read',
	];
	for (let rep = 0; rep < reps; rep++) lines.push(`select value from ${table} where ${where};`);
	lines.push('\\echo phase update');
	for (let rep = 0; rep < reps; rep++) lines.push(`update ${table} set value = :'value${(rep + 1) % 2}', "updatedAt" = now() where ${where};`);
	lines.push('\\timing off', '\\o');
	for (let rep = 0; rep < reps; rep++) {
		lines.push(`explain (analyze, format json) update ${table} set value = :'value${rep % 2}', "updatedAt" = now() where ${where};`);
	}
	lines.push(`select 'size', octet_length(value::text), pg_column_size(value) from ${table} where ${where};`, `drop table ${table};`);
	// \set reads a quoted argument as SQL does ('' is a quote); :'name' sends it back as a literal.
	const script = lines.join('\n');
	let output: string;
	try {
		output = await psql.script(script);
	} finally {
		await psql.query(`drop table if exists ${table}`).catch(() => undefined);
	}
	const timings: Record<string, number[]> = { read: [], update: [] };
	let phase = '';
	const serverMs: number[] = [];
	let sizes = ['0', '0'];
	for (const line of output.split('\n')) {
		const phaseMatch = /^phase (\w+)/.exec(line);
		const timeMatch = /^Time: ([\d.]+) ms/.exec(line);
		const executionMatch = /"Execution Time": ([\d.]+)/.exec(line);
		if (phaseMatch) phase = phaseMatch[1];
		else if (timeMatch && timings[phase]) timings[phase].push(Number(timeMatch[1]));
		else if (executionMatch) serverMs.push(Number(executionMatch[1]));
		else if (line.startsWith('size\t')) sizes = line.split('\t').slice(1);
	}
	if (timings.read.length !== reps || timings.update.length !== reps || serverMs.length !== reps) {
		throw new Error(`psql timings incomplete for ${entries} entries: ${JSON.stringify({ ...timings, serverMs })}\n${output.slice(0, 2000)}`);
	}
	return {
		entries,
		textBytes: Number(sizes[0]),
		storedBytes: Number(sizes[1]),
		updateMs: median(timings.update),
		updateServerMs: median(serverMs),
		readMs: median(timings.read),
		reps,
	};
}
