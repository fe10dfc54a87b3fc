/**
 * The package's process memory, as tests and benchmarks reset it. Each shipped module keeps its own
 * process state behind its own functions (what it holds and why it is safe with several processes
 * is written next to it); this calls every module's reset, so a case starts as a fresh process
 * would. The waits (common/timings.ts) are part of it: their lengths and how they are waited out
 * (n8n's sleep, or a test's clock) reset to the defaults too.
 */
import { resetKeysInFlight } from '../nodes/CompanionPush/neverTwice/keyedEvent';
import { resetStoreState } from '../nodes/CompanionPush/store/state';
import { resetRowTurns } from '../nodes/CompanionPush/store/turns';
import { resetTimings } from '../nodes/CompanionPush/common/timings';
import { resetPaces } from '../nodes/CompanionPush/transport/retry';
import { resetListings } from '../nodes/CompanionPush/transport/safeSend/listings';
import { resetListPagesRead } from '../nodes/CompanionPush/transport/safeSend/listReading';
import { forgetProbes } from '../nodes/CompanionPush/transport/safeSend/probe';
import { resetSendRegistry } from '../nodes/CompanionPush/transport/safeSend/registry';
import { resetTokenRenewals } from '../nodes/CompanionPush/transport/tokenRenewal';
import { resetPollMemory } from '../nodes/CompanionPush/trigger/pollMemory';

export {
	DEFAULT_TIMINGS,
	timings,
	useTimings,
	useWait,
} from '../nodes/CompanionPush/common/timings';
export type { Wait } from '../nodes/CompanionPush/common/timings';

/** Empties every module's process memory and restores the default timings (between cases). */
export function resetProcessState(): void {
	resetTokenRenewals();
	resetPaces();
	resetSendRegistry();
	forgetProbes();
	resetListings();
	resetListPagesRead();
	resetKeysInFlight();
	resetStoreState();
	resetRowTurns();
	resetPollMemory();
	resetTimings();
}
