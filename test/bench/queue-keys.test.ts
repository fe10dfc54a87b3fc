/**
 * The queue-keys benchmark's pieces that need no cluster (bench/queueKeys.ts runs the real one):
 * the strings it looks for in n8n's store, how it counts sends and Postgres errors, its options,
 * and how its section of bench/RESULTS.md is written and kept by `npm run bench`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { LoggedRequest } from '../../sandbox';
import { countPostgresErrors, erpExample, parseQueueKeysArgs, redeliveryCauses, sendsPerEvent } from '../../bench/queueKeys';
import { entryHash, KEY_VALUE_FORMATS, keysFound, likeliestFormat, loadFormat } from '../../bench/queueKeysFormat';
import { keepQueueKeysSection, renderQueueKeysSection, SECTION_TITLE, writeQueueKeysSection } from '../../bench/queueKeysReport';
import type { QueueKeysRun } from '../../bench/queueKeysReport';

const [keyAndAccepted, underLock] = KEY_VALUE_FORMATS;

describe('what the benchmark looks for in the store', () => {
	test("n8n's hash of an entry: the MD5 of the string, in base64", () => {
		expect(entryHash('abc')).toBe('kAFQmDzST7DWlj99KOF/cg==');
	});

	test('the package of today stores `<key>` and `<key> [accepted]`: claims and accepted marks are told apart', () => {
		const stored = ['k1', 'k1 [accepted]', 'k2'].map(entryHash);
		expect(keysFound(keyAndAccepted, ['k1', 'k2', 'k3'], stored)).toEqual({ claimed: 2, accepted: 1 });
	});

	test('auto: the format that finds the most keys is chosen', () => {
		const stored = [JSON.stringify(['accepted', 'k1']), JSON.stringify(['claimed', 'k2'])].map(entryHash);
		expect(likeliestFormat(KEY_VALUE_FORMATS, ['k1', 'k2'], stored).name).toBe(underLock.name);
		expect(likeliestFormat(KEY_VALUE_FORMATS, ['k1', 'k2'], ['k1'].map(entryHash)).name).toBe(keyAndAccepted.name);
	});

	test('a format can come from a module; a bad name or module is an error naming --format', () => {
		const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-keys-format-'));
		try {
			const good = path.join(folder, 'format.js');
			fs.writeFileSync(good, "module.exports = { format: { name: 'x', description: 'x', valuesOf: (key) => ({ claimed: 'x:' + key }) } };");
			expect(keysFound(loadFormat(good), ['k'], [entryHash('x:k')])).toEqual({ claimed: 1, accepted: 0 });
			const bad = path.join(folder, 'bad.js');
			fs.writeFileSync(bad, 'module.exports = {};');
			expect(() => loadFormat(bad)).toThrow(/--format: .* exports no KeyValueFormat/);
			expect(() => loadFormat('nope')).toThrow(/--format: unknown "nope"/);
		} finally {
			fs.rmSync(folder, { recursive: true, force: true });
		}
	});
});

describe('counting', () => {
	const example = erpExample();
	const events = [
		{ orderId: 'A1', status: 'shipped', userId: 'u1' },
		{ orderId: 'A2', status: 'shipped', userId: 'u2' },
		{ orderId: 'A3', status: 'shipped', userId: 'u3' },
	];

	test("the ERP example's Idempotency Key and title, filled from an event", () => {
		expect(example.keyOf(events[0])).toBe('A1:shipped:u1');
		expect(example.titleOf(events[0])).toBe('Order A1: shipped');
		const copy = example.copy('queueKeys9', 'burst-9');
		expect(copy.id).toBe('queueKeys9');
		expect(copy.nodes.find((node: { type: string }) => node.type === 'n8n-nodes-base.webhook').parameters.path).toBe('burst-9');
		expect(example.workflow.id).toBe('cpExampleErpEvent');
	});

	test('sends per event: registered sends only (a 401 registers none), matched by title and recipient', () => {
		const send = (title: string, users: string[], notificationId?: string) =>
			({ endpoint: 'POST /push-notification/send', body: { title, target_user_ids: users }, notificationId, status: notificationId ? 202 : 401 }) as unknown as LoggedRequest;
		const entries = [
			send('Order A1: shipped', ['u1'], 'n1'),
			send('Order A1: shipped', ['u1']),
			send('Order A1: shipped', ['u1'], 'n2'),
			send('Order A2: shipped', ['u2'], 'n3'),
			send('Order A2: shipped', ['u3'], 'n4'),
			{ endpoint: 'GET /push-notification/list', body: undefined } as unknown as LoggedRequest,
		];
		expect(sendsPerEvent(entries, events, example.titleOf)).toEqual([2, 1, 0]);
	});

	test('why redelivered events were sent again: store state at the start, same or other worker, sent or not', () => {
		const keys = ['k1', 'k2', 'k3', 'k4'];
		const held = new Set(['k2', 'k3', 'k3 [accepted]', 'k4', 'k4 [accepted]'].map(entryHash));
		const causes = redeliveryCauses(keyAndAccepted, keys, held, ['w1', 'w1', 'w2', undefined], ['w2', 'w1', 'w2', 'w1'], [1, 1, 0, 0], [1, 1, 1, 0]);
		expect(causes).toEqual({
			'claim lost; other worker; sent again': 1,
			'accepted mark lost; same worker; sent again': 1,
			'held; same worker; not sent': 1,
		});
	});

	test('the same for the claim under the lock: a claim still pending is not accepted, a claim without its pending mark is', () => {
		const keys = ['k1', 'k2', 'k3'];
		const [k2, k3] = [underLock.valuesOf('k2'), underLock.valuesOf('k3')];
		const held = new Set([k2.claimed, k2.pendingUntilAccepted!, k3.claimed].map(entryHash));
		const causes = redeliveryCauses(underLock, keys, held, ['w1', 'w1', 'w1'], ['w2', 'w1', 'w1'], [1, 0, 0], [1, 1, 1]);
		expect(causes).toEqual({
			'claim lost; other worker; sent again': 1,
			'accepted mark lost; same worker; not sent': 1,
			'held; same worker; not sent': 1,
		});
	});

	test("Postgres's log: violations of processed_data's primary key, the other errors by message", () => {
		const log = [
			'2026-01-01 10:00:00.000 UTC [1] ERROR:  duplicate key value violates unique constraint "PK_processed"',
			'2026-01-01 10:00:00.000 UTC [1] DETAIL:  Key ("workflowId", context)=(w, n:x) already exists.',
			'2026-01-01 10:00:00.000 UTC [1] STATEMENT:  INSERT INTO "processed_data" ...',
			'2026-01-01 10:00:01.000 UTC [2] ERROR:  duplicate key value violates unique constraint "PK_other"',
			'2026-01-01 10:00:02.000 UTC [1] ERROR:  duplicate key value violates unique constraint "PK_processed"',
			'2026-01-01 10:00:03.000 UTC [3] LOG:  checkpoint starting',
		].join('\n');
		expect(countPostgresErrors(log, 'PK_processed')).toEqual({
			duplicateKey: 2,
			other: { 'duplicate key value violates unique constraint "PK_other"': 1 },
		});
	});
});

describe('options', () => {
	test('defaults: 2 workers, once, the four cases, 300 events, 30 rounds', () => {
		const options = parseQueueKeysArgs([]);
		expect(options).toMatchObject({ workers: [2], runs: 1, events: 300, rounds: 30, format: 'auto', build: true, wait: true });
		expect(options.cases).toEqual(['burst-20', 'burst-50', 'pair-1ms', 'pair-1000ms']);
		expect(parseQueueKeysArgs(['--workers', '2,4', '--cases=burst-20', '--row-sizes', '0']).rowSizes).toEqual([]);
	});

	test('bad options are errors naming the option', () => {
		expect(() => parseQueueKeysArgs(['--cases', 'burst-x'])).toThrow(/--cases: unknown case "burst-x"/);
		expect(() => parseQueueKeysArgs(['--workers', '0'])).toThrow(/--workers takes whole numbers >= 1/);
		expect(() => parseQueueKeysArgs(['--events'])).toThrow(/--events needs a value/);
		expect(() => parseQueueKeysArgs(['--format', 'nope'])).toThrow(/--format: unknown/);
		expect(() => parseQueueKeysArgs(['--what'])).toThrow(/unknown option --what/);
	});
});

describe('the section in bench/RESULTS.md', () => {
	const section = (figure: string) => `${SECTION_TITLE}\n\nfigures ${figure}\n\n### Errors\n\n- none\n`;
	const benchResults = '# Benchmark results\n\ntable\n\n## How each figure was measured\n\ntext\n';

	test('written into a file: appended once, then replaced in place, other sections untouched', () => {
		const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-keys-results-'));
		try {
			const file = path.join(folder, 'RESULTS.md');
			fs.writeFileSync(file, benchResults);
			writeQueueKeysSection(file, section('one'));
			writeQueueKeysSection(file, section('two'));
			const written = fs.readFileSync(file, 'utf8');
			expect(written).toBe(`${benchResults}\n${section('two')}`);
			fs.writeFileSync(file, `${written}\n## Later\n\nmore\n`);
			writeQueueKeysSection(file, section('three'));
			expect(fs.readFileSync(file, 'utf8')).toBe(`${benchResults}\n${section('three')}\n## Later\n\nmore\n`);
		} finally {
			fs.rmSync(folder, { recursive: true, force: true });
		}
	});

	test("`npm run bench` rewriting RESULTS.md keeps the section (and nothing else of the old file)", () => {
		const previous = `# Old results\n\nold table\n\n${section('kept')}\n## Something after\n\nx\n`;
		const next = keepQueueKeysSection(previous, benchResults);
		expect(next).toBe(`${benchResults}\n${section('kept')}`);
		expect(keepQueueKeysSection('', benchResults)).toBe(benchResults);
	});

	test('rendered from the saved runs: one row per run, the summary gives the range of the runs\' redelivery sends', () => {
		const runs = fs
			.readFileSync(path.join(__dirname, '..', '..', 'bench', 'queue-keys-before.jsonl'), 'utf8')
			.split('\n')
			.filter(Boolean)
			.map((line) => JSON.parse(line) as QueueKeysRun);
		const markdown = renderQueueKeysSection(runs, ['bench/queue-keys-before.jsonl']);
		expect(markdown.startsWith(`${SECTION_TITLE}\n`)).toBe(true);
		for (const [index, run] of runs.entries()) expect(markdown).toContain(`| ${index + 1}${run.label ? ` (${run.label})` : ''} | ${run.date.slice(0, 16).replace('T', ' ')} |`);
		const sentAgain = runs
			.filter((run) => run.workers === 2)
			.flatMap((run) => run.cases.flatMap((result) => (result.kind === 'burst' && result.atOnce === 20 ? [result.again.eventsSent] : [])));
		const range = Math.min(...sentAgain) === Math.max(...sentAgain) ? `${sentAgain[0]}` : `${Math.min(...sentAgain)}-${Math.max(...sentAgain)}`;
		expect(markdown).toMatch(new RegExp(`main \\+ 2 workers, burst-20\\*\\* \\(${sentAgain.length} runs\\).*\\*\\*sent again ${range}\\*\\*`));
	});
});
