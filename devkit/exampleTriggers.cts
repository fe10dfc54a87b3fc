/**
 * The credentials that guard the examples' public triggers, as n8n's own templates guard theirs:
 * the ERP example's Webhook takes only a request with a secret header (Header Auth), and the safety
 * alert's form asks for a login (Basic Auth). Without them anyone who finds the URL could notify any
 * user, or send a safety alert to everyone.
 *
 * The secrets are made here, never kept in the repository: `npm start` keeps them in its user folder
 * (one file each, readable by its owner only, made once), queue mode and the tests make new ones.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The Header Auth credential of the ERP example's Webhook (examples/erp-event-to-push.json). */
export const ERP_WEBHOOK_CREDENTIAL = { id: 'cpExampleErpWebhookAuth', name: 'ERP webhook secret' };
/** The header the ERP sends its secret in. */
export const ERP_WEBHOOK_HEADER = 'X-ERP-Secret';
/** The Basic Auth credential of the safety alert example's form (examples/safety-alert-escalation.json). */
export const ALERT_FORM_CREDENTIAL = {
	id: 'cpExampleAlertFormAuth',
	name: 'Safety alert form login',
};
/** The user name the safety alert's form asks for. */
export const ALERT_FORM_USER = 'safety';

/** The files, in a folder, that keep the secrets of the examples' triggers. */
export const SECRET_FILES = {
	erpWebhookSecret: 'erp-webhook-secret',
	alertFormPassword: 'safety-alert-form-password',
} as const;

export interface ExampleTriggerSecrets {
	/** Where each secret is kept, when it is kept in a folder. */
	files?: { erpWebhookSecret: string; alertFormPassword: string };
	erpWebhookSecret: string;
	alertFormPassword: string;
}

const newSecret = () => randomBytes(24).toString('base64url');

/** New secrets, kept nowhere (a test's throwaway n8n). */
export function newExampleTriggerSecrets(): ExampleTriggerSecrets {
	return { erpWebhookSecret: newSecret(), alertFormPassword: newSecret() };
}

/** A secret made once and kept in `file`, readable by its owner only (like the owner's password). */
function keptSecret(file: string): string {
	if (!fs.existsSync(file)) fs.writeFileSync(file, newSecret(), { mode: 0o600 });
	fs.chmodSync(file, 0o600);
	return fs.readFileSync(file, 'utf8').trim();
}

/** The secrets kept in `folder` (made there the first time): the same at every start of that folder. */
export function keptExampleTriggerSecrets(folder: string): ExampleTriggerSecrets {
	fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
	const files = {
		erpWebhookSecret: path.join(folder, SECRET_FILES.erpWebhookSecret),
		alertFormPassword: path.join(folder, SECRET_FILES.alertFormPassword),
	};
	return {
		files,
		erpWebhookSecret: keptSecret(files.erpWebhookSecret),
		alertFormPassword: keptSecret(files.alertFormPassword),
	};
}

/** The two credentials, for `n8n import:credentials` (plain data: n8n encrypts it on import). */
export function exampleTriggerCredentialEntries(secrets: ExampleTriggerSecrets): object[] {
	return [
		{
			...ERP_WEBHOOK_CREDENTIAL,
			type: 'httpHeaderAuth',
			data: { name: ERP_WEBHOOK_HEADER, value: secrets.erpWebhookSecret },
		},
		{
			...ALERT_FORM_CREDENTIAL,
			type: 'httpBasicAuth',
			data: { user: ALERT_FORM_USER, password: secrets.alertFormPassword },
		},
	];
}

/** The header the ERP example's Webhook asks for. */
export function erpWebhookHeaders(secrets: ExampleTriggerSecrets): Record<string, string> {
	return { [ERP_WEBHOOK_HEADER]: secrets.erpWebhookSecret };
}

/** The Authorization header of the safety alert's form login. */
export function alertFormAuthorization(secrets: ExampleTriggerSecrets): string {
	const login = `${ALERT_FORM_USER}:${secrets.alertFormPassword}`;
	return `Basic ${Buffer.from(login).toString('base64')}`;
}

/**
 * The `curl` that posts an order event to the ERP example. The secret is read from its file when it
 * is kept in one, so the console shows where it is, not the secret itself.
 */
export function erpTryCommand(
	n8nUrl: string,
	secrets: ExampleTriggerSecrets,
	userId: string,
): string {
	const header = secrets.files
		? `"${ERP_WEBHOOK_HEADER}: $(cat '${secrets.files.erpWebhookSecret}')"`
		: `'${ERP_WEBHOOK_HEADER}: ${secrets.erpWebhookSecret}'`;
	return (
		`curl -s -X POST ${n8nUrl}/webhook/erp-event -H 'content-type: application/json' -H ${header} ` +
		`-d '{"orderId":"1042","status":"shipped","userId":"${userId}"}'`
	);
}

/** Where the safety alert's form login is, for the ready block. */
export function alertFormLoginLine(secrets: ExampleTriggerSecrets): string {
	const password = secrets.files
		? `the password in ${secrets.files.alertFormPassword}`
		: `password ${secrets.alertFormPassword}`;
	return `user "${ALERT_FORM_USER}", ${password}`;
}
