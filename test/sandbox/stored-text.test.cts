import { call, detail, MANUAL_CLOCK, send, tokenFor, useSandbox } from '../harness/index.cts';

/**
 * The record table says title and body are "As sent" (the default). These switches model an API
 * that changes text when it stores it, so a client matching its request against the list or the
 * detail by text finds no equal record.
 */
describe('sandbox stored text: storageTrimsText, storedTitleMaxLength, storedBodyMaxLength', () => {
	const sandbox = useSandbox({ ...MANUAL_CLOCK, seedUsers: 20 });
	let token: string;
	let user: string;
	const listed = async () =>
		(await call(sandbox, 'GET', '/push-notification/list', { token })).body.data.notifications[0];
	/** The text as the list, the detail and the internal view show it. */
	const shownTexts = async (id: string) => {
		const element = await listed();
		const record = (await detail(sandbox, token, id)).notification;
		const [internal] = sandbox.notifications();
		return [element, record, internal].map(({ title, body }) => ({ title, body }));
	};
	beforeAll(async () => {
		user = sandbox.orgs.primary.usersOfKind('onePhone', 1)[0];
	});
	beforeEach(async () => {
		await sandbox.reset();
		token = await tokenFor(sandbox);
	});

	test('by default title and body are stored as sent, white space and length included', async () => {
		const title = `  ${'T'.repeat(80)}\n`;
		const { id } = await send(sandbox, token, [user], { title, body: ' body ' });
		expect(await shownTexts(id)).toEqual(Array(3).fill({ title, body: ' body ' }));
	});

	test('storageTrimsText: surrounding white space of title and body is dropped, inner space kept', async () => {
		sandbox.configure({ storageTrimsText: true });
		const { id } = await send(sandbox, token, [user], {
			title: '\t Shift  change \n',
			body: '  Starts at 9.  ',
		});
		expect(await shownTexts(id)).toEqual(
			Array(3).fill({ title: 'Shift  change', body: 'Starts at 9.' }),
		);
	});

	test('storedTitleMaxLength / storedBodyMaxLength: longer text is stored cut, with no error, counted in characters', async () => {
		sandbox.configure({ storedTitleMaxLength: 5, storedBodyMaxLength: 8 });
		const answer = await call(sandbox, 'POST', '/push-notification/send', {
			token,
			body: { title: '😀😀😀😀😀😀😀', body: 'Exactly8', target_user_ids: [user] },
		});
		expect(answer.status).toBe(202);
		expect(await shownTexts(answer.body.data.id)).toEqual(
			Array(3).fill({ title: '😀😀😀😀😀', body: 'Exactly8' }),
		);
		const longBody = await send(sandbox, token, [user], { title: 'Short', body: 'Nine char' });
		expect((await detail(sandbox, token, longBody.id)).notification).toMatchObject({
			title: 'Short',
			body: 'Nine cha',
		});
	});

	test('the trim comes before the cut; the log keeps the body as sent', async () => {
		sandbox.configure({ storageTrimsText: true, storedTitleMaxLength: 4 });
		const { id } = await send(sandbox, token, [user], { title: '   Shift change' });
		expect((await detail(sandbox, token, id)).notification.title).toBe('Shif');
		const [logged] = sandbox
			.requestLog()
			.filter((entry) => entry.endpoint === 'POST /push-notification/send');
		expect((logged.body as any).title).toBe('   Shift change');
	});

	test('an enforced maxTitleLength still refuses first (400, nothing stored)', async () => {
		sandbox.configure({ maxTitleLength: 10, storedTitleMaxLength: 4 });
		const refused = await call(sandbox, 'POST', '/push-notification/send', {
			token,
			body: { title: 'Eleven char', body: 'b', target_user_ids: [user] },
		});
		expect(refused.status).toBe(400);
		expect(sandbox.notifications()).toEqual([]);
	});

	test('over the admin HTTP API; bad values refused naming the setting', async () => {
		const changed = await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { storageTrimsText: true, storedTitleMaxLength: 3 },
		});
		expect(changed.body.settings).toMatchObject({
			storageTrimsText: true,
			storedTitleMaxLength: 3,
			storedBodyMaxLength: null,
		});
		const { id } = await send(sandbox, token, [user], { title: ' Hello ' });
		expect((await listed()).title).toBe('Hel');
		expect((await detail(sandbox, token, id)).notification.title).toBe('Hel');
		const refused = await call(sandbox, 'POST', '/__sandbox/settings', {
			body: { storedBodyMaxLength: 0 },
		});
		expect(refused.status).toBe(400);
		expect(refused.body.error.message).toMatch(/storedBodyMaxLength/);
		expect(() => sandbox.configure({ storageTrimsText: 'yes' as never })).toThrow(
			/storageTrimsText/,
		);
	});
});
