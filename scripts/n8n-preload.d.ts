// Types of scripts/n8n-preload.js, for the TypeScript end-to-end tests.
import type { CliResult, N8nRuntime } from './n8n-runtime';

export interface CredentialValues {
	baseUrl: string;
	clientId: string;
	clientSecret: string;
	refreshToken: string;
}

export interface CredentialEntry {
	id: string;
	name: string;
	type: string;
	data: Record<string, unknown>;
}

export const CREDENTIAL_ID: string;
export const CREDENTIAL_NAME: string;
export const CREDENTIAL_TYPE: string;
export const NODE_TYPE: string;
export const TRIGGER_TYPE: string;
export const EXAMPLES_DIR: string;

type CliOptions = { timeoutMs?: number; runtime?: N8nRuntime };

export function credentialEntry(values: CredentialValues, options?: { id?: string; name?: string }): CredentialEntry;
export function importCredentials(env: Record<string, string>, entries: CredentialEntry[], options?: CliOptions): Promise<CliResult>;
export function importWorkflows(env: Record<string, string>, workflows: object[], options?: CliOptions): Promise<CliResult>;
export function publishWorkflowCli(env: Record<string, string>, id: string, options?: CliOptions): Promise<void>;
export function exampleWorkflows(): { file: string; workflow: any }[];
export function sha(value: unknown): string;
export function request(
	url: string,
	options?: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }>;
export function unflattenExecutionData(text: string): any;

export class N8nRestClient {
	constructor(baseUrl: string);
	baseUrl: string;
	browserId: string;
	cookie: string | undefined;
	login(email?: string, password?: string): Promise<any>;
	call(method: string, pathname: string, body?: unknown): Promise<any>;
	getWorkflow(id: string): Promise<any>;
	listWorkflows(): Promise<any[]>;
	listCredentials(): Promise<any[]>;
	activateWorkflow(id: string): Promise<any>;
	deactivateWorkflow(id: string): Promise<any>;
	listExecutions(workflowId: string): Promise<any[]>;
	getExecution(id: string): Promise<any>;
}
