/**
 * The attribution of the randomized run beside another client of the organization: that client's
 * sends are no send of the node (they are never in the request log the attribution reads), so an
 * item that names one of them as its own is caught.
 */
import type { NodeRunResult } from '../../devkit/engine.cts';
import { Attribution, errorsOf, InvariantViolation } from './index.cts';

const intended = {
	event: 'w1 i0',
	title: 'R1 w1 i0',
	body: 'Your shift starts at 9:00.',
	userIds: ['u1'],
};
const runNaming = (id: string) =>
	({
		outputs: [[{ json: { id }, pairedItem: { item: 0 } }]],
		items: [],
	}) as unknown as NodeRunResult;

describe('attribution beside another client of the organization', () => {
	test('an item naming its own registered send is attributed', () => {
		const attribution = new Attribution();
		attribution.attribute(
			[{ id: 'node-send', title: intended.title, body: intended.body, recipients: ['u1'] }],
			[intended],
		);
		expect(() =>
			attribution.checkOutputs(runNaming('node-send'), () => intended, { informative: true }),
		).not.toThrow();
	});

	test("an item naming another client's send as its own is caught", () => {
		const attribution = new Attribution();
		attribution.attribute(
			[{ id: 'node-send', title: intended.title, body: intended.body, recipients: ['u1'] }],
			[intended],
		);
		expect(() =>
			attribution.checkOutputs(runNaming('other-client-send'), () => intended, {
				informative: true,
			}),
		).toThrow(
			new InvariantViolation(
				'an item of w1 i0 names send other-client-send, which stands for no registered send',
			),
		);
	});

	describe("an item left unknown because the list holds an exact match that may be another of the process's own unknown sends", () => {
		const message = { title: 'R1 briefing', body: 'Your shift starts at 9:00.', userIds: ['u1'] };
		const eventA = { ...message, event: 'w1 i0' };
		const eventB = { ...message, event: 'w3 i0' };
		const endedUnknown = (reason: string) =>
			({
				outputs: [
					[
						{
							json: {
								error:
									'Sending the notification: the outcome is unknown (HTTP 503), so it was not sent again',
								errorDescription: `What the API showed cannot prove whether it was registered: ${reason}.`,
							},
							pairedItem: { item: 0 },
						},
					],
				],
				items: [],
			}) as unknown as NodeRunResult;
		const processTwin =
			'the list holds a send exactly like it (s1), which may be another send of this process whose outcome stayed unknown';

		/** Event A was asked for (it ended unknown, then another run of A found its send). */
		function afterAResolved(): Attribution {
			const attribution = new Attribution();
			attribution.attribute(
				[{ id: 's1', title: message.title, body: message.body, recipients: ['u1'] }],
				[eventA],
			);
			attribution.checkOutputs(endedUnknown('nothing shows the list is up to date'), () => eventA, {
				informative: true,
			});
			attribution.checkOutputs(runNaming('s1'), () => eventA, { informative: true });
			return attribution;
		}

		test('another event with that message asked for before, resolved since by another run of it: a twin, not a problem', () => {
			const attribution = afterAResolved();
			attribution.attribute([], [eventB]);
			expect(() =>
				attribution.checkOutputs(endedUnknown(processTwin), () => eventB, { informative: true }),
			).not.toThrow();
			expect(attribution.unknown.twin).toBe(1);
		});

		test('no other event with that message ever asked for: caught', () => {
			const attribution = new Attribution();
			attribution.attribute([], [eventB]);
			expect(() =>
				attribution.checkOutputs(endedUnknown(processTwin), () => eventB, { informative: true }),
			).toThrow(InvariantViolation);
		});
	});

	test('an item accepted whose id the list did not give: counted, not a problem', () => {
		const attribution = new Attribution();
		const accepted = {
			outputs: [
				[
					{
						json: {
							error:
								'Sending the notification: an earlier try of this node sent it (accepted, not re-sent), but its id could not be read',
							errorDescription: 'The API accepted it, so it went out and is not sent again.',
						},
						pairedItem: { item: 0 },
					},
				],
			],
			items: [],
		} as unknown as NodeRunResult;
		expect(() =>
			attribution.checkOutputs(accepted, () => intended, { informative: true }),
		).not.toThrow();
		expect(attribution.acceptedIdNotFound).toBe(1);
	});
});

describe('the failures a stopping error names beside its own', () => {
	const unknownMessage =
		'Sending the notification: the outcome is unknown (no answer: ECONNRESET), so it was not sent again';
	const reason =
		'What the API showed cannot prove whether it was registered: nothing in the list of sends looks like it, but nothing shows the list is up to date (this process has not yet seen how late this API lists its sends). Check the list of sends (Notification > Get Many) for a send titled "A. B." to 1 recipient(s) created at any time: if it is there, it went out; if not, run this item again.';
	const stopped = (alsoFailed: string, after = ' Not sent: item 4.') =>
		({
			outputs: [],
			items: [],
			error: {
				message: 'Sending the notification failed with HTTP 403',
				description: `Forbidden. Also failed: ${alsoFailed}.${after}`,
				context: { itemIndex: 0 },
			},
		}) as unknown as NodeRunResult;

	test('a send that may have gone out is read with its reason, whose sentences end in ". "', () => {
		const errors = errorsOf(
			stopped(
				`item 1 (${unknownMessage} — ${reason}); item 3 (Sending the notification failed with HTTP 403)`,
			),
		);
		expect(errors.slice(1)).toEqual([
			{ message: unknownMessage, text: `${unknownMessage}\n${reason}`, items: [1] },
			{
				message: 'Sending the notification failed with HTTP 403',
				text: 'Sending the notification failed with HTTP 403',
				items: [3],
			},
		]);
	});

	test('the last entry before "and N more", or at the end of the description', () => {
		const cut = errorsOf(stopped(`item 1 (${unknownMessage} — ${reason}) and 3 more`, ''));
		expect(cut.slice(1).map((error) => [error.items, error.text])).toEqual([
			[[1], `${unknownMessage}\n${reason}`],
		]);
	});
});
