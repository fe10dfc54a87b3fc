/** An error answer of the public API; http/errorShapes.ts renders it in the chosen shape. */
export interface FieldProblem {
	field: string;
	message: string;
}

export class ApiError extends Error {
	constructor(
		readonly status: number,
		readonly code: string,
		message: string,
		/** The field to correct (spec Errors, 422: "The response detail names the field to correct"). */
		readonly field?: string,
		/** Every field problem found, the first one being `field`. */
		readonly problems: FieldProblem[] = field ? [{ field, message }] : [],
		readonly headers: Record<string, string> = {},
	) {
		super(message);
	}
}

export const unauthorized = (message: string) =>
	new ApiError(401, 'unauthorized', message, undefined, [], { 'www-authenticate': 'Bearer' });
export const forbidden = (message: string) => new ApiError(403, 'forbidden', message);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
