import { STATUS_CODES } from 'node:http';
import type { ApiError } from '../apiError.cts';
import type { ErrorShape } from '../types.cts';

/** A rendered answer body. */
export interface RenderedBody {
	contentType: string;
	text: string;
}

const json = (value: unknown): RenderedBody => ({
	contentType: 'application/json; charset=utf-8',
	text: JSON.stringify(value),
});

/**
 * Spec Errors rule 3: the body shape is not shown, so it is switchable (see ErrorShape).
 * Every shape names the field to correct when there is one (spec Errors, 422).
 */
export function renderError(error: ApiError, shape: ErrorShape): RenderedBody {
	switch (shape) {
		case 'okFalse': {
			const body: Record<string, unknown> = { code: error.code, message: error.message };
			if (error.field) body.field = error.field;
			if (error.problems.length > 1) body.details = error.problems;
			return json({ ok: false, error: body });
		}
		case 'detail':
			// Field errors as a list (a 422 without a field, from a fault, falls back to the message).
			if ((error.status === 422 || error.status === 400) && error.problems.length > 0) {
				return json({
					detail: error.problems.map((problem) => ({
						loc: ['body', problem.field],
						msg: problem.message,
						type: error.code,
					})),
				});
			}
			return json({ detail: error.message });
		case 'statusMessage':
			// The reason phrase of the status, as NestJS gives it.
			return json({
				statusCode: error.status,
				error: STATUS_CODES[error.status] ?? 'Error',
				message: error.message,
			});
		case 'plainText':
			return { contentType: 'text/plain; charset=utf-8', text: error.message };
	}
}
