/**
 * What saved workflows and credentials hold must keep working: every parameter (its name where it
 * shows, its type and default) and every option value in saved-parameters.json is still offered,
 * whatever the display texts (names shown, descriptions, placeholders, notices, actions) say now.
 * New parameters and values may be added; the file is then regenerated with
 * UPDATE_SAVED_PARAMETERS=1 (and the diff shows that nothing was taken away).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { NodeHelpers } from 'n8n-workflow';
import type {
	IDataObject,
	INode,
	INodeParameters,
	INodeProperties,
	INodePropertyCollection,
	INodePropertyOptions,
} from 'n8n-workflow';

import { CompanionPushApi } from '../../credentials/CompanionPushApi.credentials';
import { CompanionPush } from '../../nodes/CompanionPush/CompanionPush.node';
import { CompanionPushTrigger } from '../../nodes/CompanionPush/CompanionPushTrigger.node';
import { NODE_SANDBOX, runOn, sendParameters, sentBodies, useSandbox } from '../harness/index.cts';

const FIXTURE = path.join(__dirname, 'saved-parameters.json');

/** What a saved value depends on: type, default, and the values an option offers. */
interface SavedShape {
	type: string;
	default: unknown;
	values?: string[];
}

/**
 * Every parameter by its path and where it shows (a parameter name may appear once per
 * operation), e.g. `options.batchSize @ {"show":{"resource":["notification"],...}}`.
 */
function savedShapes(properties: INodeProperties[], prefix = ''): Record<string, SavedShape> {
	const shapes: Record<string, SavedShape> = {};
	for (const property of properties) {
		if (property.type === 'notice') continue; // shows text only, holds nothing
		const where = JSON.stringify(property.displayOptions ?? {});
		const key = `${prefix}${property.name} @ ${where}`;
		const options = property.options ?? [];
		const shape: SavedShape = { type: property.type, default: property.default };
		if (property.type === 'options' || property.type === 'multiOptions')
			shape.values = (options as INodePropertyOptions[]).map((option) => String(option.value));
		shapes[key] = shape;
		if (property.type === 'collection')
			Object.assign(
				shapes,
				savedShapes(options as INodeProperties[], `${prefix}${property.name}.`),
			);
		if (property.type === 'fixedCollection')
			for (const group of options as INodePropertyCollection[])
				Object.assign(
					shapes,
					savedShapes(group.values, `${prefix}${property.name}.${group.name}.`),
				);
		if (property.type === 'resourceLocator')
			shape.values = (property.modes ?? []).map((mode) => mode.name);
	}
	return shapes;
}

function currentShapes(): Record<string, Record<string, SavedShape>> {
	return {
		companionPush: savedShapes(new CompanionPush().description.properties),
		companionPushTrigger: savedShapes(new CompanionPushTrigger().description.properties),
		companionPushApi: savedShapes(new CompanionPushApi().properties),
	};
}

/** What of `saved` is no longer in `now`: a parameter gone, or its type, default or a value changed. */
function lostSince(saved: Record<string, SavedShape>, now: Record<string, SavedShape>): string[] {
	const lost: string[] = [];
	for (const [key, shape] of Object.entries(saved)) {
		const kept = now[key];
		if (!kept) {
			lost.push(`${key}: gone`);
			continue;
		}
		if (kept.type !== shape.type || JSON.stringify(kept.default) !== JSON.stringify(shape.default))
			lost.push(`${key}: ${JSON.stringify(shape)} is now ${JSON.stringify(kept)}`);
		const goneValues = (shape.values ?? []).filter((value) => !kept.values?.includes(value));
		if (goneValues.length > 0) lost.push(`${key}: values ${goneValues.join(', ')} gone`);
	}
	return lost;
}

describe('saved workflows and credentials keep working', () => {
	if (process.env.UPDATE_SAVED_PARAMETERS === '1')
		fs.writeFileSync(FIXTURE, `${JSON.stringify(currentShapes(), null, '\t')}\n`);
	const saved = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as ReturnType<typeof currentShapes>;
	const current = currentShapes();

	test.each(Object.keys(saved) as Array<keyof typeof saved>)(
		'%s: every saved parameter is still there, with its type, default and option values',
		(type) => {
			expect(Object.keys(saved[type]).length).toBeGreaterThan(3);
			expect(lostSince(saved[type], current[type])).toEqual([]);
		},
	);

	test('a renamed parameter, a renamed option value and a changed default are each seen', () => {
		const trigger = new CompanionPushTrigger().description.properties;
		const changed = trigger.map((property): INodeProperties => {
			if (property.name === 'events')
				return {
					...property,
					options: (property.options as INodePropertyOptions[]).map((option) =>
						option.value === 'noDevice' ? { ...option, value: 'personWithoutApp' } : option,
					),
				};
			if (property.name === 'output') return { ...property, name: 'outputMode' };
			if (property.name === 'openDeadline') return { ...property, default: 30 };
			return property;
		});
		const lost = lostSince(saved.companionPushTrigger, savedShapes(changed));
		expect(lost).toHaveLength(3);
		expect(lost.join('\n')).toMatch(/^events @ .*: values noDevice gone$/m);
		expect(lost.join('\n')).toMatch(/^output @ .*: gone$/m);
		expect(lost.join('\n')).toMatch(/^openDeadline @ .*"default":15.* is now .*"default":30/m);
		// Display texts are free to change.
		const renamedTexts = trigger.map((property) => ({
			...property,
			displayName: `${property.displayName}!`,
			description: 'another text',
		}));
		expect(lostSince(saved.companionPushTrigger, savedShapes(renamedTexts))).toEqual([]);
	});
});

