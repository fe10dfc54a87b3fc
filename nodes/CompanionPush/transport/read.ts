import type { ZodType, ZodTypeDef } from 'zod';

import { unexpectedResponse } from './errors';
import { readJson } from './request';
import type { ApiCall, CompanionPushContext } from './request';
import { isRetryableStatus, withRetries } from './retry';

/**
 * A call that is safe to repeat (every read, and cancel): retried on 5xx, 429, no answer and
 * unreadable (malformed) JSON per RETRY_POLICY. Returns the 2xx body checked against `schema`;
 * any other answer becomes a NodeApiError that names the action.
 */
export async function apiRequest<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
): Promise<T> {
	return (await apiRequestWithHeaders(context, call, schema)).value;
}

/** `apiRequest`, also giving the answer's headers (the send lookup reads the server's clock). */
export async function apiRequestWithHeaders<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
): Promise<{ value: T; headers: Record<string, unknown> }> {
	return await withRetries(context, call, (answer) => {
		if (answer.kind === 'noAnswer') return 'retry';
		if (answer.status < 200 || answer.status >= 300) return isRetryableStatus(answer.status) ? 'retry' : 'fail';
		const json = readJson(answer.body);
		if (!json.ok) return 'retry'; // malformed JSON: a body cut short is worth another read
		return { result: { value: parseResponse(context, call, schema, json.value, answer.redact), headers: answer.headers } };
	});
}

/** Checks a 2xx body against the shape the spec describes; a mismatch shows what came back. */
function parseResponse<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
	body: unknown,
	redact?: (body: unknown) => unknown,
): T {
	const parsed = schema.safeParse(body);
	if (!parsed.success) throw unexpectedResponse(context.getNode(), call.action, redact ? redact(body) : body, call.itemIndex);
	return parsed.data;
}
