import type { ApiError } from '../apiError';
import type { ErrorShape } from '../types';

/** A rendered answer body. */
export interface RenderedBody {
	contentType: string;
	text: string;
}

const json = (value: unknown): RenderedBody => ({ contentType: 'application/json; charset=utf-8', text: JSON.stringify(value) });

/** Short reason phrases for the statusMessage (NestJS-like) shape. */
const REASONS: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	409: 'Conflict',
	413: 'Payload Too Large',
	422: 'Unprocessable Entity',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

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
			if (error.status === 422 || (error.status === 400 && error.problems.length > 0)) {
				return json({
					detail: error.problems.map((problem) => ({ loc: ['body', problem.field], msg: problem.message, type: error.code })),
				});
			}
			return json({ detail: error.message });
		case 'statusMessage':
			return json({ statusCode: error.status, error: REASONS[error.status] ?? 'Error', message: error.message });
		case 'plainText':
			return { contentType: 'text/plain; charset=utf-8', text: error.message };
	}
}
