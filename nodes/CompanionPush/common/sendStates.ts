/**
 * The spec's send states, in the two groups every reader of a send needs: a send in a moving state
 * changes on its own (the service dispatches or delivers it); a settled one changes only by the
 * service's automatic retries of transient failures (e.g. partially_failed, then sent).
 */
export const MOVING_SEND_STATES = ['scheduled', 'sending'] as const;
export const SETTLED_SEND_STATES = ['sent', 'partially_failed', 'failed', 'canceled'] as const;
export const SEND_STATES = [...MOVING_SEND_STATES, ...SETTLED_SEND_STATES] as const;

/** True while the send is `scheduled` or `sending`. */
export function isMoving(status: string | undefined): boolean {
	return status !== undefined && (MOVING_SEND_STATES as readonly string[]).includes(status);
}

/** True once the send reached one of the settled states (an unknown state is neither). */
export function isSettled(status: string | undefined): boolean {
	return status !== undefined && (SETTLED_SEND_STATES as readonly string[]).includes(status);
}
