import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { fieldError } from '../../../nodeErrors';
import type { CheckedItem, DigestRule } from '../send/types';

export const MAX_DIGEST_WINDOW_MINUTES = 1_440;
export const DEFAULT_DIGEST_WINDOW_MINUTES = 15;
export const DEFAULT_DIGEST_TITLE = '{count} new updates';
/** People of one item: each gets a window and a scheduled send of their own. */
export const MAX_DIGEST_PEOPLE = 100;
const MAX_DIGEST_KEY_LENGTH = 200;

/** The digest options of an item that has a Digest Key. */
export function readDigestRule(
	context: IExecuteFunctions,
	options: IDataObject,
	itemIndex: number,
): DigestRule {
	const problem = (field: string, text: string) =>
		fieldError(context, field, text, itemIndex, 'item');
	const digestKey = options.digestKey;
	if (typeof digestKey !== 'string' && typeof digestKey !== 'number')
		throw problem('Digest Key', 'must be a text, e.g. order-updates');
	const key = String(digestKey).trim();
	if (key === '') throw problem('Digest Key', 'is empty: give a text that names the kind of event');
	if (key.length > MAX_DIGEST_KEY_LENGTH)
		throw problem('Digest Key', `is longer than ${MAX_DIGEST_KEY_LENGTH} characters`);
	const window = options.digestWindowMinutes ?? DEFAULT_DIGEST_WINDOW_MINUTES;
	const windowMinutes = Number(window);
	if (
		typeof window === 'boolean' ||
		window === '' ||
		!Number.isFinite(windowMinutes) ||
		windowMinutes < 1 ||
		windowMinutes > MAX_DIGEST_WINDOW_MINUTES
	) {
		throw problem(
			'Digest Window (Minutes)',
			`must be a number of minutes from 1 to ${MAX_DIGEST_WINDOW_MINUTES} (got ${String(window).slice(0, 40)})`,
		);
	}
	const title = options.digestTitle ?? DEFAULT_DIGEST_TITLE;
	if (typeof title !== 'string' || title.trim() === '')
		throw problem('Digest Title', 'is empty: give a title such as "{count} order updates"');
	return { digestKey: key, windowMinutes, title: title.trim() };
}

/** Options a digest cannot go with, by their display names, when the item has them. */
export function digestConflicts(item: CheckedItem, combined: boolean): string[] {
	return [
		combined ? 'Send Mode "One Send for All Items"' : '',
		item.cap ? 'Cap per Person' : '',
		item.delivery ? 'Deliver at Local Time or Quiet Hours' : '',
		item.waitTimeoutSeconds !== undefined ? 'Wait for Final Status' : '',
		item.audience === 'allUsers' || item.audience === 'activeUsers'
			? `Audience "${item.audience === 'allUsers' ? 'All Users' : 'Users With an Active App'}"`
			: '',
		item.userIds.length > MAX_DIGEST_PEOPLE ? `more than ${MAX_DIGEST_PEOPLE} User IDs` : '',
	].filter(Boolean);
}
