// What the dev scripts share to find a program and to install a Debian package when it is missing
// (Chromium for the editor tests, Redis for queue mode).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

export function isExecutable(file: string): boolean {
	try {
		fs.accessSync(file, fs.constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/** The PATH folder that holds `name`, if any. */
export const onPath = (name: string) =>
	(process.env.PATH ?? '')
		.split(path.delimiter)
		.find((dir) => dir && isExecutable(path.join(dir, name)));

/** `apt-get <args>`, non-interactive, waiting up to 5 min for another apt-get's lock; rejects with its stderr. */
export async function aptGet(...args: string[]): Promise<void> {
	await promisify(execFile)('apt-get', ['-o', 'DPkg::Lock::Timeout=300', '-q', ...args], {
		env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
		maxBuffer: 64 * 1024 * 1024,
	});
}
