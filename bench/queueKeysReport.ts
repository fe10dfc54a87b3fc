/**
 * The queue-keys benchmark's figures (bench/queueKeys.ts): their shape as saved, one JSON line per
 * run, and the "Idempotency Keys in queue mode" section of bench/RESULTS.md rendered from them.
 * `npm run bench` rewrites RESULTS.md from its own runs and keeps this section (keepQueueKeysSection).
 */
import * as fs from 'node:fs';

import type { RowCost, StoreRow } from './queueKeysStore';

export const SECTION_TITLE = '## Idempotency Keys in queue mode';

export interface StoreSnapshot {
	/** The key format used to read the hashes (bench/queueKeysFormat.ts). */
	format: string;
	rows: StoreRow[];
	/** Events of the case whose claim is in the store. */
	keysClaimed: number;
	/** Events of the case whose accepted mark is in the store (0 when the format has none). */
	keysAccepted: number;
	hasAcceptedMark: boolean;
	/** The writes to the workflow's rows during the pass (logged by a trigger). */
	writes: { inserts: number; updates: number; deletes: number; claimsDropped: number; acceptedDropped: number };
	lastWriteId: number;
}

export interface PostgresErrors {
	/** Violations of processed_data's primary key (two first INSERTs of the row at once); -1 when the log was not found. */
	duplicateKey: number;
	other: Record<string, number>;
}

export interface PassResult {
	posted: number;
	postAnswers: Record<string, number>;
	postSeconds: number;
	/** From the first POST until every execution had ended. */
	doneSeconds: number;
	executions: Record<string, number>;
	/** "status: message" of the executions that did not succeed. */
	failures: Record<string, number>;
	perWorker: Record<string, number>;
	eventsSent: number;
	eventsSentTwice: number;
	/** Events without any send in this pass and the ones before. */
	eventsNeverSentSoFar: number;
	eventsSentSoFar: number;
	sendCalls: Record<string, number>;
	listLookups: number;
	refreshes: number;
	postgresErrors: PostgresErrors;
	store: StoreSnapshot;
	/**
	 * A redelivery's events by "<store state when the pass began>; <same worker as the earlier send,
	 * or other worker>; <sent again, or not sent>", e.g. "claim lost; other worker; sent again".
	 */
	redeliveryCauses?: Record<string, number>;
	loadBefore: number;
	loadAfter: number;
}

export interface PairRound {
	/** Measured time between starting the two POSTs. */
	gapMs: number;
	/** The workers that ran the two executions. */
	workers: string[];
	statuses: string[];
	/** Sends the sandbox registered for the event. */
	sends: number;
}

export type CaseResult =
	| { name: string; kind: 'burst'; atOnce: number; events: number; first: PassResult; again: PassResult }
	| {
			name: string;
			kind: 'pair';
			gapMs: number;
			events: number;
			rounds: PairRound[];
			seconds: number;
			failures: Record<string, number>;
			postgresErrors: PostgresErrors;
			store: StoreSnapshot;
			loadBefore: number;
			loadAfter: number;
	  };

export interface QueueKeysRun {
	label?: string;
	/** The command that made the run. */
	command: string;
	date: string;
	workers: number;
	concurrency: number;
	runIndex: number;
	checkout: { commit: string; uncommitted: string[] };
	packageVersion: string;
	tarball: string;
	node: string;
	cpus: number;
	otherN8nAtStart: number;
	loadAtStart: number;
	loadAtEnd: number;
	clusterStartSeconds: number;
	totalSeconds: number;
	tokenLifeSeconds: number;
	retry: { retryOnFail: boolean; maxTries?: number; waitBetweenTries?: number };
	rss: Record<string, number>;
	cases: CaseResult[];
	rowCosts: RowCost[];
}

