/**
 * What saved workflows and credentials hold must keep working: every parameter (its name where it
 * shows, its type and default) and every option value in saved-parameters.json is still offered,
 * whatever the display texts (names shown, descriptions, placeholders, notices, actions) say now.
 * New parameters and values may be added; the file is then regenerated with
 * UPDATE_SAVED_PARAMETERS=1 (and the diff shows that nothing was taken away).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INodeProperties, INodePropertyCollection, INodePropertyOptions } from 'n8n-workflow';

import { CompanionPushApi } from '../../credentials/CompanionPushApi.credentials';
import { CompanionPush } from '../../nodes/CompanionPush/CompanionPush.node';
import { CompanionPushTrigger } from '../../nodes/CompanionPush/CompanionPushTrigger.node';

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
