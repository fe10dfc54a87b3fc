/**
 * Escalation deadlines: minutes after a send went out at which a ladder escalates a person who has
 * not opened it yet (level 1 at the first, level 2 at the second, ...). Written as text ("15, 30,
 * 45") or a list of numbers; each must be a positive number of minutes, larger than the one before
 * (two levels at one deadline would escalate the same people twice at once).
 */

/** More levels than a team escalates through; a bound on what each person's row can hold. */
export const MAX_ESCALATION_LEVELS = 10;

/** The deadlines in minutes, in level order; empty for an empty text. Throws an Error whose message
 * says what is wrong (the caller names the field). */
export function parseEscalationDeadlines(value: unknown): number[] {
	if (value === null || value === undefined) return [];
	let parts: unknown[];
	if (Array.isArray(value)) parts = value;
	else if (typeof value === 'number') parts = [value];
	else if (typeof value === 'string') parts = value.split(/[\s,;]+/).filter((part) => part !== '');
	else
		throw new Error(`must be minutes separated by commas, e.g. 15, 30, 45 (got ${typeof value})`);

	if (parts.length > MAX_ESCALATION_LEVELS)
		throw new Error(`may hold at most ${MAX_ESCALATION_LEVELS} deadlines (got ${parts.length})`);
	const minutes: number[] = [];
	for (const part of parts) {
		const number = typeof part === 'number' ? part : typeof part === 'string' ? Number(part) : NaN;
		if (!Number.isFinite(number) || number <= 0)
			throw new Error(`must be positive numbers of minutes (got "${String(part)}")`);
		const previous = minutes[minutes.length - 1];
		if (previous !== undefined && number <= previous)
			throw new Error(
				`must grow from one level to the next (got ${number} after ${previous}), e.g. 15, 30, 45`,
			);
		minutes.push(number);
	}
	return minutes;
}
