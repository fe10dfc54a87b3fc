/** Proof that no secret leaks: what an error exposes, and every token n8n stored. */
import type { CredentialStore } from '../../devkit/engine.cts';
import type { Sandbox, SandboxCredential } from '../../sandbox/index.cts';

/** Every string an error exposes: message, description, stack, its JSON, and the same for each cause. */
export function exposedText(error: unknown): string {
	const parts: string[] = [];
	const seen = new Set<unknown>();
	let current: any = error;
	while (current !== undefined && current !== null && !seen.has(current)) {
		seen.add(current);
		parts.push(String(current));
		if (typeof current === 'object') {
			for (const key of [
				'message',
				'description',
				'stack',
				'context',
				'errorResponse',
				'messages',
			]) {
				try {
					parts.push(
						typeof current[key] === 'string' ? current[key] : (JSON.stringify(current[key]) ?? ''),
					);
				} catch {
					parts.push(String(current[key]));
				}
			}
			try {
				parts.push(JSON.stringify(current) ?? '');
			} catch {
				parts.push('[unserializable]');
			}
			// Own properties too, including non-enumerable ones JSON leaves out.
			for (const key of Object.getOwnPropertyNames(current)) {
				const value = current[key];
				if (typeof value === 'string') parts.push(value);
			}
		}
		current = typeof current === 'object' ? current.cause : undefined;
	}
	return parts.join('\n');
}

/** Fails when any of `secrets` appears in what the error exposes. */
export function expectNoSecret(error: unknown, secrets: Array<string | undefined>) {
	const text = exposedText(error);
	expect(text.length).toBeGreaterThan(0);
	for (const secret of secrets) {
		if (!secret) continue;
		expect(secret.length).toBeGreaterThan(8);
		if (text.includes(secret)) throw new Error(`a secret leaked into the error: ${text}`);
	}
}

/** Collects every access token n8n stored for the credential (each write-back), to prove none leaks. */
export function tokensSeen(store: CredentialStore): () => string[] {
	const stored = store.get();
	const seen = new Set<string>();
	let data = stored.data;
	Object.defineProperty(stored, 'data', {
		configurable: true,
		enumerable: true,
		get: () => data,
		set: (value) => {
			data = value;
			if (typeof value?.accessToken === 'string' && value.accessToken !== '')
				seen.add(value.accessToken);
		},
	});
	return () => [...seen];
}

export function secretsOf(
	sandbox: Sandbox,
	credential: SandboxCredential = sandbox.orgs.primary,
): string[] {
	return [credential.clientSecret, credential.refreshToken];
}
