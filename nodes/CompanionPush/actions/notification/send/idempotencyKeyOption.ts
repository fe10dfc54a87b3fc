import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { emptyExpressionParts } from '../../../input/emptyExpressionParts';
import { DEFAULT_KEYS_TO_KEEP, MAX_KEY_LENGTH, MAX_KEYS_TO_KEEP } from '../../../neverTwice';
import type { IdempotencyKey } from '../../../neverTwice';
import { fieldError } from '../../../nodeErrors';

/* The Idempotency Key of an item, checked before anything is sent: a key that could equal another
 * event's (a part that gave nothing, only punctuation) would skip that event as a repeat. */

/** The options "Idempotency Key", "Idempotency Key Applies To" (idempotencyScope) and "Idempotency Keys
 * Remembered" (keysToKeep) of an item that has a key. */
export function readIdempotencyKey(
	context: IExecuteFunctions,
	options: IDataObject,
	itemIndex: number,
): IdempotencyKey {
	const value = options.idempotencyKey;
	if (typeof value !== 'string' && typeof value !== 'number') {
		throw fieldError(
			context,
			'Idempotency Key',
			'must be a text, for example {{ $json.orderId }}:{{ $json.status }}',
			itemIndex,
			'item',
		);
	}
	const key = String(value).trim();
	if (key === '') {
		throw fieldError(
			context,
			'Idempotency Key',
			'is empty for this item: give each event its own key, or remove the option',
			itemIndex,
			'item',
		);
	}
	const saved = (context.getNode().parameters.options as IDataObject | undefined)?.idempotencyKey;
	const emptyParts = emptyExpressionParts(context, saved, itemIndex);
	if (emptyParts.length > 0) {
		throw fieldError(
			context,
			'Idempotency Key',
			`has ${emptyParts.length === 1 ? 'a part' : 'parts'} that gave nothing for this item: ${emptyParts.join(', ').slice(0, 200)} (the key came out as ${JSON.stringify(key.slice(0, 60))}). A key missing a field can equal another event's key, and that event would be skipped as a repeat: check the field names against the input (an optional field can be given a fallback inside its part, e.g. {{ $json.orderId ?? $json.order_id }})`,
			itemIndex,
			'item',
		);
	}
	// A key of only separators and punctuation (":" or " - ") would be the same for every event
	// that gives it, so the second one would be skipped as a repeat.
	if (!/[\p{L}\p{N}]/u.test(key)) {
		throw fieldError(
			context,
			'Idempotency Key',
			`is ${JSON.stringify(key.slice(0, 60))} for this item, with no letter or digit: a key names its event, e.g. {{ $json.orderId }}:{{ $json.status }}; check that its fields are in the input`,
			itemIndex,
			'item',
		);
	}
	if (key.length > MAX_KEY_LENGTH) {
		throw fieldError(
			context,
			'Idempotency Key',
			`is ${key.length} characters long: at most ${MAX_KEY_LENGTH} (name the event, e.g. an order ID and its status, not its content)`,
			itemIndex,
			'item',
		);
	}
	const scope = options.idempotencyScope ?? 'node';
	if (scope === 'workflow') {
		// Its keys would live in the workflow's row, which every node reaches, and n8n's store gives
		// the nodes no other row to share a lock in (store/lock.ts): two nodes could both send an event.
		throw fieldError(
			context,
			'Idempotency Key Applies To',
			'"The Whole Workflow" is no longer supported: n8n\'s store gives the nodes of a workflow no lock they can share, so two nodes could both send the same event. Set it to "This Node", and send the events that share keys through one Companion Push node (keys kept so far under this scope are not carried over)',
			itemIndex,
			'item',
		);
	}
	if (scope !== 'node') {
		throw fieldError(
			context,
			'Idempotency Key Applies To',
			`has an unknown value "${String(scope)}": use node`,
			itemIndex,
			'item',
		);
	}
	const keysToKeep = Number(options.keysToKeep ?? DEFAULT_KEYS_TO_KEEP);
	if (!Number.isInteger(keysToKeep) || keysToKeep < 1 || keysToKeep > MAX_KEYS_TO_KEEP) {
		throw fieldError(
			context,
			'Idempotency Keys Remembered',
			`must be a whole number from 1 to ${MAX_KEYS_TO_KEEP.toLocaleString('en-US')} (got ${String(options.keysToKeep)})`,
			itemIndex,
			'item',
		);
	}
	return { key, scope, keysToKeep };
}
