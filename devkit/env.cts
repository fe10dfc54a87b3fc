/**
 * Must be loaded before anything that loads n8n-core (jest's setupFiles, the benchmark's first
 * import): n8n-core writes `$N8N_USER_FOLDER/.n8n/config` on first load, so it goes to a temp
 * folder instead of the home folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

if (!process.env.N8N_USER_FOLDER) {
	// Under jest, inside the run's one folder (jest.config.js), which the run removes at its end: each
	// test file makes its own user folder, in a worker whose exit is not reliably reached. Elsewhere
	// (the benchmark), removed at this process's exit.
	const runFolder = process.env.COMPANION_PUSH_USER_FOLDERS;
	const userFolder = mkdtempSync(join(runFolder ?? tmpdir(), 'companion-push-n8n-'));
	process.env.N8N_USER_FOLDER = userFolder;
	if (!runFolder) process.on('exit', () => rmSync(userFolder, { recursive: true, force: true }));
}
process.env.N8N_ENCRYPTION_KEY =
	process.env.N8N_ENCRYPTION_KEY || 'companion-push-dev-encryption-key';

// ts-node appends `.ts` after `.json` in node's extension order, so `CompanionPush.node` would load
// `CompanionPush.node.json` (the codex beside the node) instead of `CompanionPush.node.ts`. Try
// `.ts` first, as tsc and jest do. (Only under ts-node: jest and compiled code do not use this table.)
const extensions = require.extensions as Record<string, unknown> | undefined;
if (extensions?.['.ts'] && extensions['.json']) {
	const json = extensions['.json'];
	delete extensions['.json'];
	extensions['.json'] = json;
}
