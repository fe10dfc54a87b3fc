/**
 * Group commit of the keys' row (store/turns.ts): the claims and confirmations one process
 * has waiting run in one turn under the store's lock, their writes merged. What must hold: merged
 * writes cost one rewrite of the row for all; two writes naming the same entry never go together
 * (n8n would count it new for both: two claims); and the entries one event's probe adds never push
 * out another event's claim.
 */
import { IdempotencyKeys } from '../../nodes/CompanionPush/neverTwice/idempotencyKeys';
import type { IdempotencyKey } from '../../nodes/CompanionPush/neverTwice/idempotencyKeys';
import { resetProcessState } from '../../devkit/processState.cts';
import { rowTurnsWaiting } from '../../nodes/CompanionPush/store/turns';
import { MemoryProcessedData, storeContext } from '../harness/index.cts';

const KEYS_ROW = 'wf-lock|n:n-lock';

describe("the keys' row in turns: one process's waiting claims and confirmations written together", () => {
	let store: MemoryProcessedData;
	let keysRowWrites: number;

	beforeEach(() => {
		resetProcessState();
		store = new MemoryProcessedData();
		keysRowWrites = 0;
		store.stall = ({ kind, row }) => {
			if (kind !== 'select' && row === KEYS_ROW) keysRowWrites++;
			return undefined;
		};
	});

	/** An execution of this process: its own n8n context over the shared store. */
	const anExecution = () => new IdempotencyKeys(storeContext(store).context);
	const keyOf = (key: string, keysToKeep = 5_000): IdempotencyKey => ({
		key,
		scope: 'node',
		keysToKeep,
	});

	test('20 events claimed and confirmed at once: 3 rewrites of the row for all (one event alone: 3), each claimed once and then used', async () => {
		const events = Array.from({ length: 20 }, (_, index) => ({
			idempotency: keyOf(`order-${index}: shipped`),
			layout: [`batch-${index}`],
		}));
		await Promise.all(
			events.map(async ({ idempotency, layout }) => {
				const keys = anExecution();
				const claim = await keys.claim(idempotency, layout);
				expect(claim.state).toBe('claimed');
				if (claim.state !== 'claimed') return;
				expect(await keys.confirm(idempotency, layout, claim.markedMinutes, 'madeHere')).toEqual({
					ok: true,
					value: undefined,
				});
			}),
		);
		expect(keysRowWrites).toBe(3);

		const again = await Promise.all(
			events.map(async ({ idempotency, layout }) => await anExecution().claim(idempotency, layout)),
		);
		expect(again.map((claim) => claim.state)).toEqual(events.map(() => 'used'));
		expect(rowTurnsWaiting()).toBe(0);
		expect(store.rows.has('wf-lock|')).toBe(false); // the lock was given back
	});

	test('the same key claimed twice at once in one process (two node runs): one claim, the other finds it held', async () => {
		const idempotency = keyOf('order-1: shipped');
		const claims = await Promise.all([
			anExecution().claim(idempotency, ['batch']),
			anExecution().claim(idempotency, ['batch']),
		]);
		expect(claims.map((claim) => claim.state).sort()).toEqual(['claimed', 'held']);
	});

	test("probes of 30 held keys at once, with Keys to Keep 10: the holder's claims all stay", async () => {
		const idempotencies = Array.from({ length: 30 }, (_, index) =>
			keyOf(`order-${index}: shipped`, 10),
		);
		const holder = anExecution();
		for (const idempotency of idempotencies)
			expect((await holder.claim(idempotency, ['batch'])).state).toBe('claimed');

		const probed = await Promise.all(
			idempotencies.map(async (idempotency) => await anExecution().claim(idempotency, ['batch'])),
		);
		expect(probed.map((claim) => claim.state)).toEqual(idempotencies.map(() => 'held'));
		// Every claim is still there: a later copy still finds each held, none free.
		const later = await Promise.all(
			idempotencies.map(async (idempotency) => await anExecution().claim(idempotency, ['batch'])),
		);
		expect(later.map((claim) => claim.state)).toEqual(idempotencies.map(() => 'held'));
	});
});
