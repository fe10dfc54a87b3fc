import * as path from 'node:path';

// npm settings a user may rely on (cache, registry, certificates, proxies); every other npm_* variable
// (an outer `npm test` exports e.g. npm_config_ignore_scripts from the project's .npmrc) is dropped.
const KEPT_NPM_VARIABLES =
	/^npm_config_(cache|registry|userconfig|globalconfig|cafile|proxy|https_proxy|noproxy|strict_ssl)$/i;
const N8N_VARIABLES =
	/^(N8N_|DB_|QUEUE_|EXECUTIONS_|WEBHOOK_|CREDENTIALS_|GENERIC_TIMEZONE$|NODE_FUNCTION_ALLOW_|EXTERNAL_(FRONTEND_HOOKS_URLS|HOOK_FILES)$)/;

/** This process's environment without what an outer npm, jest or n8n run would leak into a child. */
export function cleanEnv({ keepNpmConfig = false } = {}): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [name, value] of Object.entries(process.env)) {
		if (
			value === undefined ||
			N8N_VARIABLES.test(name) ||
			['NODE_ENV', 'NODE_OPTIONS', 'NODE_PATH'].includes(name)
		)
			continue;
		if (/^npm_/i.test(name) && !(keepNpmConfig && KEPT_NPM_VARIABLES.test(name))) continue;
		env[name] = value;
	}
	return env;
}

/** `env` with `dir` first on its PATH (how a child gets the runtime's Node 24 as `node`). */
export function withPathFirst(env: Record<string, string>, dir: string): Record<string, string> {
	return {
		...env,
		PATH: [
			dir,
			...(env.PATH ?? '').split(path.delimiter).filter((entry) => entry && entry !== dir),
		].join(path.delimiter),
	};
}
