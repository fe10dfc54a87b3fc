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

/** Code and message of a 4xx answered by a fault: the sandbox's own code for that status where it has one. */
const CLIENT_ERRORS: Record<number, [code: string, message: string]> = {
	400: ['invalid_value', 'A field value is invalid'],
	404: ['not_found', 'The resource does not exist'],
	409: ['not_scheduled', 'The push notification is no longer scheduled'],
	413: ['payload_too_large', 'The request body is too large'],
	422: ['validation_error', 'A required field is missing or malformed'],
	429: ['rate_limited', 'Too many requests; retry later'],
};

/** A 4xx (400-499) in the current error shape; 401 and 403 as the API's own. No Retry-After on a 429. */
export function clientError(status: number): ApiError {
	if (status === 401) return unauthorized('Bearer token rejected');
	if (status === 403) return forbidden('The credential lacks permission for this action');
	const [code, message] = CLIENT_ERRORS[status] ?? [
		'client_error',
		`The request was refused (status ${status})`,
	];
	return new ApiError(status, code, message);
}
