import { createHash } from 'crypto';

/** Recipients: what the user typed or mapped, turned into clean, unique user IDs and batches. */

const SEPARATORS = /[\s,;]+/;

/** Splits IDs given as text (commas, semicolons, spaces or new lines) or takes them from an array
 * (from an expression; numbers accepted, nested arrays flattened, a user record gives its id).
 * An element of an array is one ID, never split again: one holding a separator is a mistake in the
 * expression (a list of joined IDs), and is refused rather than guessed. Returns the IDs trimmed,
 * empties dropped, or a message saying what is wrong with the value. */
export function parseUserIds(value: unknown): { userIds: string[] } | { problem: string } {
	const collected: string[] = [];
	let elements = 0;
	const visit = (entry: unknown, depth: number): string | undefined => {
		if (entry === null || entry === undefined) return undefined;
		if (typeof entry === 'string' && depth === 0) {
			for (const part of entry.split(SEPARATORS)) if (part !== '') collected.push(part);
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
	return problem ? { problem } : { userIds: collected };
}

/** Keeps the first occurrence of each ID, in order (the spec: duplicates must be avoided). */
export function uniqueUserIds(userIds: Iterable<string>): string[] {
	return [...new Set(userIds)];
}

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
