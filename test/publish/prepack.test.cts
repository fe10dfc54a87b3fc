/**
 * The check before packing (scripts/checkDist.js, the `prepack` script) on a small fixture package
 * whose dist/ each test shapes by hand: it accepts exactly a complete and fresh build and names
 * every other problem. test/publish/package.test.cts runs it through `npm pack` on this package.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkDist } = require('../../scripts/checkDist') as {
	checkDist: (root: string) => string[];
};

const SOURCES: Record<string, string> = {
	'package.json': JSON.stringify({
		name: 'n8n-nodes-fixture',
		n8n: {
			nodes: ['dist/nodes/Thing/Thing.node.js'],
			credentials: ['dist/credentials/ThingApi.credentials.js'],
		},
	}),
	'tsconfig.build.json': JSON.stringify({ include: ['credentials/**/*.ts', 'nodes/**/*.ts'] }),
	'nodes/Thing/Thing.node.ts': 'export class Thing {}',
	'nodes/Thing/helpers/words.ts': 'export const words = 1;',
	'nodes/Thing/Thing.node.json': '{ "node": "n8n-nodes-fixture.thing" }',
	'nodes/Thing/types.d.ts': 'export type T = 1;',
	'credentials/ThingApi.credentials.ts': 'export class ThingApi {}',
	'icons/thing.svg': '<svg/>',
	'icons/thing.dark.svg': '<svg class="dark"/>',
	'icons/notes.txt': 'not an asset',
};

/** What a build makes of SOURCES: .ts compiled (content does not matter here), assets copied. */
const BUILD: Record<string, string> = {
	'dist/nodes/Thing/Thing.node.js': 'compiled',
	'dist/nodes/Thing/helpers/words.js': 'compiled',
	'dist/nodes/Thing/Thing.node.json': SOURCES['nodes/Thing/Thing.node.json'],
	'dist/credentials/ThingApi.credentials.js': 'compiled',
	'dist/icons/thing.svg': SOURCES['icons/thing.svg'],
	'dist/icons/thing.dark.svg': SOURCES['icons/thing.dark.svg'],
};

describe('checkDist: dist/ must be a fresh build of the sources', () => {
	let root: string;
	const write = (files: Record<string, string>) => {
		for (const [file, content] of Object.entries(files)) {
			fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
			fs.writeFileSync(path.join(root, file), content);
		}
	};
	/** Sets a file's modification time `seconds` from now. */
	const age = (file: string, seconds: number) => {
		const time = new Date(Date.now() + seconds * 1000);
		fs.utimesSync(path.join(root, file), time, time);
	};

	beforeEach(() => {
		root = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-checkdist-'));
		write(SOURCES);
		for (const source of Object.keys(SOURCES)) age(source, -60);
		write(BUILD);
	});
	afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

	test('a complete, fresh build passes (declaration files and non-asset files need nothing in dist/)', () => {
		expect(checkDist(root)).toEqual([]);
	});

	test('no dist/ at all', () => {
		fs.rmSync(path.join(root, 'dist'), { recursive: true });
		expect(checkDist(root)).toEqual(['dist/ does not exist']);
	});

	test('a compiled file missing, with the n8n entry it leaves unbuilt', () => {
		fs.rmSync(path.join(root, 'dist/nodes/Thing/Thing.node.js'));
		fs.rmSync(path.join(root, 'dist/nodes/Thing/helpers/words.js'));
		expect(checkDist(root).sort()).toEqual([
			'dist/nodes/Thing/Thing.node.js is missing (from nodes/Thing/Thing.node.ts)',
			"dist/nodes/Thing/Thing.node.js, listed in package.json's n8n section, is not built",
			'dist/nodes/Thing/helpers/words.js is missing (from nodes/Thing/helpers/words.ts)',
		]);
	});

	test('a source changed after the build', () => {
		age('nodes/Thing/helpers/words.ts', 60);
		expect(checkDist(root)).toEqual([
			'dist/nodes/Thing/helpers/words.js is older than nodes/Thing/helpers/words.ts',
		]);
	});

	test('an asset or codex file changed after the build, and a missing asset', () => {
		write({
			'icons/thing.dark.svg': '<svg class="darker"/>',
			'nodes/Thing/Thing.node.json': '{ "node": "n8n-nodes-fixture.thing", "alias": ["Thing"] }',
		});
		fs.rmSync(path.join(root, 'dist/icons/thing.svg'));
		expect(checkDist(root).sort()).toEqual([
			'dist/icons/thing.dark.svg differs from icons/thing.dark.svg',
			'dist/icons/thing.svg is missing (from icons/thing.svg)',
			'dist/nodes/Thing/Thing.node.json differs from nodes/Thing/Thing.node.json',
		]);
	});

	test('files an earlier build left: a removed source, a source map', () => {
		write({
			'dist/nodes/Thing/Removed.node.js': 'old',
			'dist/nodes/Thing/Thing.node.js.map': '{}',
		});
		expect(checkDist(root).sort()).toEqual([
			'dist/nodes/Thing/Removed.node.js has no source (left from an earlier build?)',
			'dist/nodes/Thing/Thing.node.js.map has no source (left from an earlier build?)',
		]);
	});

	test('an n8n entry in package.json with no source at all', () => {
		write({
			'package.json': JSON.stringify({
				name: 'n8n-nodes-fixture',
				n8n: { nodes: ['dist/nodes/Other/Other.node.js'] },
			}),
		});
		expect(checkDist(root)).toEqual([
			"dist/nodes/Other/Other.node.js, listed in package.json's n8n section, is not built",
		]);
	});
});
