import { makeSandboxCertificates } from './certificates.cts';
import { startHttpServer } from './http/server.cts';
import { SandboxState } from './state.cts';
import type { Sandbox, SandboxOptions } from './types.cts';

export * from './types.cts';
export { USER_KINDS } from './directory.cts';
export { DEFAULT_SETTINGS } from './settings.cts';
export { makeSandboxCertificates } from './certificates.cts';

/**
 * Starts a sandbox of the Push Notification Public API on 127.0.0.1 (port 0 = random).
 * See sandbox/README.md for the behaviour, the switches and the admin HTTP API.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
	const state = new SandboxState(options);
	const tls = options.tls === true ? await makeSandboxCertificates() : options.tls;
	const server = await startHttpServer(state, options.port ?? 0, tls);
	return {
		baseUrl: server.baseUrl,
		caCertificate: tls?.ca,
		orgs: { primary: state.primary, secondary: state.secondary },
		nonAdminCredential: { ...state.nonAdminCredential },
		clock: {
			now: () => state.clock.now(),
			apiNow: () => state.apiNow(),
			// Dispatches, deliveries, retries and auto taps are read off the clock: moving it runs them.
			advance: async (ms) => state.clock.advance(ms),
			set: async (iso) => state.clock.set(iso),
		},
		reset: async () => state.reset(),
		stop: () => server.close(),
		settings: () => ({ ...state.settings, listOmitsFields: [...state.settings.listOmitsFields] }),
		configure: (settings) => state.configure(settings),
		setListShape: (listShape) => state.configure({ listShape }),
		setErrorShape: (errorShape) => state.configure({ errorShape }),
		setTokenLifetime: (tokenLifetimeSeconds) => state.configure({ tokenLifetimeSeconds }),
		revokeRefreshToken: (clientId) => state.auth.revoke(clientId),
		expireAccessTokens: () => state.auth.expireAll(),
		addFault: (fault) => state.addFault(fault),
		clearFaults: () => state.faults.clear(),
		tap: (notificationId, userId, deviceIndex) => state.tap(notificationId, userId, deviceIndex),
		sendAsAnotherClient: (orgId, body) => state.sendAsAnotherClient(orgId, body),
		requestLog: () => state.log.all(),
		counts: () => state.log.counts(),
		deliveriesByUser: (orgId) => state.deliveriesByUser(orgId),
		notifications: (orgId) => state.notifications(orgId),
	};
}
