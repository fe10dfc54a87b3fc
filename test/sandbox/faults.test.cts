import { call, MANUAL_CLOCK, SEND, sendBody, tokenFor, useSandbox } from '../harness/index.cts';

describe('sandbox fault injection (spec Errors 5xx and rules 1-2)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20, resetBeforeEach: true });
	let token: string;
	let user: string;
	const post = (extra: Record<string, unknown> = {}) =>
		call(sandbox, 'POST', '/push-notification/send', { token, body: sendBody([user], extra) });
	const sends = () => sandbox.requestLog().filter((entry) => entry.endpoint === SEND);
	const listIds = async () =>
		(await call(sandbox, 'GET', '/push-notification/list', { token })).body.data.notifications.map(
			(item: any) => item.id,
		);
	beforeAll(async () => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		token = await tokenFor(sandbox);
	});

	test('status5xx: the next N matching requests answer the status (503 by default); nothing is registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', times: 2 });
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'status5xx', status: 502 });
		const first = await post();
		expect(first.status).toBe(503);
		expect(first.body.error.code).toBe('platform_error');
		expect((await post()).status).toBe(503);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(502);
		expect(sandbox.notifications()).toEqual([]);
		expect((await post()).status).toBe(202);
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		expect(sandbox.requestLog().filter((entry) => entry.fault === 'status5xx')).toHaveLength(3);
	});

	test('status5xx with afterProcessing: the send IS registered although the answer is 503', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', afterProcessing: true });
		expect((await post()).status).toBe(503);
		const [logged] = sandbox.requestLog().filter((entry) => entry.endpoint === SEND);
		expect(logged.notificationId).toEqual(expect.any(String));
		expect(await listIds()).toEqual([logged.notificationId]);
	});

	test('resetBefore: the connection is destroyed without an answer and nothing is registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		await expect(post()).rejects.toThrow();
		expect(sandbox.notifications()).toEqual([]);
		expect(await listIds()).toEqual([]);
		expect(sandbox.requestLog().find((entry) => entry.endpoint === SEND)).toMatchObject({
			status: 0,
			fault: 'resetBefore',
		});
	});

	test('resetAfter: the connection is destroyed, but the send is registered, delivered and listed', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		await expect(post({ title: 'Lost answer' })).rejects.toThrow();
		const [record] = sandbox.notifications();
		expect(record.title).toBe('Lost answer');
		const [listed] = (await call(sandbox, 'GET', '/push-notification/list', { token })).body.data
			.notifications;
		expect(listed).toMatchObject({ id: record.id, title: 'Lost answer', target_user_ids: [user] });
		await sandbox.clock.advance(5000);
		expect(sandbox.notifications()[0]).toMatchObject({
			status: 'sent',
			stats: expect.objectContaining({ sent: 1 }),
		});
		expect(sandbox.requestLog().find((entry) => entry.endpoint === SEND)).toMatchObject({
			status: 0,
			fault: 'resetAfter',
			notificationId: record.id,
		});
	});

	test('delay: the answer is held delayMs in real time (longer than a client timeout); the send is processed at once', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'delay', delayMs: 400 });
		await expect(
			call(sandbox, 'POST', '/push-notification/send', {
				token,
				body: sendBody([user]),
				signal: AbortSignal.timeout(100),
			}),
		).rejects.toThrow();
		expect(sandbox.notifications()).toHaveLength(1);
		sandbox.addFault({ endpoint: 'GET /user-device/users', kind: 'delay', delayMs: 150 });
		const started = Date.now();
		const held = await call(sandbox, 'GET', '/user-device/users', { token });
		expect(held.status).toBe(200);
		expect(Date.now() - started).toBeGreaterThanOrEqual(140);
	});

	test('trickle: the status and headers at once, then the body a byte per interval; the send is registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'trickle', intervalMs: 5, padBytes: 40 });
		const started = Date.now();
		const response = await fetch(`${sandbox.baseUrl}/push-notification/send`, {
			method: 'POST',
			headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
			body: JSON.stringify(sendBody([user])),
		});
		expect(response.status).toBe(202);
		// Registered before the body went out: the headers came first.
		expect(sandbox.notifications()).toHaveLength(1);
		const text = await response.text();
		expect(text.startsWith(' '.repeat(40))).toBe(true);
		expect(JSON.parse(text).data.id).toBe(sandbox.notifications()[0].id);
		// A byte per 5 ms: the body cannot have come sooner than its length allows.
		expect(Date.now() - started).toBeGreaterThanOrEqual(5 * (text.length - 1));
		expect(sends()[0]).toMatchObject({ status: 202, fault: 'trickle' });
	});

	test('oversized: the real answer padded with JSON whitespace to sizeBytes', async () => {
		const sent = await post();
		sandbox.addFault({ endpoint: 'GET /push-notification/:id', kind: 'oversized', sizeBytes: 3e6 });
		const detail = await call(sandbox, 'GET', `/push-notification/${sent.body.data.id}`, { token });
		expect(detail.status).toBe(200);
		expect(Buffer.byteLength(detail.text)).toBe(3e6);
		expect((detail.body as any).data.notification.id).toBe(sent.body.data.id);
	});

	test('trickle and oversized take only their own options', () => {
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'delay', intervalMs: 5 })).toThrow(
			'only trickle takes intervalMs',
		);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'trickle', sizeBytes: 5 })).toThrow(
			'only oversized takes sizeBytes',
		);
	});

	test('malformedJson: the status is kept, the body is not JSON; the send is registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'malformedJson' });
		const answer = await post();
		expect(answer.status).toBe(202);
		expect(answer.headers.get('content-type')).toMatch(/application\/json/);
		expect(() => JSON.parse(answer.text)).toThrow();
		expect(sandbox.notifications()).toHaveLength(1);
	});

	test('rateLimit: 429 with Retry-After; nothing registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'rateLimit', retryAfterSeconds: 7 });
		const answer = await post();
		expect(answer.status).toBe(429);
		expect(answer.headers.get('retry-after')).toBe('7');
		expect(sandbox.notifications()).toEqual([]);
	});

	test('unauthorized: 401 even for a valid token, logged as a valid token', async () => {
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'unauthorized' });
		const answer = await call(sandbox, 'GET', '/user/list', { token });
		expect(answer.status).toBe(401);
		expect(answer.headers.get('www-authenticate')).toBe('Bearer');
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
		expect(
			sandbox
				.requestLog()
				.filter((entry) => entry.endpoint === 'GET /user/list')
				.map((entry) => [entry.status, entry.authorization]),
		).toEqual([
			[401, 'valid'],
			[200, 'valid'],
		]);
	});

	test('share: a seeded share of matching requests, the same pattern for the same seed', async () => {
		const pattern = async () => {
			await sandbox.reset();
			sandbox.addFault({ endpoint: 'GET /user/list', kind: 'status5xx', share: 0.5, seed: 42 });
			const statuses: number[] = [];
			for (let i = 0; i < 30; i++)
				statuses.push((await call(sandbox, 'GET', '/user/list?limit=1', { token })).status);
			return statuses;
		};
		const first = await pattern();
		expect(await pattern()).toEqual(first);
		const failures = first.filter((status) => status === 503).length;
		expect(failures).toBeGreaterThan(5);
		expect(failures).toBeLessThan(25);
	});

	test('endpoint "*" matches every public endpoint; faults apply oldest first; clearFaults removes them', async () => {
		sandbox.addFault({ endpoint: '*', kind: 'status5xx', status: 500, times: 2 });
		sandbox.addFault({ endpoint: '*', kind: 'rateLimit' });
		expect((await call(sandbox, 'GET', '/user-device/users', { token })).status).toBe(500);
		expect((await call(sandbox, 'POST', '/auth/oauth/v2/refresh', { body: {} })).status).toBe(500);
		expect((await call(sandbox, 'GET', '/push-notification/list', { token })).status).toBe(429);
		sandbox.addFault({ endpoint: '*', kind: 'status5xx', times: 5 });
		sandbox.clearFaults();
		expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
	});

	test('a malformed fault spec is refused with a clear error', () => {
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'explode' as never })).toThrow(
			/invalid fault kind/,
		);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 404 })).toThrow(
			/status/,
		);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'status4xx', status: 503 })).toThrow(
			/invalid fault status: status4xx takes a status from 400 to 499/,
		);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'forbidden', status: 403 })).toThrow(
			/invalid fault status: forbidden takes no status/,
		);
		expect(() => sandbox.addFault({ endpoint: SEND, kind: 'status5xx', skip: -1 })).toThrow(
			/invalid fault skip/,
		);
	});

	test('skip: "the 3rd send only" (skip 2, times 1); requests to other endpoints do not count', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', skip: 2, times: 1 });
		const statuses: number[] = [];
		for (let i = 0; i < 4; i++) {
			expect((await call(sandbox, 'GET', '/user/list', { token })).status).toBe(200);
			statuses.push((await post({ title: `Send ${i + 1}` })).status);
		}
		expect(statuses).toEqual([202, 202, 503, 202]);
		expect(sandbox.notifications().map((record) => record.title)).toEqual([
			'Send 1',
			'Send 2',
			'Send 4',
		]);
		expect(sends().map((entry) => entry.fault ?? null)).toEqual([null, null, 'status5xx', null]);
		expect(
			sandbox.requestLog().filter((entry) => entry.endpoint === 'GET /user/list' && entry.fault),
		).toEqual([]);
		expect((await call(sandbox, 'GET', '/__sandbox/faults')).body.faults).toEqual([]);
	});

	test('skip counts every matching request, also one an older fault took: skip 1 strikes at the 2nd send', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore', times: 1 });
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: 1, times: 2 });
		await expect(post()).rejects.toThrow();
		expect((await post()).status).toBe(403);
		expect((await post()).status).toBe(403);
		expect((await post()).status).toBe(202);
		expect(sends().map((entry) => entry.fault ?? entry.status)).toEqual([
			'resetBefore',
			'forbidden',
			'forbidden',
			202,
		]);
		expect(sandbox.notifications()).toHaveLength(1);
	});

	test('skip with share: the draws start after the skipped requests; a skipping fault is listed as pending', async () => {
		sandbox.addFault({
			endpoint: 'GET /user/list',
			kind: 'status5xx',
			skip: 5,
			share: 1,
			times: 3,
		});
		expect((await call(sandbox, 'GET', '/__sandbox/faults')).body.faults).toEqual([
			{ endpoint: 'GET /user/list', kind: 'status5xx', skip: 5, share: 1, times: 3 },
		]);
		const statuses: number[] = [];
		for (let i = 0; i < 10; i++)
			statuses.push((await call(sandbox, 'GET', '/user/list?limit=1', { token })).status);
		expect(statuses).toEqual([200, 200, 200, 200, 200, 503, 503, 503, 200, 200]);
	});

	test('forbidden: a one-time 403 in the current error shape, before any effect (nothing registered)', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden' });
		const refused = await post();
		expect(refused.status).toBe(403);
		expect(refused.body).toEqual({
			ok: false,
			error: { code: 'forbidden', message: 'The credential lacks permission for this action' },
		});
		expect(sandbox.notifications()).toEqual([]);
		expect(sends()[0]).toMatchObject({ status: 403, fault: 'forbidden' });
		expect(sends()[0].notificationId).toBeUndefined();
		expect((await post()).status).toBe(202);

		sandbox.configure({ errorShape: 'statusMessage' });
		sandbox.addFault({ endpoint: 'POST /push-notification/:id/cancel', kind: 'forbidden' });
		const [registered] = sandbox.notifications();
		const cancel = await call(sandbox, 'POST', `/push-notification/${registered.id}/cancel`, {
			token,
		});
		expect(cancel.status).toBe(403);
		expect(cancel.body).toEqual({
			statusCode: 403,
			error: 'Forbidden',
			message: 'The credential lacks permission for this action',
		});
	});

	test('status4xx: any 400-499 once (400 by default), in the error shape, with nothing registered', async () => {
		const codes: Record<number, string> = {
			400: 'invalid_value',
			404: 'not_found',
			409: 'not_scheduled',
			418: 'client_error',
			422: 'validation_error',
			429: 'rate_limited',
		};
		for (const status of [undefined, 404, 409, 418, 422, 429])
			sandbox.addFault({ endpoint: SEND, kind: 'status4xx', ...(status ? { status } : {}) });
		const answers = [];
		for (let i = 0; i < 6; i++) answers.push(await post());
		expect(answers.map((answer) => answer.status)).toEqual([400, 404, 409, 418, 422, 429]);
		for (const answer of answers) {
			expect(answer.body.ok).toBe(false);
			expect(answer.body.error.code).toBe(codes[answer.status]);
			expect(answer.headers.get('retry-after')).toBeNull(); // a bare 429: the rateLimit kind gives one
		}
		expect(sandbox.notifications()).toEqual([]);
		expect(sends().map((entry) => [entry.fault, entry.notificationId])).toEqual(
			Array(6).fill(['status4xx', undefined]),
		);
		expect((await post()).status).toBe(202);
	});

	test('status4xx 401 carries WWW-Authenticate; a field-less 422 in the detail shape gives the message', async () => {
		sandbox.configure({ errorShape: 'detail' });
		sandbox.addFault({ endpoint: 'GET /user/list', kind: 'status4xx', status: 401 });
		sandbox.addFault({ endpoint: SEND, kind: 'status4xx', status: 422 });
		const unauthorized = await call(sandbox, 'GET', '/user/list', { token });
		expect(unauthorized.status).toBe(401);
		expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer');
		const invalid = await post();
		expect(invalid.status).toBe(422);
		expect(invalid.body).toEqual({ detail: 'A required field is missing or malformed' });
	});

	test('status5xx lasts as long as times says: an outage of 10 outlasts 4 retries, then clears; one send registered', async () => {
		sandbox.addFault({ endpoint: SEND, kind: 'status5xx', status: 503, times: 10 });
		const statuses: number[] = [];
		for (let attempt = 0; attempt < 5; attempt++) statuses.push((await post()).status);
		expect(statuses).toEqual([503, 503, 503, 503, 503]);
		expect((await call(sandbox, 'GET', '/__sandbox/faults')).body.faults).toHaveLength(1);
		for (let attempt = 0; attempt < 5; attempt++) statuses.push((await post()).status);
		expect(statuses.filter((status) => status === 503)).toHaveLength(10);
		expect((await post()).status).toBe(202);
		expect(sandbox.notifications()).toHaveLength(1);
		expect((await call(sandbox, 'GET', '/__sandbox/faults')).body.faults).toEqual([]);
	});

	test('the new fields over the admin API: skip, status4xx, forbidden; a bad one answers 400', async () => {
		const added = await call(sandbox, 'POST', '/__sandbox/faults', {
			body: [
				{ endpoint: SEND, kind: 'status4xx', status: 404, skip: 1 },
				{ endpoint: SEND, kind: 'forbidden', skip: 2 },
			],
		});
		expect(added.status).toBe(200);
		expect(added.body.faults).toHaveLength(2);
		expect([
			(await post()).status,
			(await post()).status,
			(await post()).status,
			(await post()).status,
		]).toEqual([202, 404, 403, 202]);
		const refused = await call(sandbox, 'POST', '/__sandbox/faults', {
			body: { endpoint: SEND, kind: 'status4xx', status: 500 },
		});
		expect(refused.status).toBe(400);
		expect(refused.body.error.message).toMatch(/status4xx takes a status from 400 to 499/);
	});
});
