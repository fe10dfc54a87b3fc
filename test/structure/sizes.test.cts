/**
 * The size of the shipped code's parts, read from the files themselves (the tree is the thing
 * checked): no file under `nodes/` or `credentials/` is over 300 lines, and no folder there holds
 * more than 12 files. A file that outgrows the first is split by job; a folder that outgrows the
 * second groups what is not one of its stages into a folder of its own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT } from '../harness/index.cts';

const MAX_LINES = 300;
const MAX_FILES_IN_FOLDER = 12;

interface Tree {
	/** Every file, by its path from the repository's root, with its number of lines. */
	lines: Map<string, number>;
	/** Every folder, by its path, with the number of files directly in it (its folders not counted). */
	files: Map<string, number>;
}

/** Lines as `wc -l` counts them, and a last line without its newline too. */
function linesOf(text: string): number {
	if (text === '') return 0;
	const newlines = text.split('\n').length - 1;
	return text.endsWith('\n') ? newlines : newlines + 1;
}

function treeOf(roots: string[]): Tree {
	const tree: Tree = { lines: new Map(), files: new Map() };
	const walk = (dir: string) => {
		let files = 0;
		for (const entry of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
			const relative = path.posix.join(dir, entry.name);
			if (entry.isDirectory()) walk(relative);
			else {
				files++;
				tree.lines.set(relative, linesOf(fs.readFileSync(path.join(REPO_ROOT, relative), 'utf8')));
			}
		}
		tree.files.set(dir, files);
	};
	for (const root of roots) walk(root);
	return tree;
}

/** The files over the line limit and the folders over the file limit, in words. */
function oversized(tree: Tree): string[] {
	return [
		...[...tree.lines]
			.filter(([, lines]) => lines > MAX_LINES)
			.map(([file, lines]) => `${file}: ${lines} lines (at most ${MAX_LINES})`),
		...[...tree.files]
			.filter(([, files]) => files > MAX_FILES_IN_FOLDER)
			.map(([folder, files]) => `${folder}/: ${files} files (at most ${MAX_FILES_IN_FOLDER})`),
	].sort();
}

describe('the size of the shipped code', () => {
	const tree = treeOf(['nodes', 'credentials']);

	test('the files and folders are found', () => {
		expect(tree.lines.get('nodes/CompanionPush/CompanionPush.node.ts')).toBeGreaterThan(0);
		expect(tree.lines.has('credentials/CompanionPushApi.credentials.ts')).toBe(true);
		expect(tree.files.get('nodes/CompanionPush/transport')).toBeGreaterThan(0);
	});

	test(`no file over ${MAX_LINES} lines, no folder over ${MAX_FILES_IN_FOLDER} files`, () => {
		expect(oversized(tree)).toEqual([]);
	});

	test('the check counts lines as wc -l does, and sees a long file and a crowded folder', () => {
		expect([linesOf(''), linesOf('a\n'), linesOf('a\nb'), linesOf('a\n\nb\n')]).toEqual([
			0, 1, 2, 3,
		]);
		const limits: Tree = {
			lines: new Map([
				['nodes/a.ts', MAX_LINES],
				['nodes/b.ts', MAX_LINES + 1],
			]),
			files: new Map([
				['nodes', MAX_FILES_IN_FOLDER],
				['nodes/x', MAX_FILES_IN_FOLDER + 1],
			]),
		};
		expect(oversized(limits)).toEqual([
			`nodes/b.ts: ${MAX_LINES + 1} lines (at most ${MAX_LINES})`,
			`nodes/x/: ${MAX_FILES_IN_FOLDER + 1} files (at most ${MAX_FILES_IN_FOLDER})`,
		]);
	});
});
