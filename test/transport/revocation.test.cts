/**
 * An API where a refresh revokes the previous access token (the spec does not say it doesn't),
 * with several callers renewing one credential: parallel executions of one n8n process, or several
 * processes (queue-mode workers). n8n's credential store has no lock around preAuthentication
 * (last write wins), so a caller can find its fresh token revoked by another's renewal, and the
 * stored token can be a revoked one. Each "process" here is its own copy of the transport module
 * (its own renewals in flight), and all share one credential store, as workers share n8n's database.
 */
import type { IDataObject } from 'n8n-workflow';

import { resetProcessState, useTimings, useWait } from '../../devkit/processState.cts';
import * as transport from '../../nodes/CompanionPush/transport';
import {
	ACTIVE_USERS,
	count,
	inNode,
	logOf,
	REFRESH,
	SEND,
	storeFor,
	TestClock,
	TRANSPORT_SANDBOX,
	until,
	useSandbox,
	valueInNode,
	type CredentialStore,
} from '../harness/index.cts';

type Transport = typeof transport;

/** Another n8n process: a fresh copy of the transport module, with its own memory. */
function anotherProcess(): Transport {
	let copy: Transport | undefined;
	jest.isolateModules(() => {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		copy = require('../../nodes/CompanionPush/transport');
	});
	return copy!;
}

/** Calls `onWrite` once, the first time n8n writes a renewed token into the stored credential. */
function onFirstTokenWrite(store: CredentialStore, onWrite: () => void) {
	const stored = store.get();
	let data = stored.data;
	let done = false;
	Object.defineProperty(stored, 'data', {
		configurable: true,
		get: () => data,
		set: (value) => {
			data = value;
			if (!done && value?.accessToken) {
				done = true;
				onWrite();
			}
		},
	});
}

describe('a refresh that revokes the previous access token (manual clock)', () => {
	const sandbox = useSandbox({
		...TRANSPORT_SANDBOX,
		seedUsers: 10,
		refreshRevokesPreviousTokens: true,
		resetBeforeEach: true,
	});

	/** Another process's renewal of the credential `data`: its new token (the previous one revoked). */
	const renewedElsewhere = async (data: IDataObject) => {
		const response = await fetch(`${sandbox.baseUrl}/auth/oauth/v2/refresh`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({
				client_id: data.clientId,
				client_secret: data.clientSecret,
				refresh_token: data.refreshToken,
			}),
		});
		return ((await response.json()) as IDataObject).access_token as string;
	};

	test('another process renewed (revoking the token this call read) and saved: the call takes that token, no refresh of its own', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => transport.listActiveUserIds(context));
		const ours = store.get();
		const before = { ...ours.data };
		// The other process's renewal: a new token, the one read below revoked.
		const theirs = await renewedElsewhere(before);
		// This call reads the credential just before that process's save lands, and again after.
		let reads = 0;
		Object.defineProperty(ours, 'data', {
			configurable: true,
			get: () => (reads++ === 0 ? before : { ...before, accessToken: theirs }),
		});
		await sandbox.reset();

		await valueInNode(store, (context) => transport.listActiveUserIds(context));

		expect(logOf(sandbox).map((entry) => [entry.endpoint, entry.status])).toEqual([
			[ACTIVE_USERS, 401],
			[ACTIVE_USERS, 200],
		]);
		expect(reads).toBeGreaterThanOrEqual(2);
	});

	test('another process renewed and saved while this call waited after its 401: the call takes that token, no refresh of its own', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => transport.listActiveUserIds(context));
		const ours = store.get();
		const before = { ...ours.data };
		const theirs = await renewedElsewhere(before);
		// The store shows the other process's token only once this call has looked once and waits.
		let saved = false;
		Object.defineProperty(ours, 'data', {
			configurable: true,
			get: () => (saved ? { ...before, accessToken: theirs } : before),
		});
		await sandbox.reset();
		useTimings({ foreignRenewalWaitMs: { min: 1_000, max: 1_000 } });
		const clock = new TestClock();
		clock.drive({ useWait }, 'here');
		try {
			const call = valueInNode(store, (context) => transport.listActiveUserIds(context));
			await until(() => clock.waiting('here').length > 0);
			saved = true;
			clock.advance(clock.waiting('here')[0].ms);
			await call;
		} finally {
			resetProcessState();
			jest.useRealTimers();
		}

		expect(logOf(sandbox).map((entry) => [entry.endpoint, entry.status])).toEqual([
			[ACTIVE_USERS, 401],
			[ACTIVE_USERS, 200],
		]);
	});

	test('a renewal of its own revoked before use, and the revoked token is what the store kept: a second renewal, then success', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => transport.listActiveUserIds(context));
		const writesBefore = store.get().writes;
		sandbox.expireAccessTokens();
		// Another process renews right after this call saved its token (revoking it), and that
		// process's save landed first: the store keeps this call's revoked token.
		onFirstTokenWrite(store, () => sandbox.expireAccessTokens());
		await sandbox.reset();

		const ids = await valueInNode(store, (context) => transport.listActiveUserIds(context));

		expect(ids.length).toBeGreaterThan(0);
		expect(logOf(sandbox).map((entry) => [entry.endpoint, entry.status])).toEqual([
			[ACTIVE_USERS, 401],
			[REFRESH, 200],
			[ACTIVE_USERS, 401],
			[REFRESH, 200],
			[ACTIVE_USERS, 200],
		]);
		expect(store.get().writes - writesBefore).toBe(2);
	});

	test('a send whose renewed token is revoked before use is renewed again and registered once', async () => {
		const store = storeFor(sandbox);
		await valueInNode(store, (context) => transport.listActiveUserIds(context));
		sandbox.expireAccessTokens();
		onFirstTokenWrite(store, () => sandbox.expireAccessTokens());
		await sandbox.reset();
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 2);

		const outcome = await valueInNode(store, (context) =>
			transport.sendNotification(context, {
				title: 'Line 3 stopped',
				body: 'Please check the press.',
				target_user_ids: users,
			}),
		);

		expect(logOf(sandbox).map((entry) => [entry.endpoint, entry.status])).toEqual([
			[SEND, 401],
			[REFRESH, 200],
			[SEND, 401],
			[REFRESH, 200],
			[SEND, 202],
		]);
		expect(sandbox.notifications().map((record) => record.id)).toEqual([outcome.id]);
	});
});

