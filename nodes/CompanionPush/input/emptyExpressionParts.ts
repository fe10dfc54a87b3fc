import { ExpressionParser } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

/*
 * The parts of an expression that gave nothing for an item. "{{ $json.orderId }}:{{ $json.status }}"
 * on an event that names its order "order_id" gives ":shipped": a text with letters, so nothing in
 * the value itself shows that a field was missing.
 */

const givesNothing = (value: unknown) =>
	value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/**
 * The {{ }} parts of `saved` (the parameter as saved, e.g. `node.parameters.title`), each evaluated
 * alone, that give nothing (undefined, null, only spaces) for `itemIndex`, as written. Empty when
 * `saved` is no expression or has one part and no text around it (then its field refuses the empty
 * value itself). A part that fails alone (it may lean on another) is not named: no claim without a
 * reading.
 */
export function emptyExpressionParts(
	context: IExecuteFunctions,
	saved: unknown,
	itemIndex: number,
): string[] {
	// An expression is saved with a leading "=".
	if (typeof saved !== 'string' || !saved.startsWith('=')) return [];
	const chunks = ExpressionParser.splitExpression(saved.slice(1));
	const code = chunks.filter((chunk) => chunk.type === 'code');
	const text = chunks.filter((chunk) => chunk.type === 'text' && chunk.text !== '');
	if (code.length === 0 || (code.length === 1 && text.length === 0)) return [];
	return code.flatMap((chunk) => {
		const part = `{{${chunk.text}}}`;
		try {
			return givesNothing(context.evaluateExpression(part, itemIndex)) ? [part] : [];
		} catch {
			return [];
		}
	});
}
