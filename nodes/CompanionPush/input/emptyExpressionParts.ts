import { ExpressionParser } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

/*
 * The parts of an expression that gave nothing for an item. "{{ $json.orderId }}:{{ $json.status }}"
 * on an event that names its order "order_id" gives ":shipped": a text with letters, so nothing in
 * the value itself shows that a field was missing. Each {{ }} part is evaluated on its own, with
 * n8n's own splitting of the expression, and a part that gives nothing (undefined, null, or a text of
 * only spaces) is named.
 */

/** A parameter's value as saved: an expression starts with "=". */
function expressionOf(saved: unknown): string | undefined {
	return typeof saved === 'string' && saved.startsWith('=') ? saved.slice(1) : undefined;
}

const givesNothing = (value: unknown) =>
	value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/**
 * The {{ }} parts of `saved` (the parameter as saved, e.g. `node.parameters.title`) that give nothing
 * for `itemIndex`, as written ("{{ $json.orderId }}"). Empty when `saved` is no expression or has one
 * part and no text around it (then the whole value is empty, which its field refuses on its own). A
 * part that fails to evaluate alone (it may lean on another part) is not named: no claim without a
 * reading.
 */
export function emptyExpressionParts(
	context: IExecuteFunctions,
	saved: unknown,
	itemIndex: number,
): string[] {
	const expression = expressionOf(saved);
	if (expression === undefined) return [];
	const chunks = ExpressionParser.splitExpression(expression);
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
