/**
 * What a builder sees of the nodes in n8n's editor, worked out with n8n's own parameter logic
 * (NodeHelpers.getNodeParameters, as the editor and the engine load a node's parameters: a hidden
 * one is dropped):
 * - the trigger shows one of Not Opened Within and Escalation Deadlines, the one its Deadline
 *   names, and a workflow saved before the choice keeps its Not Opened Within;
 * - the node panel lists this package once, with the trigger's description (n8n merges a node
 *   and its trigger into one entry and shows the trigger's): it names sending too;
 * - the Send options in plain words, none of them the jargon they had, sorted as n8n lists them;
 *   the two announcement fields say which does what.
 * The editor itself: test/e2e/examples-editor.e2e.cts.
 */
import { NodeHelpers } from 'n8n-workflow';
import type {
	INode,
	INodeParameters,
	INodeProperties,
	INodeTypeDescription,
	INodePropertyOptions,
} from 'n8n-workflow';

import { CompanionPush } from '../../nodes/CompanionPush/CompanionPush.node';
import { CompanionPushTrigger } from '../../nodes/CompanionPush/CompanionPushTrigger.node';

const trigger = new CompanionPushTrigger().description;
const action = new CompanionPush().description;

/** The parameters n8n keeps of `parameters` (defaults added, hidden ones dropped). */
function loaded(description: INodeTypeDescription, parameters: INodeParameters): INodeParameters {
	const node = {
		id: 'n',
		name: 'Node',
		type: description.name,
		typeVersion: 1,
		position: [0, 0],
		parameters,
	} as INode;
	return NodeHelpers.getNodeParameters(
		description.properties,
		parameters,
		true,
		false,
		node,
		description,
	)!;
}

describe('the trigger shows one of its two deadline fields', () => {
	const deadlineFields = (parameters: INodeParameters) =>
		Object.keys(loaded(trigger, parameters)).filter((name) =>
			['openDeadline', 'openDeadlines'].includes(name),
		);

	test('a new Not Opened in Time: One Deadline, Not Opened Within only', () => {
		expect(deadlineFields({ events: ['notOpenedInTime'] })).toEqual(['openDeadline']);
	});

	test('Deadline "Alert Ladder": Escalation Deadlines only', () => {
		const parameters = {
			events: ['notOpenedInTime'],
			deadlineMode: 'ladder',
			openDeadlines: '1, 2',
		};
		expect(deadlineFields(parameters)).toEqual(['openDeadlines']);
		expect(loaded(trigger, parameters).openDeadlines).toBe('1, 2');
	});

	test('a workflow saved before the choice keeps its Not Opened Within', () => {
		const parameters = loaded(trigger, { events: ['notOpenedInTime'], openDeadline: 30 });
		expect([parameters.deadlineMode, parameters.openDeadline]).toEqual(['single', 30]);
	});

	test('without Not Opened in Time, neither (nor the choice)', () => {
		expect(Object.keys(loaded(trigger, { events: ['noDevice'] }))).not.toContain('deadlineMode');
		expect(deadlineFields({ events: ['noDevice'] })).toEqual([]);
	});
});

describe('the node panel', () => {
	test("one entry for both nodes, shown with the trigger's description: it names sending and the events", () => {
		// n8n merges a trigger into the node its name gives without "Trigger" and shows its description.
		expect(trigger.name.replace('Trigger', '')).toBe(action.name);
		expect(trigger.description).toMatch(/^Send push notifications/);
		expect(trigger.description).toMatch(/start workflows when/);
	});

	test('the person events are named by what happened to the person', () => {
		const events = trigger.properties.find((property) => property.name === 'events')!;
		const actions = Object.fromEntries(
			(events.options as INodePropertyOptions[]).map((option) => [option.value, option.action]),
		);
		expect(actions.noDevice).toBe('On person with no active app');
		expect(actions.notReached).toBe('On person not reached on any phone');
		expect(new Set(Object.values(actions)).size).toBe(Object.keys(actions).length);
	});
});

describe('the Send options in a builder’s words', () => {
	const sendProperties = action.properties.filter(
		(property) => property.displayOptions?.show?.operation?.includes('send') === true,
	);
	const collection = (name: string) =>
		sendProperties.find((property) => property.name === name)!.options as INodeProperties[];

	test('no jargon; the key settings sort beside the key; in the order n8n lists them', () => {
		const names = collection('options').map((option) => option.displayName);
		for (const jargon of ['Keys to Keep', 'Idempotency Scope', 'Max Parallel Requests'])
			expect(names).not.toContain(jargon);
		expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
		const key = names.indexOf('Idempotency Key');
		expect(names.slice(key, key + 3)).toEqual([
			'Idempotency Key',
			'Idempotency Key Applies To',
			'Idempotency Keys Remembered',
		]);
		const scope = collection('options').find((option) => option.name === 'idempotencyScope')!;
		expect(scope.description).not.toMatch(/lock/i);
	});

	test('the two announcement fields: one links the send, the other is what the app opens', () => {
		const fields = Object.fromEntries(
			collection('additionalFields').map((field) => [field.name, field]),
		);
		expect(fields.announcementId.displayName).toBe('Linked Announcement ID');
		expect(fields.deeplinkAnnouncementId.displayName).toBe('Announcement to Open');
		expect(fields.announcementId.description).toMatch(/does not choose what the app opens/);
		expect(fields.deeplinkAnnouncementId.description).toMatch(/the announcement the app opens/);
	});
});
