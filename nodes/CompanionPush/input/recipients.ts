import { createHash } from 'crypto';

/** Recipients: what the user typed or mapped, turned into clean, unique user IDs and batches. */

/** Between IDs given as text: commas, semicolons and line breaks. Not spaces: "Jane Doe" is one
 * (wrong) ID, not the two people "Jane" and "Doe". */
const SEPARATORS = /[,;\r\n]+/;

/** The longest user ID taken. The API's IDs are short (24 hex digits in the sandbox, 36 characters
 * for a UUID); an ID is also kept in the store's records (Digest, Cap per Person), so a runaway value
 * (a whole document mapped by mistake) would cost megabytes there. */
export const MAX_USER_ID_LENGTH = 256;

/** Splits IDs given as text (commas, semicolons or new lines) or takes them from an array (from an
 * expression; numbers accepted, nested arrays flattened, a user record gives its id). An element of
 * an array is one ID, never split again: one holding a separator is a mistake in the expression (a
 * list of joined IDs), and is refused rather than guessed. Returns the IDs trimmed, empties dropped,
 * or a message saying what is wrong with the value. */
export function parseUserIds(value: unknown): { userIds: string[] } | { problem: string } {
	const collected: string[] = [];
	let elements = 0;
	const visit = (entry: unknown, depth: number): string | undefined => {
		if (entry === null || entry === undefined) return undefined;
		if (typeof entry === 'string' && depth === 0) {
			for (const part of entry.split(SEPARATORS)) {
				const userId = part.trim();
				if (userId !== '') collected.push(userId);
			}
			return undefined;
		}
		if (typeof entry === 'string') {
			elements++;
			const userId = entry.trim();
			if (SEPARATORS.test(userId)) {
				return `has a list element holding several IDs (element ${elements}: ${JSON.stringify(userId.slice(0, 60))}): in a list each element is one user ID. Split it in the expression, e.g. {{ $json.ids.split(',') }}, or give the IDs as text`;
			}
			if (userId !== '') collected.push(userId);
			return undefined;
		}
		if (typeof entry === 'number' && Number.isFinite(entry)) {
			elements++;
			collected.push(String(entry));
			return undefined;
		}
		if (Array.isArray(entry) && depth < 3) {
			for (const inner of entry) {
				const problem = visit(inner, depth + 1);
				if (problem) return problem;
			}
			return undefined;
		}
		if (typeof entry === 'object' && entry !== null && 'id' in entry) {
			// A user record from "Get Many Users" mapped as a whole: take its id.
			return visit((entry as { id: unknown }).id, depth + 1);
		}
		return `contains a value that is not a user ID: ${JSON.stringify(entry)?.slice(0, 80)}`;
	};
	const problem = visit(value, 0);
	if (problem) return { problem };
	const tooLong = collected.findIndex((userId) => userId.length > MAX_USER_ID_LENGTH);
	if (tooLong >= 0) {
		return {
			problem: `has an ID of ${collected[tooLong].length.toLocaleString('en-US')} characters (ID ${tooLong + 1}, starting ${JSON.stringify(collected[tooLong].slice(0, 40))}): at most ${MAX_USER_ID_LENGTH}. A user ID is short, as returned by Get Many Users: check what the expression gives`,
		};
	}
	return { userIds: collected };
}

/** What makes a user ID look like something else: an e-mail (an @) or a person's name (a space
 * inside). The spec identifies recipients by service user ID, "not by e-mail", and the API accepts
 * unknown IDs (202) without notifying anyone. */
export function unusualUserId(userId: string): 'an e-mail' | 'a name' | undefined {
	if (userId.includes('@')) return 'an e-mail';
	if (/\s/.test(userId)) return 'a name';
	return undefined;
}

/** The IDs of `userIds` that look like an e-mail or a name, in words ("\"Jane Doe\" looks like a
 * name"), at most `shown` of them; undefined when none does. */
export function describeUnusualUserIds(userIds: string[], shown = 3): string | undefined {
	const unusual = userIds.flatMap((userId) => {
		const looksLike = unusualUserId(userId);
		return looksLike ? [`${JSON.stringify(userId.slice(0, 60))} looks like ${looksLike}`] : [];
	});
	if (unusual.length === 0) return undefined;
	const more = unusual.length > shown ? ` and ${unusual.length - shown} more` : '';
	return `${unusual.slice(0, shown).join(', ')}${more}`;
}

/**
 * What a send's output adds when the API counted other recipients than were asked (its counter
 * `targeted_users`, read by Wait for Final Status once the send is final): IDs it does not know, or
 * of another organization, are accepted and notify nobody. Nothing when the counter is absent or
 * agrees.
 */
export function recipientsCountedByApi(
	asked: unknown,
	stats: unknown,
): { recipientsCountedByApi: number; recipientsNote: string } | undefined {
	const counted = (stats as { targeted_users?: unknown } | undefined)?.targeted_users;
	if (typeof asked !== 'number' || typeof counted !== 'number' || counted === asked)
		return undefined;
	return {
		recipientsCountedByApi: counted,
		recipientsNote: `The API counts ${counted} of the ${asked} recipients this send asked for: an ID it does not know, or of another organization, notifies nobody. Check the IDs with Get Many Users.`,
	};
}

/** Keeps the first occurrence of each ID, in order (the spec: duplicates must be avoided). */
export const uniqueUserIds = (userIds: Iterable<string>) => [...new Set(userIds)];

/** Splits recipients into consecutive batches of at most `batchSize` (the spec recommends 1000
 * users per send for very large audiences; each batch is its own send). */
export function toBatches<T>(values: T[], batchSize: number): T[][] {
	const batches: T[][] = [];
	for (let start = 0; start < values.length; start += batchSize)
		batches.push(values.slice(start, start + batchSize));
	return batches;
}

/** A batch's identity by its content: the same recipients, in any order, give the same id, so a
 * batch is recognized by whom it reaches, not by its position in the audience. */
export function batchContentId(userIds: string[]): string {
	return createHash('sha256')
		.update([...userIds].sort().join('\n'))
		.digest('hex')
		.slice(0, 16);
}
