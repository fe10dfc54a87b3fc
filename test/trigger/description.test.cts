/**
 * The trigger as n8n's node panel shows it before anyone opens it: its description words every event
 * of Trigger On (so an event added there is not missing from the text users read first), and its
 * search words find it by the alert ladder too.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INodePropertyOptions } from 'n8n-workflow';

import { CompanionPushTrigger } from '../../nodes/CompanionPush/CompanionPushTrigger.node';

/** How the description words each event (No Device and Not Reached alike). */
const WORDED_AS: Record<string, string> = {
	deliveryFailed: 'fail on a phone',
	deliveryOpened: 'are opened',
	noDevice: 'reach no phone of a person',
	notOpenedInTime: 'are not opened in time',
	notReached: 'reach no phone of a person',
	notificationSettled: 'settle',
	openedAfterEscalation: 'are opened after an escalation',
};

describe("the trigger's description", () => {
	const { description } = new CompanionPushTrigger();

	test('words each event of Trigger On', () => {
		const events = description.properties.find((property) => property.name === 'events')!
			.options as INodePropertyOptions[];
		expect(Object.keys(WORDED_AS).sort()).toEqual(events.map((event) => event.value).sort());
		const unworded = Object.entries(WORDED_AS)
			.filter(([, words]) => !description.description.includes(words))
			.map(([event]) => event);
		expect(unworded).toEqual([]);
	});

	test("its codex (the node panel's search words) has Escalation", () => {
		const codex = JSON.parse(
			fs.readFileSync(
				path.resolve(__dirname, '../../nodes/CompanionPush/CompanionPushTrigger.node.json'),
				'utf8',
			),
		);
		expect(codex.alias).toContain('Escalation');
	});
});
