/** The Companion Push Trigger in an active workflow, polled as n8n polls it (devkit/poll.cts),
 * against a manual-clock sandbox of its own. */
import type { IDataObject, INode } from 'n8n-workflow';

import { runWorkflow } from '../../devkit/engine.cts';
import type { CredentialStore } from '../../devkit/engine.cts';
import { storeFor } from '../../devkit/fixtures.cts';
import { createPollTarget, nodeStaticData, runPoll } from '../../devkit/poll.cts';
import type { PollOutcome, PollTarget } from '../../devkit/poll.cts';
import { CompanionPushTrigger } from '../../nodes/CompanionPush/CompanionPushTrigger.node';
import { startSandbox } from '../../sandbox/index.cts';
import type { Sandbox, SandboxOptions, UserKind } from '../../sandbox/index.cts';
import { send, tokenFor } from './api.cts';
import { MANUAL_CLOCK, stoppedAfterEachTest } from './sandboxes.cts';

export const TRIGGER_TYPE = 'test.companionPushTrigger';
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** A manual-clock sandbox, a credential for it, and an active workflow with the trigger. */
export class TriggerFixture {
	readonly credentials: CredentialStore;
	target!: PollTarget;
	private token?: { value: string; issuedAt: number };
	private hostClock?: jest.SpyInstance<number, []>;

	private constructor(readonly sandbox: Sandbox) {
		this.credentials = storeFor(sandbox);
	}

	/** Use `useTriggerFixtures().start` in tests: it also stops the fixture. */
	static async start(
		parameters: IDataObject = {},
		options: SandboxOptions = {},
	): Promise<TriggerFixture> {
		const fixture = new TriggerFixture(await startSandbox({ ...MANUAL_CLOCK, ...options }));
		fixture.activate(parameters);
		return fixture;
	}

	/** A new active workflow with the trigger (fresh static data unless given). */
	activate(parameters: IDataObject = {}, staticData?: IDataObject): PollTarget {
		this.target = createPollTarget({
			type: TRIGGER_TYPE,
			nodeType: new CompanionPushTrigger(),
			parameters: {
				events: ['notificationSettled', 'deliveryFailed', 'deliveryOpened'],
				...parameters,
			},
			credentials: this.credentials,
			staticData,
		});
		return this.target;
	}

	/** Points the trigger's credential at another base URL, e.g. a proxy in front of the sandbox. */
	useBaseUrl(baseUrl: string): void {
		const stored = this.credentials.get();
		stored.data = { ...stored.data, baseUrl };
	}

	poll(): Promise<PollOutcome> {
		return runPoll(this.target);
	}

	/** Polls `times` times, moving the clock `everyMs` before each poll; all items, in order. */
	async pollEvery(everyMs: number, times: number): Promise<IDataObject[]> {
		const items: IDataObject[] = [];
		for (let i = 0; i < times; i++) {
			await this.sandbox.clock.advance(everyMs);
			const outcome = await this.poll();
			if (outcome.error) throw outcome.error;
			items.push(...outcome.items);
		}
		return items;
	}

	staticData(): IDataObject {
		return nodeStaticData(this.target);
	}

	/** A token for the test's own API calls (renewed after 50 minutes of sandbox time). */
	async apiToken(): Promise<string> {
		const now = this.sandbox.clock.now();
		if (!this.token || now - this.token.issuedAt > 50 * MINUTE) {
			this.token = { value: await tokenFor(this.sandbox), issuedAt: now };
		}
		return this.token.value;
	}

	/** Registers a send through the public API; returns its id. */
	async send(targetUserIds: string[], extra: Record<string, unknown> = {}): Promise<string> {
		return (await send(this.sandbox, await this.apiToken(), targetUserIds, extra)).id;
	}

	/** Registers `count` sends, 50 at a time (more at once had a loaded machine reset a connection
	 * now and then); returns their ids in order. */
	async sendMany(
		count: number,
		targetUserIds: string[],
		extra: Record<string, unknown> = {},
	): Promise<string[]> {
		const ids: string[] = [];
		for (let start = 0; start < count; start += 50) {
			const size = Math.min(50, count - start);
			ids.push(
				...(await Promise.all(Array.from({ length: size }, () => this.send(targetUserIds, extra)))),
			);
		}
		return ids;
	}

	user(kind: UserKind, index = 0): string {
		return this.sandbox.orgs.primary.usersOfKind(kind, index + 1)[index];
	}

	/** Requests the sandbox received since `since` (a requestLog length), per counts() key. */
	callsSince(since: number): Record<string, number> {
		const calls: Record<string, number> = {};
		for (const entry of this.sandbox.requestLog().slice(since))
			calls[entry.endpoint] = (calls[entry.endpoint] ?? 0) + 1;
		return calls;
	}

	/** Makes n8n's host clock (Date.now) follow the sandbox's, as real clocks do: the transport
	 * then renews the one-hour token ahead of expiry instead of meeting a 401. Undone by stop(). */
	hostClockFollowsSandbox(): void {
		const clock = this.sandbox.clock;
		this.hostClock = jest.spyOn(Date, 'now').mockImplementation(() => clock.now());
	}

	/** Stops the sandbox and gives Date.now back; a second call does nothing more. */
	async stop(): Promise<void> {
		this.hostClock?.mockRestore();
		this.hostClock = undefined;
		await this.sandbox.stop();
	}
}

/** Trigger fixtures the tests of this describe block start, each with its own trigger parameters
 * and sandbox options: each one is stopped once its test ends, also when the test failed. */
export function useTriggerFixtures(): {
	start(parameters?: IDataObject, options?: SandboxOptions): Promise<TriggerFixture>;
} {
	const keep = stoppedAfterEachTest<TriggerFixture>();
	return {
		start: async (parameters, options) => keep(await TriggerFixture.start(parameters, options)),
	};
}

export function ofEvent(items: IDataObject[], event: string): IDataObject[] {
	return items.filter((item) => item.event === event);
}

export function total(calls: Record<string, number>): number {
	return Object.values(calls).reduce((sum, n) => sum + n, 0);
}

/** "Fetch Test Event": the trigger run in manual mode through n8n's own engine (WorkflowExecute runs
 * a polling node's poll function with a PollContext in mode 'manual'); its items, or its error. */
export async function fetchTestEvent(
	fixture: TriggerFixture,
	parameters: IDataObject,
	staticData: IDataObject = {},
) {
	const nodeName = 'Companion Push Trigger';
	const stored = fixture.credentials.get();
	const node: INode = {
		id: 'n-manual',
		name: nodeName,
		type: TRIGGER_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: {
			events: ['notificationSettled', 'deliveryFailed', 'deliveryOpened'],
			...parameters,
		} as INode['parameters'],
		credentials: { companionPushApi: { id: stored.id, name: stored.name } },
	};
	const run = await runWorkflow({
		nodes: [node],
		connections: {},
		credentials: fixture.credentials,
		staticData,
	});
	const task = run.data.resultData.runData[nodeName]?.[0];
	return {
		items: (task?.data?.main?.[0] ?? []).map((item) => item.json),
		error: task?.error ?? run.data.resultData.error,
	};
}
