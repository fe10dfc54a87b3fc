import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';

import { cleanEnv, withPathFirst } from './env';
import { locateRuntime, type N8nRuntime } from './install';

export const OWNER_EMAIL = 'owner@companion-push.example.com';
export const OWNER_PASSWORD = 'CompanionPush-Owner-1';
let ownerPasswordHash: string | undefined;

/**
 * Makes a fresh temp N8N_USER_FOLDER and the full environment to run n8n in it: isolated, quiet,
 * offline, bound to 127.0.0.1, sqlite, the owner set from the environment, Node 24 first on PATH.
 */
export function createN8nHome({
	port = 5678,
	brokerPort = port + 1,
	runtime = locateRuntime(),
	extraEnv = {},
}: { port?: number; brokerPort?: number; runtime?: N8nRuntime; extraEnv?: Record<string, string> } = {}): { userFolder: string; env: Record<string, string> } {
	const userFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-n8n-'));
	// A bcrypt hash made with n8n's own bcryptjs.
	ownerPasswordHash ??= createRequire(path.join(runtime.n8nBin, '..', '..', 'package.json'))('bcryptjs').hashSync(OWNER_PASSWORD, 10) as string;
	const loopback = `http://127.0.0.1:${port}/`;
	const env = {
		...withPathFirst(cleanEnv(), path.dirname(runtime.nodeBin)),
		N8N_USER_FOLDER: userFolder,
		N8N_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
		DB_TYPE: 'sqlite',
		// Loopback only.
		N8N_HOST: '127.0.0.1', N8N_LISTEN_ADDRESS: '127.0.0.1', N8N_PORT: String(port), N8N_PROTOCOL: 'http', N8N_SECURE_COOKIE: 'false',
		N8N_WEBHOOK_URL: loopback, N8N_EDITOR_BASE_URL: loopback,
		N8N_RUNNERS_BROKER_PORT: String(brokerPort), N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		// Today's defaults, set explicitly so that n8n does not print deprecation notices about them.
		N8N_RUNNERS_TASK_TIMEOUT: '300', N8N_COMPRESSION_NODE_MAX_DECOMPRESSED_SIZE_BYTES: String(2 * 1024 ** 3), N8N_COMPRESSION_NODE_MAX_ZIP_ENTRIES: '5000',
		// Quiet and offline.
		N8N_DIAGNOSTICS_ENABLED: 'false', N8N_VERSION_NOTIFICATIONS_ENABLED: 'false', N8N_TEMPLATES_ENABLED: 'false', N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false', N8N_DYNAMIC_BANNERS_ENABLED: 'false', N8N_LICENSE_AUTO_RENEW_ENABLED: 'false', N8N_AI_ENABLED: 'false',
		EXTERNAL_FRONTEND_HOOKS_URLS: '',
		// n8n 1.x refuses to start on a module name it does not know ('Unknown module "mcp-registry"').
		...(runtime.line === '1.x' ? {} : { N8N_DISABLED_MODULES: 'mcp-registry' }),
		// This package is an unverified community package, installed by hand.
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true', N8N_VERIFIED_PACKAGES_ENABLED: 'false', N8N_UNVERIFIED_PACKAGES_ENABLED: 'true', N8N_REINSTALL_MISSING_PACKAGES: 'false',
		// `n8n execute --rawOutput` prints its result at info level; warn would hide it.
		N8N_LOG_LEVEL: 'info', N8N_LOG_OUTPUT: 'console',
		// Owner without a setup screen.
		N8N_INSTANCE_OWNER_MANAGED_BY_ENV: 'true', N8N_INSTANCE_OWNER_EMAIL: OWNER_EMAIL, N8N_INSTANCE_OWNER_PASSWORD_HASH: ownerPasswordHash,
		N8N_INSTANCE_OWNER_FIRST_NAME: 'Companion', N8N_INSTANCE_OWNER_LAST_NAME: 'Owner',
		...extraEnv,
	};
	return { userFolder, env };
}