/**
 * Options shown only with the option they refine (Cap Window with Cap per Person, Keys to Keep with
 * Idempotency Key...). n8n drops a hidden value when it loads a workflow (the editor, and the engine:
 * `new Workflow()` runs getNodeParameters), so a saved workflow must lose such a value only where
 * the node ignored it anyway.
 */
describe('options shown only where they act: saved values keep their meaning', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 3 });
	const node = new CompanionPush();
	const properties = node.description.properties;
	const nodeOf = (parameters: INodeParameters): INode => ({
		id: 'n',
		name: 'Companion Push',
		type: 'companionPush',
		typeVersion: 1,
		position: [0, 0],
		parameters,
	});
	/** The options of a saved Send as n8n loads them (the engine's call, defaults added). */
	const loadedOptions = (options: IDataObject, top: IDataObject = {}) => {
		const parameters = { resource: 'notification', operation: 'send', ...top, options };
		const loaded = NodeHelpers.getNodeParameters(
			properties,
			parameters as INodeParameters,
			true,
			false,
			nodeOf(parameters as INodeParameters),
			node.description,
		);
		return loaded?.options as IDataObject;
	};
	const refined: Array<[string, IDataObject, IDataObject]> = [
		['Cap Window', { capPerPerson: 2 }, { capWindowMinutes: 30 }],
		[
			'Keys to Keep, Idempotency Scope',
			{ idempotencyKey: 'k' },
			{ keysToKeep: 7, idempotencyScope: 'workflow' },
		],
		[
			'Digest Title, Digest Window',
			{ digestKey: 'd' },
			{ digestTitle: 'x {count}', digestWindowMinutes: 3 },
		],
		['Critical', { quietHours: '22:00-07:00' }, { critical: true }],
	];

	test.each(refined)(
		'%s: kept with the option it refines (given or an expression), dropped without it',
		(_name, refining, values) => {
			expect(loadedOptions({ ...refining, ...values })).toEqual({ ...refining, ...values });
			const [[name]] = Object.entries(refining);
			const asExpression = { [name]: '={{ $json.value }}' };
			expect(loadedOptions({ ...asExpression, ...values })).toEqual({ ...asExpression, ...values });
			expect(loadedOptions(values)).toEqual({});
		},
	);

	test('without the option they refine, they never acted: the same send as without them', async () => {
		const userIds = sandbox.orgs.primary.userIds[0];
		const unrefined = Object.assign({}, ...refined.map(([, , values]) => values)) as IDataObject;
		const run = async (options: IDataObject) =>
			await runOn(sandbox, { parameters: sendParameters({ userIds, options }) });
		const plain = await run({});
		const withUnrefined = await run(unrefined);
		expect(withUnrefined.error).toBeUndefined();
		expect(withUnrefined.outputs).toHaveLength(plain.outputs.length);
		const [first, second] = sentBodies(sandbox);
		expect(second).toEqual(first);
	});

	/** Whether the editor shows a notice for these parameters (its call: the node's parameters under
	 * "parameters"). */
	const noticeShown = (name: string, parameters: IDataObject) =>
		NodeHelpers.displayParameterPath(
			{ parameters } as INodeParameters,
			properties.find((property) => property.name === name)!,
			'parameters',
			nodeOf(parameters as INodeParameters),
			node.description,
		);

	test('a Digest Key with Quiet Hours: both values are kept (the run still fails, never sends otherwise), and the editor says so', () => {
		const send = { resource: 'notification', operation: 'send' };
		const both = { digestKey: 'd', quietHours: '22:00-07:00' };
		expect(loadedOptions(both)).toEqual(both);
		expect(noticeShown('digestWithQuietHours', { ...send, options: both })).toBe(true);
		expect(
			noticeShown('digestWithQuietHours', {
				...send,
				options: { ...both, digestKey: '={{ $json.kind }}' },
			}),
		).toBe(true);
		expect(noticeShown('digestWithQuietHours', { ...send, options: { digestKey: 'd' } })).toBe(
			false,
		);
		expect(
			noticeShown('digestWithQuietHours', { ...send, options: { quietHours: '22:00-07:00' } }),
		).toBe(false);
		expect(
			noticeShown('digestWithAudience', {
				...send,
				audience: 'allUsers',
				options: { digestKey: 'd' },
			}),
		).toBe(true);
		expect(
			noticeShown('digestWithAudience', {
				...send,
				audience: 'userIds',
				options: { digestKey: 'd' },
			}),
		).toBe(false);
	});
});
