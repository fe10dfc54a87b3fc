import type { INode } from 'n8n-workflow';

/** The credential type the nodes run with (the credential's `name`). */
export const CREDENTIAL_TYPE = 'companionPushApi';

/** The credential a node runs with, as the key of what the transport keeps per credential in
 * process memory (token renewals, the pace, the registry of sends). */
export function credentialKey(context: { getNode(): INode }): string {
	const reference = context.getNode().credentials?.[CREDENTIAL_TYPE];
	return reference?.id ?? reference?.name ?? 'unsaved';
}
