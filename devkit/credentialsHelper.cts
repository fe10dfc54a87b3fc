import { ICredentialsHelper } from 'n8n-workflow';
import type {
	ICredentialDataDecryptedObject,
	ICredentials,
	ICredentialType,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeProperties,
	IRequestOptionsSimplified,
} from 'n8n-workflow';

import { CompanionPushApi } from '../credentials/CompanionPushApi.credentials';

/** A saved credential as n8n keeps it: its data, how often n8n read it (in a real n8n each read is a
 * database query and a decrypt), and how often n8n wrote it back. */
export interface StoredCredential {
	id: string;
	name: string;
	type: string;
	data: ICredentialDataDecryptedObject;
	reads: number;
	writes: number;
}

const writeObservers = new Set<
	(stored: StoredCredential, data: ICredentialDataDecryptedObject) => void
>();

/** Calls `observer` with every credential n8n writes back (a renewed token) and the data written;
 * returns the function that stops observing (used by test/harness/secretGuard.cts). */
export function observeCredentialWrites(
	observer: (stored: StoredCredential, data: ICredentialDataDecryptedObject) => void,
): () => void {
	writeObservers.add(observer);
	return () => writeObservers.delete(observer);
}

export const credentialTypes: Record<string, ICredentialType> = {
	companionPushApi: new CompanionPushApi(),
};

/**
 * The part of n8n's CLI CredentialsHelper that n8n-core calls, kept to what n8n 2.41 does:
 * every getDecrypted reads the stored data afresh; preAuthentication runs the credential's
 * preAuthentication when the expirable field is empty or the call said "expired", and writes the
 * result back; authenticate applies the generic auth (headers/qs/body with `{{$credentials.x}}`).
 * The real pipeline is exercised end to end in a real n8n (test/e2e).
 */
export class TestCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly store: Map<string, StoredCredential>) {
		super();
	}

	getParentTypes(): string[] {
		return [];
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	private stored(details: INodeCredentialsDetails): StoredCredential {
		const credential = details.id ? this.store.get(details.id) : undefined;
		if (!credential) throw new Error(`Credential "${details.name}" (${details.id}) does not exist`);
		return credential;
	}

	async getDecrypted(
		_additionalData: unknown,
		details: INodeCredentialsDetails,
	): Promise<ICredentialDataDecryptedObject> {
		const credential = this.stored(details);
		credential.reads++;
		return structuredClone(credential.data);
	}

	async getCredentials(details: INodeCredentialsDetails): Promise<ICredentials> {
		return {
			id: details.id,
			name: details.name,
			type: this.stored(details).type,
		} as unknown as ICredentials;
	}

	async updateCredentials(
		details: INodeCredentialsDetails,
		_type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		const credential = this.stored(details);
		credential.data = structuredClone(data);
		credential.writes++;
		for (const observer of writeObservers) observer(credential, credential.data);
	}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	getCredentialsProperties(type: string): INodeProperties[] {
		return credentialTypes[type]?.properties ?? [];
	}

	async runPreAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
	) {
		const output = await credentialTypes[typeName]?.preAuthentication?.call(helpers, credentials);
		return output as ICredentialDataDecryptedObject | undefined;
	}

	async preAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		node: INode,
		credentialsExpired: boolean,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const type = credentialTypes[typeName];
		const expirable = type?.properties.find(
			(p) => p.type === 'hidden' && p.typeOptions?.expirable === true,
		);
		if (!type?.preAuthentication || expirable === undefined) return undefined;
		if (credentials[expirable.name] !== '' && !credentialsExpired) return undefined;
		const output = await type.preAuthentication.call(helpers, credentials);
		if (output[expirable.name] === undefined) return undefined;
		const reference = node.credentials?.[typeName];
		if (!reference) return undefined;
		await this.updateCredentials(
			reference,
			typeName,
			Object.assign(credentials, output) as ICredentialDataDecryptedObject,
		);
		return Object.assign(credentials, output) as ICredentialDataDecryptedObject;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
	): Promise<IHttpRequestOptions> {
		const authenticate = credentialTypes[typeName]?.authenticate;
		if (!authenticate) return requestOptions as IHttpRequestOptions;
		if (typeof authenticate === 'function')
			return await authenticate(credentials, requestOptions as IHttpRequestOptions);
		const resolve = (value: unknown) =>
			typeof value === 'string' && value.startsWith('=')
				? value
						.slice(1)
						.replace(/\{\{\s*\$credentials\.(\w+)\s*\}\}/g, (_m, key: string) =>
							String(credentials[key] ?? ''),
						)
				: value;
		const options = requestOptions as IHttpRequestOptions;
		for (const [section, values] of Object.entries(authenticate.properties)) {
			const target = ((options as unknown as Record<string, Record<string, unknown>>)[section] ??=
				{});
			for (const [key, value] of Object.entries(values as Record<string, unknown>))
				target[key] = resolve(value);
		}
		return options;
	}
}
