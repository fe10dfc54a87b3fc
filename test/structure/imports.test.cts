/**
 * The shape of the shipped code's imports, read with the TypeScript compiler from the files
 * themselves (the import graph is the thing checked): no import circle in `nodes/` and
 * `credentials/`, the credential imports nothing from `nodes/`, each folder imports only from the
 * folders below it (the table), and shipped code imports no package but n8n-workflow, luxon, zod
 * and crypto.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as ts from 'typescript';

import { REPO_ROOT } from '../harness/index.cts';

const NODE_DIR = 'nodes/CompanionPush';

/**
 * Which parts each part may import: the parts below it. A part is a folder of `nodes/CompanionPush`
 * (`common`, `input`, ...), one of its top files (`nodeErrors`, the node files), or `credentials`.
 */
const MAY_IMPORT: Record<string, string[]> = {
	credentials: [],
	common: [],
	transport: ['credentials', 'common'],
	nodeErrors: ['transport'],
	input: ['common'],
	report: ['common'],
	store: ['common'],
	neverTwice: ['common', 'transport', 'nodeErrors', 'store'],
	actions: ['common', 'transport', 'nodeErrors', 'input', 'report', 'neverTwice', 'store'],
	methods: ['transport'],
	trigger: ['common', 'transport', 'nodeErrors', 'report'],
	'CompanionPush.node': ['actions', 'methods'],
	'CompanionPushTrigger.node': ['trigger', 'report'],
};

const SHIPPED_PACKAGES = new Set(['n8n-workflow', 'luxon', 'zod', 'crypto']);

interface Edge {
	from: string;
	to: string;
}

function shippedFiles(): string[] {
	const files: string[] = [];
	const walk = (dir: string) => {
		for (const entry of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
			const relative = path.posix.join(dir, entry.name);
			if (entry.isDirectory()) walk(relative);
			else if (relative.endsWith('.ts')) files.push(relative);
		}
	};
	walk('nodes');
	walk('credentials');
	return files.sort();
}

/** Every import and re-export of `file` (type-only ones too): files of the repository, or packages. */
function importsOf(file: string): { files: string[]; packages: string[] } {
	const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
	const { importedFiles } = ts.preProcessFile(text, true, true);
	const files: string[] = [];
	const packages: string[] = [];
	for (const { fileName } of importedFiles) {
		if (!fileName.startsWith('.')) {
			packages.push(fileName);
			continue;
		}
		const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName));
		const target = [`${base}.ts`, `${base}/index.ts`].find((candidate) =>
			fs.existsSync(path.join(REPO_ROOT, candidate)),
		);
		files.push(target ?? `${base} (not found)`);
	}
	return { files, packages };
}

function partOf(file: string): string {
	if (file.startsWith('credentials/')) return 'credentials';
	const inNode = path.posix.relative(NODE_DIR, file);
	return inNode.includes('/') ? inNode.split('/')[0] : inNode.replace(/\.ts$/, '');
}

/** The import circles of `graph`: its strongly connected components of more than one file (or a
 * file that imports itself), by Tarjan's algorithm. */
function circlesOf(graph: Map<string, string[]>): string[][] {
	let counter = 0;
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const onStack = new Set<string>();
	const circles: string[][] = [];
	const visit = (file: string) => {
		index.set(file, counter);
		low.set(file, counter++);
		stack.push(file);
		onStack.add(file);
		for (const next of graph.get(file) ?? []) {
			if (!index.has(next)) {
				visit(next);
				low.set(file, Math.min(low.get(file)!, low.get(next)!));
			} else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
		}
		if (low.get(file) !== index.get(file)) return;
		const component: string[] = [];
		let member: string;
		do {
			member = stack.pop()!;
			onStack.delete(member);
			component.push(member);
		} while (member !== file);
		if (component.length > 1 || (graph.get(file) ?? []).includes(file))
			circles.push(component.sort());
	};
	for (const file of graph.keys()) if (!index.has(file)) visit(file);
	return circles;
}

describe('the imports of the shipped code', () => {
	const files = shippedFiles();
	const graph = new Map<string, string[]>();
	const packages = new Map<string, string[]>();
	for (const file of files) {
		const imports = importsOf(file);
		graph.set(file, imports.files);
		packages.set(file, imports.packages);
	}
	const edges: Edge[] = [...graph].flatMap(([from, targets]) =>
		targets.map((to) => ({ from, to })),
	);

	test('the files are found, and every relative import resolves to one of them', () => {
		expect(files).toContain(`${NODE_DIR}/CompanionPush.node.ts`);
		expect(files).toContain('credentials/CompanionPushApi.credentials.ts');
		expect(edges.filter(({ to }) => !files.includes(to))).toEqual([]);
	});

	test('no import circle', () => {
		expect(circlesOf(graph)).toEqual([]);
	});

	test('the credential imports nothing from nodes/', () => {
		expect(
			edges.filter(({ from, to }) => from.startsWith('credentials/') && to.startsWith('nodes/')),
		).toEqual([]);
	});

	test('each part imports only the parts below it', () => {
		// Every part has its row: a new folder is placed in the table, not let through.
		expect(Object.keys(MAY_IMPORT)).toEqual(
			expect.arrayContaining([...new Set(files.map(partOf))]),
		);
		const upward = edges
			.filter(({ from, to }) => partOf(from) !== partOf(to))
			.filter(({ from, to }) => !MAY_IMPORT[partOf(from)].includes(partOf(to)))
			.map(({ from, to }) => `${from} -> ${to}`);
		expect(upward).toEqual([]);
	});

	test('shipped code imports only n8n-workflow, luxon, zod and crypto', () => {
		const others = [...packages].flatMap(([file, names]) =>
			names.filter((name) => !SHIPPED_PACKAGES.has(name)).map((name) => `${file}: ${name}`),
		);
		expect(others).toEqual([]);
	});

	test('the check sees a circle, and a file that imports itself', () => {
		const circle = new Map([
			['a.ts', ['b.ts']],
			['b.ts', ['c.ts']],
			['c.ts', ['a.ts']],
			['d.ts', ['a.ts']],
		]);
		expect(circlesOf(circle)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
		expect(circlesOf(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts']]);
		expect(
			circlesOf(
				new Map([
					['a.ts', ['b.ts']],
					['b.ts', []],
				]),
			),
		).toEqual([]);
	});
});
