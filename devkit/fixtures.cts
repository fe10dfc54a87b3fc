/** The sandbox's credential as n8n stores it before its first use, for the tests of every layer
 * and the benchmark. */
import type { ICredentialDataDecryptedObject, IDataObject } from 'n8n-workflow';

import type { Sandbox, SandboxCredential } from '../sandbox/index.cts';
import { CredentialStore } from './engine.cts';

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

export interface StoreOptions {
	/** Whose credential: the primary org's unless given (another org's, the non-admin one). */
	credential?: SandboxCredential;
	/** Fields that replace the stored ones (a wrong secret, a token already there). */
	overrides?: IDataObject;
	/** The credential's id in the store (what the node keeps in process memory per credential,
	 * e.g. its pace after 429s, is keyed by it); `cred-1` unless given. */
	id?: string;
}

/** A credential store holding the sandbox's credential as n8n keeps it before its first use. */
export function storeFor(
	sandbox: Sandbox,
	{ credential, overrides = {}, id }: StoreOptions = {},
): CredentialStore {
	const store = new CredentialStore();
	store.add({ ...credentialData(sandbox, credential), ...overrides }, id);
	return store;
}
