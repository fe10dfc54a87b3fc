import type { IDataObject } from 'n8n-workflow';

import { CompanionPushTrigger } from '../../nodes/CompanionPush/CompanionPushTrigger.node';
import type { Sandbox, SandboxOptions, UserKind } from '../../sandbox';
import { CredentialStore } from '../../devkit/engine';
import { createPollTarget, nodeStaticData, runPoll } from '../../devkit/poll';
import type { PollOutcome, PollTarget } from '../../devkit/poll';
import { call, manualSandbox, sendBody, tokenFor } from '../sandbox/helpers';

export const TRIGGER_TYPE = 'test.companionPushTrigger';
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** A manual-clock sandbox, a credential for it, and an active workflow with the trigger. */
export class TriggerFixture {
	readonly credentials = new CredentialStore();
	target!: PollTarget;
	private token?: { value: string; issuedAt: number };

	private constructor(readonly sandbox: Sandbox) {
		const { clientId, clientSecret, refreshToken } = sandbox.orgs.primary;
		this.credentials.add({ baseUrl: sandbox.baseUrl, clientId, clientSecret, refreshToken, accessToken: '', accessTokenRenewAfter: 0 });
	}

	static async start(parameters: IDataObject = {}, options: SandboxOptions = {}): Promise<TriggerFixture> {
		const fixture = new TriggerFixture(await manualSandbox(options));
		fixture.activate(parameters);
		return fixture;
	}

	/** A new active workflow with the trigger (fresh static data unless given). */
	activate(parameters: IDataObject = {}, staticData?: IDataObject): PollTarget {
		this.target = createPollTarget({
			type: TRIGGER_TYPE,
			nodeType: new CompanionPushTrigger(),
			parameters: { events: ['notificationSettled', 'deliveryFailed', 'deliveryOpened'], ...parameters },
			credentials: this.credentials,
			staticData,
		});
		return this.target;
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
		const answer = await call(this.sandbox, 'POST', '/push-notification/send', {
			token: await this.apiToken(),
			body: sendBody(targetUserIds, extra),
		});
		if (answer.status !== 202) throw new Error(`send failed: ${answer.status} ${answer.text}`);
		return answer.body.data.id as string;
	}

	user(kind: UserKind, index = 0): string {
		return this.sandbox.orgs.primary.usersOfKind(kind, index + 1)[index];
	}

	/** Requests the sandbox received since `since` (a requestLog length), per counts() key. */
	callsSince(since: number): Record<string, number> {
		const calls: Record<string, number> = {};
		for (const entry of this.sandbox.requestLog().slice(since)) calls[entry.endpoint] = (calls[entry.endpoint] ?? 0) + 1;
		return calls;
	}

	/** Makes n8n's host clock (Date.now) follow the sandbox's, as real clocks do: the transport
	 * then renews the one-hour token ahead of expiry instead of meeting a 401. Undone by stop(). */
	hostClockFollowsSandbox(): void {
		const clock = this.sandbox.clock;
		this.hostClock = jest.spyOn(Date, 'now').mockImplementation(() => clock.now());
	}

	private hostClock?: jest.SpyInstance<number, []>;

	async stop(): Promise<void> {
		this.hostClock?.mockRestore();
		await this.sandbox.stop();
	}
}

export function ofEvent(items: IDataObject[], event: string): IDataObject[] {
	return items.filter((item) => item.event === event);
}

export function total(calls: Record<string, number>): number {
	return Object.values(calls).reduce((sum, n) => sum + n, 0);
}
