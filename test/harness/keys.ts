import { entriesOf } from '../../nodes/CompanionPush/neverTwice/idempotencyKeys';
import type { MemoryProcessedData } from '../../devkit/processedData';

/** Whether the keys' row of the test workflow's node holds `key` as a used event: `claimed`
 * without `pending` (see idempotencyKeys.ts). */
export function keptAsUsed(store: MemoryProcessedData, key: string, workflowId = 'wf-test', context = 'n:n-test'): boolean {
	const entries = entriesOf(key, []);
	return store.holds(workflowId, context, entries.claimed) && !store.holds(workflowId, context, entries.pending);
}