const table = (header: string[], rows: string[][]) =>
	[`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

const failedCount = (executions: Record<string, number>) =>
	Object.entries(executions)
		.filter(([status]) => status !== 'success')
		.reduce((sum, [, count]) => sum + count, 0);

const bytes = (count: number) => (count >= 1024 * 1024 ? `${(count / 1024 / 1024).toFixed(2)} MB` : count >= 1024 ? `${(count / 1024).toFixed(1)} KB` : `${count} B`);

/** The node-scope (or entries) rows' size: "600 entries, 16.2 KB". */
function rowsSummary(store: StoreSnapshot): string {
	if (store.rows.length === 0) return 'no row';
	return store.rows
		.map((row) => `${row.context === '' ? 'workflow row' : 'node row'}: ${row.entries !== undefined ? `${row.entries} entries, ` : `${row.mode}, `}${bytes(row.textBytes)}`)
		.join('; ');
}

const keysHeld = (store: StoreSnapshot, sent: number) =>
	`${store.keysClaimed}${store.hasAcceptedMark ? ` / ${store.keysAccepted}` : ''} of ${sent}`;

const dropped = (store: StoreSnapshot) =>
	`${store.writes.claimsDropped}${store.hasAcceptedMark ? ` / ${store.writes.acceptedDropped}` : ''}`;

const duplicateKeys = (errors: PostgresErrors) => (errors.duplicateKey < 0 ? 'n/a' : String(errors.duplicateKey));

const runName = (run: QueueKeysRun, index: number) => `${index + 1}${run.label ? ` (${run.label})` : ''}`;

/** Redelivered events (redeliveryCauses) in store state `state`, and on `where` / with `outcome` when given. */
function countCauses(counts: Record<string, number>, state: string, where?: string, outcome?: string): number {
	return Object.entries(counts)
		.filter(([cause]) => {
			const [causeState, causeWhere, causeOutcome] = cause.split('; ');
			return causeState === state && (!where || causeWhere === where) && (!outcome || causeOutcome === outcome);
		})
		.reduce((sum, [, events]) => sum + events, 0);
}

/** Over the runs that tell why: redelivered events sent again, by store state and worker. */
function causesSummary(causes: Array<Record<string, number> | undefined>): string {
	const known = causes.filter((counts): counts is Record<string, number> => counts !== undefined);
	if (known.length === 0) return '';
	const count = (state: string, where?: string, outcome?: string) => known.reduce((sum, counts) => sum + countCauses(counts, state, where, outcome), 0);
	const sentOf = (state: string, where?: string) => `${count(state, where, 'sent again')} of ${count(state, where)}`;
	return (
		` Why (${known.length} run${known.length > 1 ? 's' : ''}): claim lost: sent again ${sentOf('claim lost')}; ` +
		`claim held but accepted mark lost: sent again ${sentOf('accepted mark lost', 'same worker')} on the worker of the first send, ${sentOf('accepted mark lost', 'other worker')} on another; ` +
		`both held: sent again ${sentOf('held')}.`
	);
}

/** Headline figures per label, worker count and case, over its runs (a range when the runs differ). */
function summaryLines(runs: QueueKeysRun[]): string[] {
	const range = (values: number[]) => {
		const [min, max] = [Math.min(...values), Math.max(...values)];
		return min === max ? String(min) : `${min}-${max}`;
	};
	const groups = new Map<string, { run: QueueKeysRun; results: CaseResult[] }>();
	for (const run of runs) {
		for (const result of run.cases) {
			const key = `${run.label ?? ''}\u0000${run.workers}\u0000${result.name}`;
			if (!groups.has(key)) groups.set(key, { run, results: [] });
			groups.get(key)!.results.push(result);
		}
	}
	const sizes = [...new Set(runs.flatMap((run) => run.rowCosts.map((cost) => cost.entries)))].sort((a, b) => a - b);
	const costs = sizes.map((entries) => {
		const of = runs.flatMap((run) => run.rowCosts.filter((cost) => cost.entries === entries));
		const ms = (values: number[]) => `${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)} ms`;
		return `${entries.toLocaleString('en-US')} entries (${bytes(of[0].textBytes)}) ${ms(of.map((cost) => cost.updateMs))} (server ${ms(of.map((cost) => cost.updateServerMs))})`;
	});
	const costLine = costs.length ? [`- **One whole-row UPDATE of the store row** (${runs.filter((run) => run.rowCosts.length).length} runs, psql): ${costs.join('; ')}.`] : [];
	return [...groups.values()].map(({ run, results }) => {
		const head = `- **${run.label ? `${run.label}, ` : ''}main + ${run.workers} workers, ${results[0].name}** (${results.length} run${results.length > 1 ? 's' : ''})`;
		const bursts = results.flatMap((result) => (result.kind === 'burst' ? [result] : []));
		if (bursts.length > 0) {
			const figure = (pick: (result: (typeof bursts)[number]) => number) => range(bursts.map(pick));
			return (
				`${head}, ${bursts[0].events} events ${bursts[0].atOnce} at a time: first pass: failed executions ${figure((result) => failedCount(result.first.executions))}, ` +
				`never sent ${figure((result) => result.first.eventsNeverSentSoFar)}, sent twice ${figure((result) => result.first.eventsSentTwice)}, ` +
				`duplicate-key errors ${figure((result) => result.first.postgresErrors.duplicateKey)}, keys held at its end ${figure((result) => result.first.store.keysClaimed)}${bursts[0].first.store.hasAcceptedMark ? ` (accepted ${figure((result) => result.first.store.keysAccepted)})` : ''} of ${bursts[0].events}; redelivery of the same events: **sent again ${figure((result) => result.again.eventsSent)}** ` +
				`(each a user notified twice), failed executions ${figure((result) => failedCount(result.again.executions))}.` +
				causesSummary(bursts.map((result) => result.again.redeliveryCauses))
			);
		}
		const rounds = results.flatMap((result) => (result.kind === 'pair' ? result.rounds : []));
		const twice = rounds.filter((round) => round.sends > 1).length;
		return (
			`${head}: **notified twice in ${twice} of ${rounds.length} rounds** ` +
			`(per run ${results.map((result) => (result.kind === 'pair' ? result.rounds.filter((round) => round.sends > 1).length : 0)).join(', ')}); ` +
			`the two copies ran on two different workers in ${rounds.filter((round) => new Set(round.workers).size === 2).length} of ${rounds.length}; ` +
			`not notified in ${rounds.filter((round) => round.sends === 0).length}.`
		);
	}).concat(costLine);
}

/** The whole section, from its title to the end. */
export function renderQueueKeysSection(runs: QueueKeysRun[], sources: string[] = ['FILES']): string {
	const lines: string[] = [SECTION_TITLE, ''];
	lines.push(
		`Written by \`npm run bench -- queue-keys --report ${sources.join(',')} --write-results\` (bench/queueKeys.ts) from the runs saved there (raw figures, one JSON line per run; add the files of later runs to render them alongside); do not edit by hand.`,
		'Each run: the package of the checkout built and packed, a fresh queue-mode cluster (scripts/queueMode.ts: Postgres 15 with fsync off, Redis, n8n 2.41.1 main + N workers with `--concurrency`), the sandbox API in the same process (tokens of ' +
			`${runs[0]?.tokenLifeSeconds ?? 20} s, each refresh revokes the previous token, deliveries after 0.5 s), and one copy of the ERP webhook example per case (Idempotency Key from the event; Retry On Fail ` +
			`${runs[0]?.retry.retryOnFail ? `on, ${runs[0].retry.maxTries} tries, ${runs[0].retry.waitBetweenTries} ms apart` : 'off'}), so each case starts on an empty store. A trigger on processed_data logs every write to it (what each write dropped), which adds a little to each write. Everything on 127.0.0.1, one machine.`,
		'',
		'Made by:',
		'',
		...[...new Set(runs.map((run) => run.command))].map((command) => `    ${command}`),
		'',
		'In short:',
		'',
		...summaryLines(runs),
		'',
	);
	lines.push(
		table(
			['run', 'date', 'code', 'workers', 'cluster up', 'whole run', 'load (1 min) at start / end', 'other n8n processes', 'RSS MB at end'],
			runs.map((run, index) => [
				runName(run, index),
				run.date.slice(0, 16).replace('T', ' '),
				`${run.checkout.commit}${run.checkout.uncommitted.length ? ` + changes in ${run.checkout.uncommitted.join(', ')}` : ''}`,
				`main + ${run.workers} (concurrency ${run.concurrency})`,
				`${run.clusterStartSeconds} s`,
				`${run.totalSeconds} s`,
				`${run.loadAtStart} / ${run.loadAtEnd} (${run.cpus} cores)`,
				String(run.otherN8nAtStart),
				Object.entries(run.rss)
					.map(([name, mb]) => `${name.replace('worker-', 'w')} ${mb}`)
					.join(', '),
			]),
		),
		'',
	);

	const bursts = runs.flatMap((run, index) => run.cases.flatMap((result) => (result.kind === 'burst' ? [{ run, index, result }] : [])));
	if (bursts.length > 0) {
		lines.push(
			'### Distinct events, K at a time, then every event delivered again',
			'',
			'N distinct events posted K at a time to the webhook ("first" pass), then the same N events (same ids) posted again, K at a time ("again"). "Sent" = events with a send in that pass: in the second pass each one is a user notified twice. "Never sent" counts both passes so far. "Duplicate-key errors" are the failed first INSERTs of the store row (Postgres\'s log: `duplicate key value violates unique constraint` on processed_data), each one a failed try of the node, retried by Retry On Fail when its execution still succeeded; under the store lock (runs labelled "store lock") they are the lock\'s own creation races, which the package expects and catches (it tries again), so no try fails. "Keys held" = events whose claim is in the store' +
				(bursts[0].result.first.store.hasAcceptedMark ? ' / whose accepted mark is' : '') +
				', of the events sent so far. "Dropped" = events whose claim' +
				(bursts[0].result.first.store.hasAcceptedMark ? ' / accepted mark' : '') +
				' some write removed from the row during the pass (a write of a stale copy of the row: a lost update. The package puts a claim back when it confirms the send, so a dropped claim may be held again at the end; it also removes an accepted mark it has just recorded itself while it checks a claim found unconfirmed). Under the store lock nothing is lost: a confirmation removes the event\'s claim and its working entries on purpose, and a claim test removes what it recorded to test, so the claims "dropped" there are those; the accepted marks are the ones that count.',
			'',
			table(
				['run', 'workers', 'K', 'N', 'pass', 'executed in', 'failed executions', 'duplicate-key errors', 'sent', 'sent twice in the pass', 'never sent', 'keys held', 'dropped', 'store writes (insert / update)', 'list lookups', 'load before / after', 'store row after'],
				bursts.flatMap(({ run, index, result }) =>
					(
						[
							['first', result.first],
							['again', result.again],
						] as const
					).map(([name, pass]) => [
						runName(run, index),
						String(run.workers),
						String(result.atOnce),
						String(result.events),
						name,
						`${pass.doneSeconds} s`,
						String(failedCount(pass.executions)),
						duplicateKeys(pass.postgresErrors),
						String(pass.eventsSent),
						String(pass.eventsSentTwice),
						String(pass.eventsNeverSentSoFar),
						keysHeld(pass.store, pass.eventsSentSoFar),
						dropped(pass.store),
						`${pass.store.writes.inserts} / ${pass.store.writes.updates}`,
						String(pass.listLookups),
						`${pass.loadBefore} / ${pass.loadAfter}`,
						rowsSummary(pass.store),
					]),
				),
			),
			'',
		);
	}

	const causes = bursts.filter(({ result }) => result.again.redeliveryCauses);
	if (causes.length > 0) {
		const states = ['claim lost', 'accepted mark lost', 'held'];
		const cell = (counts: Record<string, number>, state: string) => {
			const of = (where?: string, outcome?: string) => countCauses(counts, state, where, outcome);
			const events = of();
			if (events === 0) return '0';
			return `${events}: ${of(undefined, 'sent again')} sent again (same worker ${of('same worker', 'sent again')} of ${of('same worker')}, other worker ${of('other worker', 'sent again')} of ${of('other worker')})`;
		};
		lines.push(
			'Why redelivered events were sent again: each event by its state in the store when the redelivery began (its claim lost; its claim held but its accepted mark lost; both held), and by whether the redelivery ran on the worker that made the first send (the executions\' data tell which event each one ran).',
			'',
			table(
				['run', 'workers', 'K', ...states],
				causes.map(({ run, index, result }) => [runName(run, index), String(run.workers), String(result.atOnce), ...states.map((state) => cell(result.again.redeliveryCauses!, state))]),
			),
			'',
		);
	}

	const pairs = runs.flatMap((run, index) => run.cases.flatMap((result) => (result.kind === 'pair' ? [{ run, index, result }] : [])));
	if (pairs.length > 0) {
		lines.push(
			'### The same event twice at nearly the same moment',
			'',
			'Each round: a new event POSTed twice, G ms apart (two concurrent requests; the gap is measured between starting them); the round ends when both executions have. Which worker ran each execution is read off the workers\' logs. Keys held and dropped as above, over the whole case.',
			'',
			table(
				['run', 'workers', 'G', 'gap measured (median, max)', 'rounds', 'ran on two workers', 'notified twice', '... of them on two workers', 'not notified', 'failed executions', 'duplicate-key errors', 'keys held', 'dropped', 'took'],
				pairs.map(({ run, index, result }) => {
					const gaps = result.rounds.map((round) => round.gapMs).sort((a, b) => a - b);
					const twoWorkers = (round: PairRound) => new Set(round.workers).size === 2;
					const sent = result.rounds.filter((round) => round.sends > 0).length;
					return [
						runName(run, index),
						String(run.workers),
						`${result.gapMs} ms`,
						`${gaps[Math.floor(gaps.length / 2)]} / ${gaps[gaps.length - 1]} ms`,
						String(result.rounds.length),
						String(result.rounds.filter(twoWorkers).length),
						String(result.rounds.filter((round) => round.sends > 1).length),
						String(result.rounds.filter((round) => round.sends > 1 && twoWorkers(round)).length),
						String(result.rounds.filter((round) => round.sends === 0).length),
						String(result.rounds.flatMap((round) => round.statuses).filter((status) => status !== 'success').length),
						duplicateKeys(result.postgresErrors),
						keysHeld(result.store, sent),
						dropped(result.store),
						`${result.seconds} s`,
					];
				}),
			),
			'',
		);
	}

	const failures = runs.flatMap((run, index) =>
		run.cases.flatMap((result) => {
			const passes = result.kind === 'burst' ? [['first pass', result.first.failures] as const, ['redelivery', result.again.failures] as const] : [['', result.failures] as const];
			return passes.flatMap(([pass, messages]) =>
				Object.entries(messages).map(([message, count]) => `- run ${runName(run, index)}, ${result.name}${pass ? ` ${pass}` : ''}: ${count} × \`${message.replace(/`/g, "'")}\``),
			);
		}),
	);
	const otherErrors = runs.flatMap((run, index) =>
		run.cases.flatMap((result) => {
			const errors = result.kind === 'burst' ? [result.first.postgresErrors, result.again.postgresErrors] : [result.postgresErrors];
			const counts = new Map<string, number>();
			for (const [message, count] of errors.flatMap((error) => Object.entries(error.other))) counts.set(message, (counts.get(message) ?? 0) + count);
			return [...counts].map(([message, count]) => `- run ${runName(run, index)}, ${result.name}: ${count} × \`${message.replace(/`/g, "'")}\``);
		}),
	);
	lines.push('### Errors', '', 'Failed executions, by their error:', '', ...(failures.length ? failures : ['- none']), '');
	lines.push('Other errors in Postgres\'s log:', '', ...(otherErrors.length ? otherErrors : ['- none']), '');

	const costs = runs.flatMap((run, index) => run.rowCosts.map((cost) => ({ run, index, cost })));
	if (costs.length > 0) {
		lines.push(
			'### What one write of the store row costs',
			'',
			"n8n's store keeps all of a workflow's keys in one row and every record or removal reads the whole row and writes it whole back (the package records a claim, then the confirmation: two such writes per send; the default Keys to Keep of 10,000 holds 20,000 entries). Timed on a scratch copy of processed_data in the same Postgres, right after the cases: the row (entries as n8n writes them: 24-character hashes) read whole, and UPDATEd whole with the window moved by one entry; the median of " +
				`${costs[0].cost.reps}. "psql" is the time psql waited for the answer (the value sent as a literal); "server" is EXPLAIN ANALYZE's execution time.`,
			'',
			table(
				['run', 'entries', 'row bytes (stored)', 'UPDATE, psql', 'UPDATE, server', 'read, psql'],
				costs.map(({ run, index, cost }) => [
					runName(run, index),
					cost.entries.toLocaleString('en-US'),
					`${bytes(cost.textBytes)} (${bytes(cost.storedBytes)})`,
					`${cost.updateMs} ms`,
					`${cost.updateServerMs} ms`,
					`${cost.readMs} ms`,
				]),
			),
			'',
		);
	}
	return `${lines.join('\n').trimEnd()}\n`;
}

