import type { ZodType, ZodTypeDef } from 'zod';

import { unexpectedResponse } from './errors';
import { readJson } from './http';
import type { ApiCall, CompanionPushContext } from './http';
import { isRetryableStatus, Tries } from './retry';

/**
 * A call that is safe to repeat: every read, and cancel (canceling twice cancels once). Retried on
 * 5xx, 429, no answer and unreadable (malformed) JSON per the retry policy (retry.ts). Returns the
 * 2xx body checked against `schema`, with the answer's headers; any other answer becomes a
 * NodeApiError that names the action. Sends are never made through here (see send.ts).
 */
export async function repeatableRequestWithHeaders<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
): Promise<{ value: T; headers: Record<string, unknown> }> {
	const tries = new Tries(context, call);
	for (;;) {
		const answer = await tries.send();
		if (answer.kind === 'answer' && answer.status >= 200 && answer.status < 300) {
			const json = readJson(answer.body);
			// Malformed JSON (a body cut short) is worth another read; a readable body is checked once.
			if (json.ok) {
				const parsed = schema.safeParse(json.value);
				if (!parsed.success)
					throw unexpectedResponse(
						context.getNode(),
						call.action,
						answer.redact(json.value),
						call.itemIndex,
					);
				return { value: parsed.data, headers: answer.headers };
			}
		} else if (answer.kind === 'answer' && !isRetryableStatus(answer.status)) {
			throw tries.failure(answer);
		}
		if (!(await tries.waitToRetry(answer))) throw tries.failure(answer);
	}
}

/** `repeatableRequestWithHeaders`, the value only. */
export async function repeatableRequest<T>(
	context: CompanionPushContext,
	call: ApiCall,
	schema: ZodType<T, ZodTypeDef, unknown>,
): Promise<T> {
	return (await repeatableRequestWithHeaders(context, call, schema)).value;
}
