import { ERROR_SHAPES, type ErrorShape } from '../../sandbox/index.cts';
import { call, MANUAL_CLOCK, sendBody, tokenFor, useSandbox } from '../harness/index.cts';

describe('sandbox error bodies (spec Errors rule 3: shape not shown; one documented default, switchable)', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20 });
	let token: string;
	beforeAll(async () => {
		token = await tokenFor(sandbox);
	});
	afterEach(() => sandbox.setErrorShape('okFalse'));

	const missingTitle = () => {
		const body: Record<string, unknown> = sendBody(sandbox.orgs.primary.userIds.slice(0, 1));
		delete body.title;
		return call(sandbox, 'POST', '/push-notification/send', { token, body });
	};

	test('default okFalse: {ok: false, error: {code, message, field}} with a JSON content type', async () => {
		const answer = await missingTitle();
		expect(answer.status).toBe(422);
		expect(answer.headers.get('content-type')).toMatch(/application\/json/);
		expect(answer.body).toEqual({
			ok: false,
			error: { code: 'validation_error', message: 'title is required', field: 'title' },
		});
		const notFound = await call(sandbox, 'GET', '/push-notification/missing', { token });
		expect(notFound.body).toEqual({
			ok: false,
			error: { code: 'not_found', message: 'Push notification missing not found' },
		});
	});

	test('detail (FastAPI-like): 422 and field errors -> detail array with loc; others -> detail string', async () => {
		sandbox.setErrorShape('detail');
		const answer = await missingTitle();
		expect(answer.body).toEqual({
			detail: [{ loc: ['body', 'title'], msg: 'title is required', type: 'validation_error' }],
		});
		const badImage = await call(sandbox, 'POST', '/push-notification/send', {
			token,
			body: sendBody(sandbox.orgs.primary.userIds.slice(0, 1), {
				image_url: 'http://x.example/a.png',
			}),
		});
		expect(badImage.status).toBe(400);
		expect(badImage.body.detail[0].loc).toEqual(['body', 'image_url']);
		const unauthorized = await call(sandbox, 'GET', '/user/list');
		expect(unauthorized.status).toBe(401);
		expect(unauthorized.body).toEqual({ detail: expect.stringMatching(/Bearer token missing/) });
	});

	test('statusMessage (NestJS-like): {statusCode, error, message}', async () => {
		sandbox.setErrorShape('statusMessage');
		expect((await missingTitle()).body).toEqual({
			statusCode: 422,
			error: 'Unprocessable Entity',
			message: 'title is required',
		});
	});

	test('plainText: a text/plain body holding the message', async () => {
		sandbox.setErrorShape('plainText');
		const answer = await missingTitle();
		expect(answer.headers.get('content-type')).toMatch(/text\/plain/);
		expect(answer.text).toBe('title is required');
	});

	test.each(ERROR_SHAPES.map((shape) => [shape]))(
		'shape %s names the field to correct in a 422',
		async (shape) => {
			sandbox.setErrorShape(shape as ErrorShape);
			expect((await missingTitle()).text).toContain('title');
		},
	);

	test('an unknown public endpoint answers 404 in the chosen shape', async () => {
		const answer = await call(sandbox, 'GET', '/push-notifications', { token });
		expect(answer.status).toBe(404);
		expect(answer.body.error.message).toBe('No endpoint GET /push-notifications');
		expect(sandbox.counts()['GET /push-notifications']).toBe(1);
	});

	test('errors never echo a secret or a token', async () => {
		const { primary } = sandbox.orgs;
		const wrong = await call(sandbox, 'POST', '/auth/oauth/v2/refresh', {
			body: {
				client_id: primary.clientId,
				client_secret: 'cps_guess',
				refresh_token: primary.refreshToken,
			},
		});
		expect(wrong.text).not.toContain(primary.refreshToken);
		expect(wrong.text).not.toContain('cps_guess');
		const expired = await call(sandbox, 'GET', '/user/list', { token: 'cpa_some_token' });
		expect(expired.text).not.toContain('cpa_some_token');
	});
});
