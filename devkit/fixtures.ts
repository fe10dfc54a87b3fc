/** What tests of every layer share about the sandbox: its endpoint keys (as in its request log and
 * counts) and the credential data n8n stores before a credential's first use. */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import type { Sandbox, SandboxCredential } from '../sandbox';

export const REFRESH = 'POST /auth/oauth/v2/refresh';
export const USER_LIST = 'GET /user/list';
export const ACTIVE_USERS = 'GET /user-device/users';
export const SEND = 'POST /push-notification/send';
export const SEND_LIST = 'GET /push-notification/list';
export const DETAIL = 'GET /push-notification/:id';
export const CANCEL = 'POST /push-notification/:id/cancel';

/** The credential data as n8n stores it before its first use: no access token yet. */
export function credentialData(
	sandbox: Sandbox,
	credential: SandboxCredential = sandbox.orgs.primary,
): ICredentialDataDecryptedObject {
	return {
		baseUrl: sandbox.baseUrl,
		clientId: credential.clientId,
		clientSecret: credential.clientSecret,
		refreshToken: credential.refreshToken,
		accessToken: '',
		accessTokenRenewAfter: 0,
	};
}
