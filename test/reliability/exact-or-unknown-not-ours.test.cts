/**
 * "Not ours" needs proof as strong as "ours": after a lost answer, a listed send that differs from
 * ours only the way the spec lets the API differ (a text cut by UTF-16 units, user IDs shown in lower
 * case, recipients outside the organization left out of `targeted_users`) is ours or "unknown",
 * never a reason to send again; a canceled send is never ours, and a send with another title is
 * still another send. Each run goes through n8n's engine against the sandbox, with a send of this
 * process made after the loss (runWithLaterSend): once listed it proves ours absent, so a send
 * wrongly taken for another would be sent again. Who was notified is counted from the request log.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	call,
	jsonOf,
	MESSAGE,
	registeredSends,
	runOnce,
	runWithLaterSend,
	SEND,
	sendAsAnotherClient,
	sendRun,
	tokenFor,
	useKeyedRuns,
} from '../harness/index.cts';

describe('exact or unknown: a difference the API may make is no difference', () => {
	const keyedRuns = useKeyedRuns();
	const { sandbox } = keyedRuns;
	let users: string[];
	beforeAll(() => ({ users } = keyedRuns));

	/** The sends registered for a user, in order. */
	const sendsTo = (userId: string) =>
		registeredSends(sandbox).filter((send) => send.userIds.includes(userId));

	test('a title the API cut by UTF-16 units inside an emoji, after it kept a title as long (in characters) whole: found, sent once', async () => {
		sandbox.configure({ storedTitleMaxLength: 20, storedTextCutsBy: 'utf16Units' });
		// Sends of ours the list shows: one cut to 20 units, one of 19 characters kept whole.
		await runOnce(
			sendRun(sandbox, [{ userId: users[1] }], {
				title: 'Shift change for the night team of Saturday',
			}),
		);
		await runOnce(sendRun(sandbox, [{ userId: users[2] }], { title: 'Shift change at 9am' }));
		// 19 characters, 21 UTF-16 units: stored as its first 20 units, half of the last emoji kept.
		const title = 'Shift change now 🚨🚨';
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		const { result } = await runWithLaterSend(
			sandbox,
			sendRun(sandbox, [{ userId: users[0] }], { title }),
			users[5],
		);
		const [item] = jsonOf(result.items);

		const ours = sendsTo(users[0]);
		expect(ours).toHaveLength(1);
		expect(sandbox.notifications().find((send) => send.id === ours[0].id)?.title).toBe(
			title.slice(0, 20),
		);
		expect(item).toMatchObject({ id: ours[0].id, recoveredAfter: 'ECONNRESET' });
	});

	test('user IDs sent in upper case, shown by the API in lower case: found, sent once', async () => {
		sandbox.configure({ userIdsShownLowerCase: true });
		const upperCase = users[0].toUpperCase();
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		const { result } = await runWithLaterSend(
			sandbox,
			sendRun(sandbox, [{ userId: upperCase }]),
			users[5],
		);
		const [item] = jsonOf(result.items);

		const ours = sendsTo(upperCase);
		expect(ours).toHaveLength(1);
		expect(sandbox.notifications().find((send) => send.id === ours[0].id)?.deliveries).toEqual([
			expect.objectContaining({ user_id: users[0] }),
		]);
		expect(item).toMatchObject({ id: ours[0].id, recoveredAfter: 'ECONNRESET' });
	});

	test('a recipient outside the organization, not counted in targeted_users, a list without recipients: "unknown", sent once', async () => {
		// Delivered at once: the detail shows the delivery entries of the one member.
		sandbox.configure({
			targetedUsersCount: 'organizationMembers',
			listOmitsFields: ['target_user_ids'],
			deliveryMs: 0,
		});
		const outsider = sandbox.orgs.secondary.usersOfKind('onePhone', 1)[0];
		sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
		const { result } = await runWithLaterSend(
			sandbox,
			sendRun(sandbox, [{ userId: [users[0], outsider] }]),
			users[5],
		);
		const [item] = jsonOf(result.items);

		expect(sendsTo(users[0])).toHaveLength(1);
		// One user of two shown and counted: the other may be outside the organization, or the send
		// another one; nothing proves either.
		expect(item.error).toBe(
			'Sending the notification: the outcome is unknown (ECONNRESET), so it was not sent again',
		);
		expect(item.errorDescription).toContain(
			`the list holds a send that could be it, but only with some of its recipients`,
		);
		expect(item.errorDescription).toContain(sendsTo(users[0])[0].id);
	});
});

describe('exact or unknown: what is not ours stays not ours', () => {
	const keyedRuns = useKeyedRuns();
	const { sandbox } = keyedRuns;
	let users: string[];
	beforeAll(() => ({ users } = keyedRuns));

	const sendsTo = (userId: string) =>
		registeredSends(sandbox).filter((send) => send.userIds.includes(userId));

	test.each<[string, IDataObject]>([
		['', {}],
		[' (a list without statuses: the detail tells)', { listOmitsFields: ['status'] }],
	])(
		'an identical Schedule another client made and canceled, ours reset before reaching the API%s: never taken for ours, ours is scheduled once',
		async (_, settings) => {
			sandbox.configure(settings);
			const at = new Date(Date.now() + 3_600_000).toISOString();
			const canceled = await sendAsAnotherClient(sandbox, [users[0]], {
				...MESSAGE,
				scheduled_at: at,
			});
			const token = await tokenFor(sandbox);
			expect(
				(await call(sandbox, 'POST', `/push-notification/${canceled}/cancel`, { token })).status,
			).toBe(200);
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			const { result } = await runWithLaterSend(
				sandbox,
				sendRun(sandbox, [{ userId: users[0] }], { operation: 'schedule', scheduledAt: at }),
				users[5],
			);
			const [item] = jsonOf(result.items);

			const [, ours] = sendsTo(users[0]);
			expect(item.id).not.toBe(canceled);
			expect(item).toMatchObject({ id: ours.id, status: 'scheduled' });
			expect(sendsTo(users[0])).toHaveLength(2);
		},
	);

	test('a send with another title a moment before, ours reset before reaching the API: not ours, so ours is sent once', async () => {
		const theirs = await sendAsAnotherClient(sandbox, [users[0]], {
			...MESSAGE,
			title: 'Road closure',
		});
		sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
		const { result } = await runWithLaterSend(
			sandbox,
			sendRun(sandbox, [{ userId: users[0] }]),
			users[5],
		);
		const [item] = jsonOf(result.items);

		const [, ours] = sendsTo(users[0]);
		expect(ours.title).toBe(MESSAGE.title);
		expect(item.id).toBe(ours.id);
		expect(item.id).not.toBe(theirs);
		expect(sendsTo(users[0])).toHaveLength(2);
	});
});