/** `markdown` with the section of `previous` (if it has one) appended: what `npm run bench` writes keeps it. */
export function keepQueueKeysSection(previous: string, markdown: string): string {
	const start = previous.indexOf(`\n${SECTION_TITLE}\n`);
	if (start < 0 || markdown.includes(`\n${SECTION_TITLE}\n`)) return markdown;
	const rest = previous.slice(start + 1);
	const next = rest.slice(SECTION_TITLE.length).search(/\n## /);
	const section = next < 0 ? rest : rest.slice(0, SECTION_TITLE.length + next + 1);
	return `${markdown.trimEnd()}\n\n${section.trimEnd()}\n`;
}

/** Puts the section into `file` (replacing the one there, or at the end). */
export function writeQueueKeysSection(file: string, section: string): void {
	const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
	const start = current.indexOf(`\n${SECTION_TITLE}\n`);
	if (start < 0) {
		fs.writeFileSync(file, `${current.trimEnd()}\n\n${section}`);
		return;
	}
	const after = current.slice(start + 1 + SECTION_TITLE.length).search(/\n## /);
	const tail = after < 0 ? '' : current.slice(start + 1 + SECTION_TITLE.length + after + 1);
	fs.writeFileSync(file, `${current.slice(0, start + 1)}${section}${tail ? `\n${tail}` : ''}`);
}