describe('a refresh that revokes the previous access token: many callers over several token lives (real clock)', () => {
	const TOKEN_LIFE_SECONDS = 2;
	const RUN_MS = 5000;
	const sandbox = useSandbox({
		...TRANSPORT_SANDBOX,
		clock: 'real',
		seedUsers: 40,
		tokenLifetimeSeconds: TOKEN_LIFE_SECONDS,
		refreshRevokesPreviousTokens: true,
		latencyMs: 15,
		resetBeforeEach: true,
	});

	/** Each caller sends for RUN_MS, 8 sends at a time per execution, each to one user with its own title. */
	async function sendFromEveryCaller(store: CredentialStore, callers: Transport[]) {
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 20);
		const started = Date.now();
		const ids: string[] = [];
		const failures: string[] = [];
		let next = 0;
		await Promise.all(
			callers.map(async (caller) => {
				while (Date.now() - started < RUN_MS) {
					const { value, error } = await inNode(store, (context) =>
						Promise.allSettled(
							Array.from({ length: 8 }, () => {
								const number = next++;
								return caller.sendNotification(context, {
									title: `Event ${number}`,
									body: 'Order changed.',
									target_user_ids: [users[number % users.length]],
								});
							}),
						),
					);
					if (error) failures.push(String(error));
					for (const result of value ?? []) {
						if (result.status === 'fulfilled') ids.push(result.value.id);
						else failures.push(result.reason?.message ?? String(result.reason));
					}
				}
			}),
		);
		return { ids, failures, tries: next, elapsedMs: Date.now() - started };
	}

	test.each([
		['one process, 4 executions at once', 1, 4],
		['two processes, 2 executions at once each', 2, 2],
	])(
		'%s: nothing fails, every send registered once, at most one refresh per process per token life',
		async (_name, processes, executionsEach) => {
			const store = storeFor(sandbox);
			const copies = [transport, ...Array.from({ length: processes - 1 }, anotherProcess)];
			const callers = copies.flatMap((copy) => Array.from({ length: executionsEach }, () => copy));

			const { ids, failures, tries, elapsedMs } = await sendFromEveryCaller(store, callers);

			expect(failures).toEqual([]);
			expect(ids).toHaveLength(tries);
			expect(new Set(ids).size).toBe(tries);
			expect(
				sandbox
					.notifications()
					.map((record) => record.id)
					.sort(),
			).toEqual([...ids].sort());
			expect(count(sandbox, SEND)).toBeGreaterThanOrEqual(tries);
			// A token is renewed a twelfth of its life before it expires.
			const tokenLives = Math.ceil(elapsedMs / ((TOKEN_LIFE_SECONDS * 1000 * 11) / 12));
			const refreshes = count(sandbox, REFRESH);
			const refused = logOf(sandbox, SEND).filter((entry) => entry.status === 401).length;
			console.log(
				`${_name}: ${tries} sends in ${elapsedMs} ms, ${tokenLives} token lives, ${refreshes} refreshes, ${refused} sends refused (401) and renewed`,
			);
			expect(refreshes).toBeLessThanOrEqual(processes * (tokenLives + 1));
		},
	);
});
