import {
	call,
	detail,
	MANUAL_CLOCK,
	send,
	sendBody,
	tokenFor,
	useSandbox,
} from '../harness/index.cts';

const SEND = 'POST /push-notification/send';

/** Polls until `check` holds (a state, never a fixed time). */
async function until(check: () => boolean): Promise<void> {
	while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * When a send is registered relative to its answer: after a 5xx that came at once (registerAfterMs),
 * or at once with the 202 held back (the existing delay fault).
 */
describe('sandbox late registration (registerAfterMs) and slow 202 (delay)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20 });
	let token: string;
	let users: string[];
	const post = (extra: Record<string, unknown> = {}) =>
		call(sandbox, 'POST', '/push-notification/send', { token, body: sendBody([users[0]], extra) });
	const listIds = async () =>
		(await call(sandbox, 'GET', '/push-notification/list', { token })).body.data.notifications.map(
			(item: any) => item.id,
		);
	const sendEntries = () => sandbox.requestLog().filter((entry) => entry.endpoint === SEND);
	beforeAll(async () => {
		users = sandbox.orgs.primary.usersOfKind('onePhone', 3);
	});
	beforeEach(async () => {
		await sandbox.reset();
		token = await tokenFor(sandbox);
	});

	test('a 504 at once, the send registered registerAfterMs later with that time as created_at', async () => {
		sandbox.addFault({
			endpoint: SEND,
			kind: 'status5xx',
			status: 504,
			afterProcessing: true,
			registerAfterMs: 60_000,
		});
		const start = sandbox.clock.now();
		const answer = await post({ title: 'Late' });
		expect(answer.status).toBe(504);
		const lateId = sendEntries()[0].notificationId as string;
		expect(lateId).toEqual(expect.any(String));
		// Not registered yet: neither the list nor the detail shows it.
		expect(await listIds()).toEqual([]);
		expect((await call(sandbox, 'GET', `/push-notification/${lateId}`, { token })).status).toBe(
			404,
		);
		// The internal view already counts it (it will notify), with its future created_at.
		expect(sandbox.notifications()).toEqual([
			expect.objectContaining({ id: lateId, created_at: new Date(start + 60_000).toISOString() }),
		]);
		expect(sandbox.deliveriesByUser().get(users[0])).toBe(1);

		await sandbox.clock.advance(1000);
		const between = await send(sandbox, token, [users[1]]);
		expect(await listIds()).toEqual([between.id]);
		await sandbox.clock.advance(58_999);
		expect(await listIds()).toEqual([between.id]);
		await sandbox.clock.advance(1);
		// Registered now, so it is the newest send although it was asked for first.
		expect(await listIds()).toEqual([lateId, between.id]);
		const { notification } = await detail(sandbox, token, lateId);
		expect(notification).toMatchObject({
			title: 'Late',
			status: 'sending',
			created_at: new Date(start + 60_000).toISOString(),
			sent_at: new Date(start + 60_000).toISOString(),
		});
		await sandbox.clock.advance(sandbox.settings().deliveryMs);
		expect((await detail(sandbox, token, lateId)).notification).toMatchObject({
			status: 'sent',
			stats: expect.objectContaining({ sent: 1 }),
		});
	});

	test('afterProcessing without registerAfterMs still registers at once (the default)', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 504, afterProcessing: true });
		expect((await post()).status).toBe(504);
		expect(await listIds()).toEqual([sendEntries()[0].notificationId]);
	});

	test('resetAfter with registerAfterMs: the connection is reset at once, the send registered later', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', registerAfterMs: 30_000 });
		await expect(post()).rejects.toThrow();
		expect(await listIds()).toEqual([]);
		await sandbox.clock.advance(30_000);
		expect(await listIds()).toEqual([sendEntries()[0].notificationId]);
	});

	test('registerAfterMs and listDelayMs add up: listed listDelayMs after the late registration', async () => {
		sandbox.addFault({
			endpoint: SEND,
			kind: 'status5xx',
			afterProcessing: true,
			registerAfterMs: 10_000,
			listDelayMs: 5000,
		});
		expect((await post()).status).toBe(503);
		const lateId = sendEntries()[0].notificationId as string;
		await sandbox.clock.advance(10_000);
		expect((await detail(sandbox, token, lateId)).notification.id).toBe(lateId);
		expect(await listIds()).toEqual([]);
		await sandbox.clock.advance(5000);
		expect(await listIds()).toEqual([lateId]);
	});

	test('scheduled_at is compared with the registration time: due by then, the send goes out at once', async () => {
		sandbox.addFault({
			endpoint: SEND,
			kind: 'status5xx',
			afterProcessing: true,
			registerAfterMs: 60_000,
		});
		const scheduledAt = new Date(sandbox.clock.now() + 30_000).toISOString();
		expect((await post({ scheduled_at: scheduledAt })).status).toBe(503);
		await sandbox.clock.advance(60_000);
		const [record] = sandbox.notifications();
		expect(record).toMatchObject({ status: 'sending', scheduled_at: null });
	});

	test('registerAfterMs is refused where no send would be registered later', () => {
		expect(() =>
			sandbox.addFault({ endpoint: SEND, kind: 'status5xx', registerAfterMs: 5 }),
		).toThrow(
			/invalid fault registerAfterMs: only resetAfter and status5xx with afterProcessing: true take a registerAfterMs/,
		);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'delay', registerAfterMs: 5 })).toThrow(
			/registerAfterMs/,
		);
		expect(() =>
			sandbox.addFault({ endpoint: 'GET /user/list', kind: 'resetAfter', registerAfterMs: 5 }),
		).toThrow(/registerAfterMs acts on sends only/);
		expect(() =>
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter', registerAfterMs: -1 }),
		).toThrow(/registerAfterMs/);
	});

	test('over the admin HTTP API: POST /__sandbox/faults with registerAfterMs', async () => {
		const added = await call(sandbox, 'POST', '/__sandbox/faults', {
			body: {
				endpoint: SEND,
				kind: 'status5xx',
				status: 504,
				afterProcessing: true,
				registerAfterMs: 2000,
			},
		});
		expect(added.status).toBe(200);
		expect(added.body.faults).toEqual([
			{
				endpoint: SEND,
				kind: 'status5xx',
				status: 504,
				afterProcessing: true,
				registerAfterMs: 2000,
			},
		]);
		expect((await post()).status).toBe(504);
		expect(await listIds()).toEqual([]);
		await call(sandbox, 'POST', '/__sandbox/clock/advance', { body: { ms: 2000 } });
		expect(await listIds()).toHaveLength(1);
		expect(
			(
				await call(sandbox, 'POST', '/__sandbox/faults', {
					body: { endpoint: SEND, kind: 'status5xx', registerAfterMs: 1 },
				})
			).status,
		).toBe(400);
	});

	test('slow 202 (delay fault): the send is registered, listed and readable while its 202 is held; its Date tells when it left', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'delay', delayMs: 3000 });
		let answered = false;
		const held = post({ title: 'Slow' }).then((answer) => {
			answered = true;
			return answer;
		});
		await until(() => sendEntries()[0]?.notificationId !== undefined);
		const id = sendEntries()[0].notificationId as string;
		const arrival = sandbox.clock.now();
		expect(await listIds()).toEqual([id]);
		expect((await detail(sandbox, token, id)).notification).toMatchObject({
			title: 'Slow',
			created_at: new Date(arrival).toISOString(),
		});
		await sandbox.clock.advance(60_000); // while the answer is held
		expect(answered).toBe(false);
		const answer = await held;
		expect(answer.status).toBe(202);
		expect(answer.body.data.id).toBe(id);
		// The Date header is written when the answer leaves, not when the request arrived.
		expect(answer.headers.get('date')).toBe(new Date(arrival + 60_000).toUTCString());
		expect(sandbox.notifications()).toHaveLength(1);
	});
});
