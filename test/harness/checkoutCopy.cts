import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/**
 * Copies this checkout into `dest` as a fresh clone would hold it, uncommitted edits included: the
 * files git tracks or would track (nothing it ignores, so no dist/), with node_modules linked, not
 * copied. Copies get new modification times, as a clone's files do.
 */
export function copyCheckout(dest: string): void {
	const listed = spawnSync(
		'git',
		['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
		{ cwd: REPO_ROOT, encoding: 'utf8' },
	);
	if (listed.status !== 0)
		throw new Error(`git ls-files failed (the tests copy a git checkout): ${listed.stderr}`);
	for (const file of new Set(listed.stdout.split('\0').filter(Boolean))) {
		const source = path.join(REPO_ROOT, file);
		if (!fs.existsSync(source)) continue; // deleted in the work tree, not committed yet
		fs.mkdirSync(path.dirname(path.join(dest, file)), { recursive: true });
		fs.copyFileSync(source, path.join(dest, file));
	}
	fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dest, 'node_modules'), 'dir');
}
