/**
 * The spec's send states, in the two groups every reader of a send needs: a send in a moving state
 * changes on its own (the service dispatches or delivers it); a settled one changes only by the
 * service's automatic retries of transient failures (e.g. partially_failed, then sent).
 */
const MOVING_SEND_STATES: readonly unknown[] = ['scheduled', 'sending'];
const SETTLED_SEND_STATES: readonly unknown[] = ['sent', 'partially_failed', 'failed', 'canceled'];

/** True while the send is `scheduled` or `sending`. */
export const isMoving = (status: string | undefined) => MOVING_SEND_STATES.includes(status);

/** True once the send reached one of the settled states (an unknown state is neither). */
export const isSettled = (status: string | undefined) => SETTLED_SEND_STATES.includes(status);
