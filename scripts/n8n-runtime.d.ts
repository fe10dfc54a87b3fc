// Types of scripts/n8n-runtime.js, for the TypeScript end-to-end tests.
import type { ChildProcess } from 'node:child_process';

export interface N8nRuntime {
	nodeBin: string;
	n8nBin: string;
	runtimeDir: string;
}

export interface CliResult {
	code: number | null;
	signal: string | null;
	stdout: string;
	stderr: string;
	timedOut: boolean;
	durationMs: number;
}

export interface RunningN8n {
	process: ChildProcess;
	url: string;
	port: number;
	output(): string;
	stop(options?: { timeoutMs?: number }): Promise<void>;
}

export const OWNER_EMAIL: string;
export const OWNER_PASSWORD: string;
export const OWNER_FIRST_NAME: string;
export const OWNER_LAST_NAME: string;

export function ensureRuntime(options?: { log?: (line: string) => void }): Promise<N8nRuntime>;
export function locateRuntime(): N8nRuntime;
export function runtimeKey(): string;
export function pinnedVersions(): { n8n: string; node: string };
export function createN8nHome(options?: {
	port?: number;
	brokerPort?: number;
	runtime?: N8nRuntime;
	extraEnv?: Record<string, string>;
}): { userFolder: string; env: Record<string, string> };
export function findFreePort(): Promise<number>;
export function installPackageTarball(
	userFolder: string,
	tarballPath: string,
	options?: { runtime?: N8nRuntime },
): { packageDir: string; name: string; version: string };
export function packPackage(outDir?: string): string;
export function runN8nCli(
	env: Record<string, string>,
	args: string[],
	options?: { timeoutMs?: number; cwd?: string; runtime?: N8nRuntime },
): Promise<CliResult>;
export function parseRawOutput(stdout: string): any;
export function startN8n(
	env: Record<string, string>,
	options?: { readyTimeoutMs?: number; runtime?: N8nRuntime; onOutput?: (chunk: string) => void },
): Promise<RunningN8n>;
