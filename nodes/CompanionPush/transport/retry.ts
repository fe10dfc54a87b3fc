import { DateTime } from 'luxon';
import type { NodeApiError } from 'n8n-workflow';

import { shownAddress } from '../../../credentials/companionPushApi/redaction';
import { timings, waitFor } from '../common/timings';
import type { RetryPolicy } from '../common/timings';
import { apiError, networkError, renewalError, unexpectedResponse } from './errors';
import { workDeadlineWithin } from './http';
import type { Answer, ApiCall, CompanionPushContext } from './http';
import { paceOf } from './pace';
import { exchange } from './tokenRenewal';

/**
 * The retry policy (its numbers: DEFAULT_TIMINGS.retry in common/timings.ts):
 * - a caller retries an answer only when it says it may (reads: 5xx, no answer, malformed JSON;
 *   sends: see send.ts), at most `maxAttempts` tries;
 * - a 429 slows down every request of the credential (pace.ts) and is retried after its
 *   Retry-After without spending a try, up to `maxRateLimitedTries` times;
 * - waits grow exponentially from `baseDelayMs`, capped at `maxDelayMs`, with "equal jitter"
 *   (half fixed, half random) so parallel workflows do not retry in step;
 * - a `Retry-After` header (seconds or an HTTP date) replaces the computed wait, up to
 *   `maxRetryAfterMs`; a longer one is not waited for: the error goes to the workflow.
 */

export function isRetryableStatus(status: number): boolean {
	return status === 429 || status >= 500;
}

/** Wait before retry number `retry` (1 for the first retry). */
export function backoffDelayMs(
	retry: number,
	policy: RetryPolicy = timings().retry,
	random: () => number = Math.random,
): number {
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
	return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** The API's clock when it answered: its Date header, or undefined when absent or unreadable. */
export function serverTimeMs(headers: Record<string, unknown>): number | undefined {
	const value = Array.isArray(headers.date) ? headers.date[0] : headers.date;
	return typeof value === 'string' ? httpDateMs(value) : undefined;
}

/** An HTTP date (RFC 9110: IMF-fixdate, or the obsolete RFC 850 and asctime forms, all in GMT), in ms. */
function httpDateMs(text: string): number | undefined {
	const date = DateTime.fromHTTP(text.trim());
	return date.isValid ? date.toMillis() : undefined;
}

/**
 * Milliseconds asked by a Retry-After header: seconds as given; an HTTP date measured against the
 * answer's own Date header (the API's clock, which may differ from n8n's), or against n8n's clock
 * when the answer has none. Undefined when absent, unreadable, or a date not in the future: the
 * caller then backs off, so a wait never turns into a burst of calls.
 */
export function retryAfterMs(
	header: unknown,
	answeredAtMs: number | undefined,
	nowMs: number,
): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (typeof value !== 'string' && typeof value !== 'number') return undefined;
	const text = String(value).trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	const date = httpDateMs(text);
	if (date === undefined) return undefined;
	const wait = date - (answeredAtMs ?? nowMs);
	return wait > 0 ? wait : undefined;
}

/** The Retry-After of an answer, in milliseconds (see retryAfterMs). */
function askedWaitMs(answer: FinalAnswer | undefined): number | undefined {
	if (answer?.kind !== 'answer') return undefined;
	return retryAfterMs(answer.headers['retry-after'], serverTimeMs(answer.headers), Date.now());
}

/** The wait before the next try, honouring the wait the API asked for; undefined means "do not retry". */
export function nextDelayMs(
	retry: number,
	askedMs: number | undefined,
	policy: RetryPolicy = timings().retry,
): number | undefined {
	if (retry >= policy.maxAttempts) return undefined;
	if (askedMs === undefined) return backoffDelayMs(retry, policy);
	return askedMs > policy.maxRetryAfterMs ? undefined : askedMs;
}

/** An answer a caller judges: a status, or no answer at all. */
export type FinalAnswer = Exclude<Answer, { kind: 'renewalFailed' }>;

/**
 * The tries of one call, driven by the caller, who judges each answer:
 *
 *     const tries = new Tries(context, call);
 *     for (;;) {
 *       const answer = await tries.send();
 *       if (<answer is the result>) return ...;
 *       if (!(await tries.waitToRetry(answer))) throw tries.failure(answer);
 *     }
 *
 * `send` takes the credential's pace, exchanges (token renewal included), and absorbs what sent
 * nothing: a 429 is waited out without spending a try; a token that could not be renewed is waited
 * for like a 429 when its endpoint was unreachable, and is an error at once when it was refused.
 */
export class Tries {
	/** Tries spent (429s aside). */
	private attempt = 1;
	private rateLimited = 0;
	private readonly policy = timings().retry;

	constructor(
		private readonly context: CompanionPushContext,
		private readonly call: ApiCall,
	) {}

	/** How many times the request went out so far, the last one included. */
	get requests(): number {
		return this.attempt + this.rateLimited;
	}

	async send(): Promise<FinalAnswer> {
		const pace = paceOf(this.context);
		for (;;) {
			const turn = await pace.acquire();
			let answer: Answer;
			try {
				answer = await exchange(this.context, { ...this.call, wentOut: () => pace.wentOut(turn) });
			} finally {
				pace.release();
			}
			if (answer.kind === 'renewalFailed') {
				const wait = answer.failure.retryable
					? nextDelayMs(this.attempt, undefined, this.policy)
					: undefined;
				if (wait === undefined)
					throw renewalError(
						this.context.getNode(),
						this.call.action,
						answer.failure,
						this.call.itemIndex,
					);
				await waitFor(wait);
				this.attempt++;
				continue;
			}
			if (answer.kind === 'answer' && answer.status === 429) {
				// Nothing was done: the pace slows down for every request of the credential, and this one
				// waits its turn without spending a try, as long as the service asks for a sane wait.
				const asked = askedWaitMs(answer) ?? backoffDelayMs(this.rateLimited + 1, this.policy);
				if (
					asked <= this.policy.maxRetryAfterMs &&
					++this.rateLimited <= this.policy.maxRateLimitedTries
				) {
					pace.rateLimited(turn, asked);
					continue;
				}
			} else if (answer.kind === 'answer') pace.answered(turn, answer.status);
			return answer;
		}
	}

	/** Waits before the next try when the policy allows one; false when no try is left. */
	async waitToRetry(answer: FinalAnswer): Promise<boolean> {
		const delay = nextDelayMs(this.attempt, askedWaitMs(answer), this.policy);
		// A try after the deadline of the whole work (a poll) could not be made.
		if (delay === undefined || workDeadlineWithin(this.context, delay)) return false;
		await waitFor(delay);
		this.attempt++;
		return true;
	}

	/** The error for the last answer: no answer, an unreadable success body, or a status. */
	failure(answer: FinalAnswer, noAnswerNote?: string): NodeApiError {
		const node = this.context.getNode();
		const { action, itemIndex } = this.call;
		if (answer.kind === 'noAnswer')
			return networkError(node, action, answer, itemIndex, noAnswerNote);
		if (answer.status >= 200 && answer.status < 300)
			return unexpectedResponse(node, action, answer.redact(answer.body), itemIndex);
		// A Location is written by whoever answered: only its origin and path are shown, secrets hidden.
		const location =
			typeof answer.headers.location === 'string'
				? String(answer.redact(shownAddress(answer.headers.location)))
				: undefined;
		return apiError(node, {
			status: answer.status,
			body: answer.body,
			location,
			action,
			itemIndex,
		});
	}
}
