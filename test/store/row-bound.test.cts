/**
 * The bound of a node's row (store/turns.ts): n8n drops the oldest entries of a row beyond a
 * write's `maxEntries`. The Idempotency Keys let theirs go that way; records must never be dropped.
 * So a row that holds a record is trimmed by nobody, and a write that would take it past its bound
 * fails before anything is written.
 */
import { MemoryProcessedData, storeContext } from '../../devkit/processedData.cts';
import { resetProcessState } from '../../devkit/processState.cts';
import { inStoreTurn, ROW_ENTRIES } from '../../nodes/CompanionPush/store';
import { inRowTurn } from '../../nodes/CompanionPush/store/turns';

const ROW = ['wf-lock', 'n:n-lock'] as const;

describe("a node's row: one bound for records and keys", () => {
	let store: MemoryProcessedData;
	beforeEach(() => {
		resetProcessState();
		store = new MemoryProcessedData();
	});

	/** `count` keys' writes of one value each, each keeping the newest 10 entries besides its own. */
	async function keysWrites(count: number) {
		const { context } = storeContext(store);
		for (let index = 0; index < count; index++) {
			const outcome = await inRowTurn(context, async (writes) => {
				await writes.record([`key ${index}`], 10);
			});
			expect(outcome.ok).toBe(true);
		}
	}

	test('a row without records is trimmed as the keys ask: the newest entries stay', async () => {
		await keysWrites(40);
		expect(store.entries(...ROW).length).toBeLessThanOrEqual(11);
		expect(store.holds(...ROW, 'key 39')).toBe(true);
		expect(store.holds(...ROW, 'key 0')).toBe(false);
	});

	test("a row holding a digest's window: 40 keys' writes with Keys to Keep 10 drop nothing, and the window reads back", async () => {
		const { context } = storeContext(store);
		const window = '["65f1c2a9e4b0c81d2a3f4b5c",1795000000,1795000900,12,0]';
		await inStoreTurn(context, async (turn) => await turn.write([['window', window]]));
		await keysWrites(40);

		expect(store.holds(...ROW, 'key 0')).toBe(true);
		const read = await inStoreTurn(context, async (turn) => await turn.read(['window']));
		expect(read).toEqual({ ok: true, value: [window] });
	});

	test('a row holding records, full: a write that would pass the bound fails, and nothing is written', async () => {
		const { context } = storeContext(store);
		await inStoreTurn(context, async (turn) => await turn.write([['window', 'open']]));
		const where = { workflow: { id: ROW[0], active: true }, node: { id: 'n-lock' } as never };
		const filler = Array.from({ length: ROW_ENTRIES }, (_, index) => `filler ${index}`);
		const before = store.entries(...ROW).length;
		await store.checkProcessedAndRecord(filler.slice(0, ROW_ENTRIES - before - 2), 'node', where, {
			mode: 'entries',
		});
		const full = [...store.entries(...ROW)];

		const outcome = await inRowTurn(context, async (writes) => {
			await writes.record(['key 1', 'key 2', 'key 3'], 10);
		});
		expect(outcome).toEqual({
			ok: false,
			reason: expect.stringContaining("this node's row is full"),
		});
		expect(store.entries(...ROW)).toEqual(full);
		const read = await inStoreTurn(context, async (turn) => await turn.read(['window']));
		expect(read).toEqual({ ok: false, reason: expect.stringContaining("this node's row is full") });
		expect(store.entries(...ROW)).toEqual(full);
	});
});
