/**
 * The attribution of the randomized run beside another client of the organization: that client's
 * sends are no send of the node (they are never in the request log the attribution reads), so an
 * item that names one of them as its own is caught.
 */
import type { NodeRunResult } from '../../devkit/engine.cts';
import { Attribution, InvariantViolation } from './index.cts';

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
});
