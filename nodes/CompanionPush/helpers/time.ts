export const MINUTE_MS = 60_000;

/** A time the API gave as text, in ms; undefined when it gave none or one that does not parse. */
export function parseTime(value: unknown): number | undefined {
	if (typeof value !== 'string' || value === '') return undefined;
	const ms = Date.parse(value);
	return Number.isNaN(ms) ? undefined : ms;
}
