/**
 * What the safety alert example (examples/safety-alert-escalation.json) says to people, evaluated
 * with n8n's own expression engine on the items its trigger gives (One Item per Notification and
 * Group of People, then one item per person): the minutes come from the event's `deadline` and
 * `sentAt` and the level from `level`, whatever ladder the trigger has; every title the example
 * sends stays within the 50 characters above which the node warns; the form sends only what a user
 * typed (nothing prefilled goes to everyone). How it looks in the editor: test/e2e/examples-editor.e2e.cts.
 */
import { Workflow } from 'n8n-workflow';
import type { INode, INodeTypes } from 'n8n-workflow';

import { exampleWorkflows } from '../../devkit/n8n/imports.cts';
import { RECOMMENDED_TITLE_LENGTH } from '../../nodes/CompanionPush/input/message';

type Json = Record<string, any>;

const SEND_TYPE = 'n8n-nodes-companion-push.companionPush';
const alert = exampleWorkflows().find((entry) => entry.file === 'safety-alert-escalation.json')!
	.workflow as Json;
const node = (name: string): Json => alert.nodes.find((entry: Json) => entry.name === name);

/** A parameter of a node evaluated for one input item, as n8n evaluates it when the node runs. */
function evaluate(nodeName: string, value: unknown, json: Json): any {
	const nodeTypes = {
		getByName: () => undefined,
		getByNameAndVersion: () => undefined,
		getKnownTypes: () => ({}),
	} as unknown as INodeTypes;
	const engine = new Workflow({
		id: alert.id,
		nodes: alert.nodes as INode[],
		connections: alert.connections,
		active: false,
		nodeTypes,
		settings: {},
	});
	return engine.expression.getParameterValue(
		value as never,
		null,
		0,
		0,
		nodeName,
		[{ json }] as never,
		'internal',
		{},
	);
}

const SENT_AT = '2026-03-02T09:00:00.000Z';
const TITLE = 'Safety alert: leave building B';
const minutesAfter = (minutes: number) =>
	new Date(Date.parse(SENT_AT) + minutes * 60_000).toISOString();

/** One Not Opened in Time event of a person, as the trigger tells it. */
const personEvent = (level: number, minutes: number): Json => ({
	event: 'notOpenedInTime',
	notificationId: 'n-1',
	title: TITLE,
	body: 'Gas leak in building B.',
	userId: 'u1',
	sentAt: SENT_AT,
	level,
	deadline: minutesAfter(minutes),
});

/** A group of `people` at one level, as One Item per Notification and Group of People gives it. */
const groupItem = (level: number, minutes: number, people: number): Json => ({
	event: 'notOpenedInTime',
	level,
	groupKey: `n-1-level-${level}`,
	notificationId: 'n-1',
	title: TITLE,
	body: 'Gas leak in building B.',
	people,
	userIds: Array.from({ length: people }, (_, index) => `u${index}`),
	events: [personEvent(level, minutes)],
});

describe('Safety alert example: its texts follow the ladder it runs', () => {
	test.each([
		['15, 30, 45', [15, 30, 45]],
		['1, 2, 3', [1, 2, 3]],
		['10, 60, 240', [10, 60, 240]],
	])('ladder %s: the team lead and the e-mail name its minutes and level', (_ladder, minutes) => {
		const lead = node('Tell the Team Lead').parameters;
		const group = groupItem(3, minutes[2], 12);
		expect(evaluate('Tell the Team Lead', lead.title, group)).toBe(
			`Alert not opened by 12 people in ${minutes[2]} min`,
		);
		expect(evaluate('Tell the Team Lead', lead.body, group)).toContain(
			`${minutes[2]} minutes after it went out (level 3 of the alert ladder)`,
		);
		const mail = evaluate('Email the Person', node('Email the Person').parameters.text, {
			...personEvent(2, minutes[1]),
			name: 'Ada',
		});
		expect(mail).toContain(
			`You have not opened this safety alert on your phone in the ${minutes[1]} minutes since it went out (level 2 of its alert ladder).`,
		);
		expect(mail).toContain(TITLE);
	});

	test('no minutes written into the example: every text takes them from the event', () => {
		const texts = JSON.stringify(
			alert.nodes.filter((entry: Json) => entry.type !== 'n8n-nodes-base.stickyNote'),
		);
		expect(texts).not.toMatch(/\b\d+ minutes\b/);
	});

	test('the e-mail to a person no phone reached says so', () => {
		const mail = evaluate('Email the Person', node('Email the Person').parameters.text, {
			event: 'notReached',
			title: TITLE,
			body: 'Gas leak in building B.',
			name: 'Ada',
		});
		expect(mail).toContain('This safety alert could not reach you');
	});

	test(`every title the example sends stays within ${RECOMMENDED_TITLE_LENGTH} characters, with a thousand people and a day's deadline`, () => {
		const inputs: Record<string, Json> = {
			'Safety Alert to Everyone': { Headline: 'leave building B', Instructions: '…' },
			'Remind Them': groupItem(1, 15, 1000),
			'Tell the Team Lead': groupItem(3, 1440, 1000),
			'Stand Down': { ...groupItem(1, 15, 1000), event: 'openedAfterEscalation' },
		};
		const sends = alert.nodes.filter(
			(entry: Json) => entry.type === SEND_TYPE && entry.parameters.operation === 'send',
		);
		expect(sends.map((entry: Json) => entry.name).sort()).toEqual(Object.keys(inputs).sort());
		for (const send of sends) {
			const title = String(evaluate(send.name, send.parameters.title, inputs[send.name]));
			expect([send.name, title, title.length <= RECOMMENDED_TITLE_LENGTH]).toEqual([
				send.name,
				title,
				true,
			]);
		}
	});

	test('the form comes empty: what goes to All Users is only what a user typed', () => {
		const form = node('Send the Alert');
		const send = node('Safety Alert to Everyone');
		expect(send.parameters.audience).toBe('allUsers');
		for (const field of form.parameters.formFields.values) {
			expect([field.fieldLabel, field.defaultValue]).toEqual([field.fieldLabel, undefined]);
			expect(field.requiredField).toBe(true);
		}
	});
});
