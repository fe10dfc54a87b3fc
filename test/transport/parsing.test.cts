/**
 * Tolerant parsing of what the spec leaves open: every list shape of GET /push-notification/list,
 * every error body shape, and an unknown shape failing with a message that shows what came back.
 */
import {
	getNotification,
	listActiveUserIds,
	listNotifications,
	listUsersPage,
	parseErrorBody,
	sendNotification,
} from '../../nodes/CompanionPush/transport';
import type { ErrorShape, ListShape } from '../../sandbox/index.cts';
import {
	errorInNode,
	expectNoSecret,
	fakeCredential,
	fakeStore,
	logOf,
	secretsOf,
	SEND,
	SEND_LIST,
	startFakeApi,
	storeFor,
	tokensSeen,
	TRANSPORT_SANDBOX,
	USER_LIST,
	useSandbox,
	valueInNode,
	type CredentialStore,
} from '../harness/index.cts';
import type { FakeApi } from '../harness/index.cts';

const LIST_SHAPES: ListShape[] = [
	'bareArray',
	'dataArray',
	'dataItems',
	'dataNotifications',
	'envelope',
];
const ERROR_SHAPES: ErrorShape[] = ['okFalse', 'detail', 'statusMessage', 'plainText'];

describe('tolerant parsing against the sandbox', () => {
	const sandbox = useSandbox({ ...TRANSPORT_SANDBOX, seedUsers: 40 });
	let store: CredentialStore;
	let tokens: () => string[];
	let sentIds: string[];
	beforeAll(async () => {
		store = storeFor(sandbox);
		tokens = tokensSeen(store);
		const users = sandbox.orgs.primary.usersOfKind('onePhone', 2);
		sentIds = await valueInNode(store, async (context) => {
			const ids: string[] = [];
			for (let n = 1; n <= 150; n++) {
				ids.push(
					(
						await sendNotification(context, {
							title: `Send ${n}`,
							body: 'Body',
							target_user_ids: users,
						})
					).id,
				);
			}
			return ids;
		});
	});
	afterEach(() => {
		sandbox.configure({ listShape: 'envelope', errorShape: 'okFalse' });
		sandbox.clearFaults();
	});

	test.each(LIST_SHAPES)(
		'list shape %s: all 150 sends, newest first, with their fields',
		async (shape) => {
			sandbox.setListShape(shape);
			const before = logOf(sandbox, SEND_LIST).length;
			const sends = await valueInNode(store, (context) => listNotifications(context));

			expect(sends.map((send) => send.id)).toEqual([...sentIds].reverse());
			expect(sends[0]).toMatchObject({
				title: 'Send 150',
				body: 'Body',
				status: expect.any(String),
			});
			expect(sends[0].target_user_ids).toHaveLength(2);
			// Shapes with a total stop on it (100 + 50); the others read until an empty page.
			const pages = logOf(sandbox, SEND_LIST).slice(before);
			const withTotal =
				shape === 'envelope' || shape === 'dataItems' || shape === 'dataNotifications';
			expect(pages.map((entry) => entry.query.skip)).toEqual(
				withTotal ? ['0', '100'] : ['0', '100', '150'],
			);
			expect(pages.every((entry) => entry.status === 200)).toBe(true);
		},
	);

	test.each(LIST_SHAPES)('list shape %s: max stops early with one page', async (shape) => {
		sandbox.setListShape(shape);
		const before = logOf(sandbox, SEND_LIST).length;
		const sends = await valueInNode(store, (context) => listNotifications(context, { max: 5 }));
		expect(sends.map((send) => send.title)).toEqual([
			'Send 150',
			'Send 149',
			'Send 148',
			'Send 147',
			'Send 146',
		]);
		expect(logOf(sandbox, SEND_LIST).length - before).toBe(1);
	});

	/** The message the API put in an error body of each shape. */
	function apiMessage(shape: ErrorShape, text: string): string {
		if (shape === 'plainText') return text;
		const body = JSON.parse(text);
		if (shape === 'okFalse') return body.error.message;
		if (shape === 'statusMessage') return body.message;
		return typeof body.detail === 'string' ? body.detail : body.detail[0].msg;
	}

	async function rawAnswer(path: string, init: RequestInit = {}) {
		const response = await fetch(`${sandbox.baseUrl}${path}`, {
			...init,
			headers: {
				'content-type': 'application/json',
				authorization: `Bearer ${store.get().data.accessToken}`,
			},
		});
		return { status: response.status, text: await response.text() };
	}

	test.each(ERROR_SHAPES)(
		'error shape %s: a 422 carries the API message and the field to fix',
		async (shape) => {
			sandbox.setErrorShape(shape);
			const raw = await rawAnswer('/push-notification/send', {
				method: 'POST',
				body: JSON.stringify({ title: 'T', body: 'B', target_user_ids: [] }),
			});
			expect(raw.status).toBe(422);
			const message = apiMessage(shape, raw.text);
			expect(message).toMatch(/target_user_ids/);

			const before = logOf(sandbox, SEND).length;
			const error = await errorInNode(store, (context) =>
				sendNotification(context, { title: 'T', body: 'B', target_user_ids: [] }),
			);
			expect(logOf(sandbox, SEND).length - before).toBe(1);
			expect(error.httpCode).toBe('422');
			const fieldNamed = shape === 'okFalse' || shape === 'detail';
			expect(error.message).toBe(
				`Sending the notification failed with HTTP 422: ${message}${fieldNamed ? ' (field: target_user_ids)' : ''}`,
			);
			expect(error.description).toMatch(/correct the field named above/);
		},
	);

	test.each(ERROR_SHAPES)('error shape %s: a 404 carries the API message', async (shape) => {
		sandbox.setErrorShape(shape);
		const raw = await rawAnswer('/push-notification/no-such-send');
		expect(raw.status).toBe(404);
		const message = apiMessage(shape, raw.text);
		expect(message.length).toBeGreaterThan(3);

		const error = await errorInNode(store, (context) => getNotification(context, 'no-such-send'));
		expect(error.httpCode).toBe('404');
		expect(error.message).toBe(
			`Reading notification no-such-send failed with HTTP 404: ${message}`,
		);
		expect(error.description).toMatch(/does not exist/);
	});

	test('malformed JSON on every try: an error that shows what came back', async () => {
		sandbox.addFault({ endpoint: USER_LIST, kind: 'malformedJson', times: 4 });
		const before = logOf(sandbox, USER_LIST).length;
		const error = await errorInNode(store, (context) => listUsersPage(context, 0, 3));
		const calls = logOf(sandbox, USER_LIST).slice(before);
		expect(calls.map((entry) => entry.fault)).toEqual([
			'malformedJson',
			'malformedJson',
			'malformedJson',
			'malformedJson',
		]);
		expect(error.message).toBe('Reading the user list: the API answered with an unexpected body');
		// Half of a JSON array of users: it starts like one.
		expect(error.description).toMatch(/^What came back: \[\{"id":"/);
		expectNoSecret(error, [...secretsOf(sandbox), ...tokens()]);
	});
});

describe('unknown shapes (a server answering what the spec does not describe)', () => {
	let api: FakeApi;
	let answer: () => { status?: number; body: unknown; raw?: boolean };
	beforeAll(async () => {
		api = await startFakeApi(() => answer());
	});
	afterAll(async () => {
		await api.stop();
	});
	test.each([
		['the list of sends', () => listNotificationsOf(), 'Reading the list of sends', { foo: 1 }],
		['the user list', () => usersOf(), 'Reading the user list', { foo: 1 }],
		[
			'the active users',
			() => activeOf(),
			'Reading the users with an active app',
			{ ok: true, data: { users: ['a'] } },
		],
		[
			'a notification',
			() => detailOf(),
			'Reading notification n1',
			{ ok: true, data: { id: 'n1' } },
		],
	])(
		'%s answered with an unknown shape: one request, an error showing the body',
		async (_what, call, action, body) => {
			answer = () => ({ body });
			const store = fakeStore(api);
			const before = api.requests.filter(
				(request) => request.path !== '/auth/oauth/v2/refresh',
			).length;
			const error = await errorInNode(store, call());
			const after = api.requests.filter(
				(request) => request.path !== '/auth/oauth/v2/refresh',
			).length;
			expect(after - before).toBe(1);
			expect(error.constructor.name).toBe('NodeApiError');
			expect(error.message).toBe(`${action}: the API answered with an unexpected body`);
			expect(error.description).toBe(`What came back: ${JSON.stringify(body)}`);
			expectNoSecret(error, [
				fakeCredential(api).clientSecret,
				fakeCredential(api).refreshToken,
				api.accessToken,
			]);
		},
	);

	test('a very long unknown body is shown cut short, not whole', async () => {
		const body = { foo: 'x'.repeat(5000) };
		answer = () => ({ body });
		const error = await errorInNode(fakeStore(api), listNotificationsOf());
		expect(error.description.length).toBeLessThan(400);
		expect(error.description).toMatch(/^What came back: \{"foo":"xxx/);
		expect(error.description).toMatch(/…$/);
	});

	test('a send accepted with an unknown body is an error showing it, and is not sent again', async () => {
		answer = () => ({ status: 202, body: { accepted: true } });
		const before = api.requests.filter(
			(request) => request.path === '/push-notification/send',
		).length;
		const error = await errorInNode(fakeStore(api), (context) =>
			sendNotification(context, { title: 'T', body: 'B', target_user_ids: ['u1'] }),
		);
		expect(
			api.requests.filter((request) => request.path === '/push-notification/send').length - before,
		).toBe(1);
		expect(error.message).toBe(
			'Sending the notification (accepted, not re-sent): the API answered with an unexpected body',
		);
		expect(error.description).toMatch(
			/^What came back: \{"accepted":true\} The API accepted it, so it went out and is not sent again; .* Check the list of sends \(Notification > Get Many\) for a send titled "T" to 1 recipient\(s\) created since .* for its id\.$/,
		);
		// Carried as accepted: the caller records it as sent, so no later try sends it again.
		expect(error.context.sendOutcome).toBe('accepted');
	});

	const listNotificationsOf = () => (context: Parameters<typeof listNotifications>[0]) =>
		listNotifications(context);
	const usersOf = () => (context: Parameters<typeof listUsersPage>[0]) =>
		listUsersPage(context, 0, 10);
	const activeOf = () => (context: Parameters<typeof listActiveUserIds>[0]) =>
		listActiveUserIds(context);
	const detailOf = () => (context: Parameters<typeof getNotification>[0]) =>
		getNotification(context, 'n1');
});

describe('parseErrorBody reads every plausible error body', () => {
	test.each([
		[
			{
				ok: false,
				error: { code: 'validation_error', message: 'title is required', field: 'title' },
			},
			{ message: 'title is required', field: 'title' },
		],
		[
			{ detail: [{ loc: ['body', 'target_user_ids'], msg: 'must not be empty', type: 'x' }] },
			{ message: 'must not be empty', field: 'target_user_ids' },
		],
		[
			{ detail: [{ loc: ['query', 'limit'], msg: 'too big' }] },
			{ message: 'too big', field: 'limit' },
		],
		[{ detail: 'Not found' }, { message: 'Not found', field: undefined }],
		[
			{ statusCode: 404, error: 'Not Found', message: 'Notification x not found' },
			{ message: 'Notification x not found', field: undefined },
		],
		[
			{ errors: [{ field: 'body', message: 'body is required' }] },
			{ message: 'body is required', field: 'body' },
		],
		[
			{ message: 'bad', field: 'image_url' },
			{ message: 'bad', field: 'image_url' },
		],
		['Service temporarily unavailable', { message: 'Service temporarily unavailable' }],
		['{"error":{"message":"json in text"}}', { message: 'json in text', field: undefined }],
		['', {}],
		[null, {}],
		[{ foo: 1 }, { message: undefined, field: undefined }],
	])('%j', (body, expected) => {
		expect(parseErrorBody(body)).toEqual(expected);
	});
});
