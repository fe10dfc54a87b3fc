import { sleep } from 'n8n-workflow';

import { apiError, networkError, renewalError, unexpectedResponse } from './errors';
import { paceOf } from './pace';
import { exchange } from './request';
import type { Answer, ApiCall, CompanionPushContext } from './request';

/**
 * The retry policy for reads (GET, and the cancel call, which is safe to repeat):
 * - retried on 5xx and network errors (reset, refused, timeout), at most `maxAttempts` tries;
 * - a 429 slows down every request of the credential (pace.ts) and is retried after its
 *   Retry-After without spending a try, up to `maxRateLimitedTries` times;
 * - waits grow exponentially from `baseDelayMs`, capped at `maxDelayMs`, with "equal jitter"
 *   (half fixed, half random) so parallel workflows do not retry in step;
 * - a `Retry-After` header (seconds or an HTTP date) replaces the computed wait, up to
 *   `maxRetryAfterMs`; a longer one is not waited for: the error goes to the workflow.
 * Sends follow their own rule (see safeSend.ts): a send is never blindly repeated.
 */
export const RETRY_POLICY = {
	maxAttempts: 4,
	/** 429s a request may meet beyond its tries: each slows the pace (pace.ts) and waits Retry-After. */
	maxRateLimitedTries: 20,
	baseDelayMs: 400,
	maxDelayMs: 8_000,
	maxRetryAfterMs: 60_000,
};

export function isRetryableStatus(status: number): boolean {
	return status === 429 || status >= 500;
}

/** Wait before retry number `retry` (1 for the first retry). */
export function backoffDelayMs(retry: number, random: () => number = Math.random): number {
	const ceiling = Math.min(RETRY_POLICY.maxDelayMs, RETRY_POLICY.baseDelayMs * 2 ** (retry - 1));
	return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Milliseconds asked by a Retry-After header, or undefined when absent or unreadable. */
export function retryAfterMs(header: unknown, nowMs: number): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (typeof value !== 'string' && typeof value !== 'number') return undefined;
	const text = String(value).trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	// An HTTP date names its day or month ("Mon, 02 Mar 2026 09:00:05 GMT"); Date.parse alone would
	// also read "-1" or "7 " as dates in the past, i.e. "retry at once".
	if (!/[a-z]/i.test(text)) return undefined;
	const date = Date.parse(text);
	return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** The wait before the next try, honouring Retry-After; undefined means "do not retry". */
export function nextDelayMs(retry: number, retryAfterHeader: unknown, nowMs: number): number | undefined {
	if (retry >= RETRY_POLICY.maxAttempts) return undefined;
	const asked = retryAfterMs(retryAfterHeader, nowMs);
	if (asked === undefined) return backoffDelayMs(retry);
	return asked > RETRY_POLICY.maxRetryAfterMs ? undefined : asked;
}

/** How a caller judges one answer: its result, "try again" (while the policy allows), or "fail"
 * (the final error is built from the answer: no answer, an unreadable success body, or a status). */
export type Judgement<T> = { result: T } | 'retry' | 'fail';
type AnyAnswer = Exclude<Answer, { kind: 'renewalFailed' }>;

/**
 * The one retry loop of the transport, shared by reads (read.ts) and sends (safeSend.ts), each with
 * its own `judge` of what may be tried again. A token that could not be renewed sent nothing: an
 * unreachable token endpoint is waited for like a 429, a refusal fails at once. The waits follow
 * RETRY_POLICY (with Retry-After); when no try is left, the last answer becomes the error.
 */
export async function withRetries<T>(
	context: CompanionPushContext,
	call: ApiCall,
	// `requests`: how many times the request went out so far, this one included.
	judge: (answer: AnyAnswer, requests: number) => Promise<Judgement<T>> | Judgement<T>,
	noAnswerNote?: string,
): Promise<T> {
	const pace = paceOf(context);
	let rateLimited = 0;
	for (let attempt = 1; ; ) {
		await pace.acquire();
		let answer: Answer;
		try {
			answer = await exchange(context, call);
		} finally {
			pace.release();
		}
		if (answer.kind === 'renewalFailed') {
			const wait = answer.failure.retryable ? nextDelayMs(attempt, undefined, Date.now()) : undefined;
			if (wait === undefined) throw renewalError(context.getNode(), call.action, answer.failure, call.itemIndex);
			await sleep(wait);
			attempt++;
			continue;
		}
		if (answer.kind === 'answer' && answer.status === 429) {
			// Nothing was done: the pace slows down for every request of the credential, and this one
			// waits its turn without spending a try, as long as the service asks for a sane wait.
			const asked = retryAfterMs(answer.headers['retry-after'], Date.now()) ?? backoffDelayMs(rateLimited + 1);
			if (asked <= RETRY_POLICY.maxRetryAfterMs && ++rateLimited <= RETRY_POLICY.maxRateLimitedTries) {
				pace.rateLimited(asked);
				continue;
			}
		} else if (answer.kind === 'answer') pace.answered();
		const judgement = await judge(answer, attempt + rateLimited);
		if (typeof judgement === 'object') return judgement.result;
		const retryAfter = answer.kind === 'answer' ? answer.headers['retry-after'] : undefined;
		const delay = judgement === 'retry' ? nextDelayMs(attempt, retryAfter, Date.now()) : undefined;
		if (delay === undefined) throw finalError(context, call, answer, noAnswerNote);
		await sleep(delay);
		attempt++;
	}
}

function finalError(context: CompanionPushContext, call: ApiCall, answer: AnyAnswer, noAnswerNote?: string) {
	const node = context.getNode();
	if (answer.kind === 'noAnswer') return networkError(node, call.action, answer.code, call.itemIndex, noAnswerNote);
	if (answer.status >= 200 && answer.status < 300) {
		return unexpectedResponse(node, call.action, answer.redact(answer.body), call.itemIndex);
	}
	return apiError(node, { status: answer.status, body: answer.body, action: call.action, itemIndex: call.itemIndex });
}
