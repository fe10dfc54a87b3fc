/**
 * What the package writes into n8n's processed-data store for an Idempotency Key, so that the
 * queue-keys benchmark (bench/queueKeys.ts) can tell which events' keys are in a stored row.
 *
 * n8n's `checkProcessedAndRecord` in `entries` mode stores, for each value, the MD5 of the value's
 * string in base64 (24 characters); a row's value is `{"mode":"entries","data":[<hashes>]}`. A
 * format says which strings the package records for one key: the claim, and the mark that the API
 * accepted the send (if the format has one), or the mark that it has not yet. A new claim protocol that stores other strings adds a
 * format here (or passes its own module with --format-module) and the same measurement reads it.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';

import { entriesOf } from '../nodes/CompanionPush/neverTwice/idempotencyKeys';

export interface KeyValueFormat {
	name: string;
	/** One line for the report: the strings stored for a key. */
	description: string;
	/** The strings recorded for key `key` (batch 1 of its send): once claimed, and once the API accepted the send
	 * (`accepted`), or until then (`pendingUntilAccepted`: the claim without it is an accepted send). */
	valuesOf(key: string): { claimed: string; accepted?: string; pendingUntilAccepted?: string };
}

/** n8n's hash of a recorded value in `entries` mode (deduplication-helper's hashing). */
export const entryHash = (value: string): string => createHash('md5').update(value).digest('base64');

export const KEY_VALUE_FORMATS: KeyValueFormat[] = [
	{
		name: 'key-and-accepted',
		description: '`<key>` when claimed, `<key> [accepted]` once the API accepted the send (node scope row)',
		valuesOf: (key) => ({ claimed: key, accepted: `${key} [accepted]` }),
	},
	{
		name: 'claim-under-lock',
		description:
			'`["claimed",<key>]` and `["pending",<key>]` while its send is under way, only `["claimed",<key>]` once the API accepted it (node scope row; the lock is the workflow scope row)',
		valuesOf: (key) => {
			const entries = entriesOf(key, []);
			return { claimed: entries.claimed, pendingUntilAccepted: entries.pending };
		},
	},
];

/** Loads a format: a name above, or a module (path) whose `default` or `format` export is a KeyValueFormat. */
export function loadFormat(nameOrModule: string): KeyValueFormat {
	const named = KEY_VALUE_FORMATS.find((format) => format.name === nameOrModule);
	if (named) return named;
	if (!/[/\\.]/.test(nameOrModule)) {
		throw new Error(`--format: unknown "${nameOrModule}" (choose from ${KEY_VALUE_FORMATS.map((format) => format.name).join(', ')}, or give a module's path)`);
	}
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const loaded = require(resolve(nameOrModule));
	const format = (loaded.default ?? loaded.format) as KeyValueFormat | undefined;
	if (!format || typeof format.valuesOf !== 'function' || typeof format.name !== 'string') {
		throw new Error(`--format: ${nameOrModule} exports no KeyValueFormat (a default or "format" export with name, description and valuesOf)`);
	}
	return format;
}

type KeyValues = ReturnType<KeyValueFormat['valuesOf']>;

/** Whether a format tells an accepted send: by a mark of its own, or by the claim without its pending mark. */
export function tellsAccepted(values: KeyValues): boolean {
	return values.accepted !== undefined || values.pendingUntilAccepted !== undefined;
}

/** Whether the stored hashes (`has`) show a key's send as accepted (false for a format that cannot tell). */
export function isAccepted(values: KeyValues, has: (value: string) => boolean): boolean {
	if (values.pendingUntilAccepted !== undefined) return has(values.claimed) && !has(values.pendingUntilAccepted);
	return values.accepted !== undefined && has(values.accepted);
}

/** For each key, whether it is stored as claimed (under way) and as accepted. */
export function keysFound(format: KeyValueFormat, keys: string[], storedHashes: Iterable<string>): { claimed: number; accepted: number } {
	const stored = new Set(storedHashes);
	const has = (value: string) => stored.has(entryHash(value));
	let claimed = 0;
	let accepted = 0;
	for (const key of keys) {
		const values = format.valuesOf(key);
		const underWay = values.pendingUntilAccepted === undefined || has(values.pendingUntilAccepted);
		if (has(values.claimed) && underWay) claimed++;
		if (isAccepted(values, has)) accepted++;
	}
	return { claimed, accepted };
}

/** The format (of those given) that finds the most of these keys' claims in the stored hashes; the first when none finds any. */
export function likeliestFormat(formats: KeyValueFormat[], keys: string[], storedHashes: string[]): KeyValueFormat {
	let best = formats[0];
	let bestFound = -1;
	for (const format of formats) {
		const found = keysFound(format, keys, storedHashes);
		if (found.claimed + found.accepted > bestFound) {
			best = format;
			bestFound = found.claimed + found.accepted;
		}
	}
	return best;
}
