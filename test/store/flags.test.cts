/**
 * Flags of the store (store/flags.ts): names kept as one entry each in a node's row of n8n's store
 * (devkit/processedData.cts: hashes only). A test of flags leaves the row as it found it; a test cut
 * short leaves the flags it tested set (the safe side its clients count on); a row holding flags is
 * trimmed by nobody.
 */
import { MemoryProcessedData, storeContext } from '../../devkit/processedData.cts';
import { resetProcessState } from '../../devkit/processState.cts';
import { inStoreTurn } from '../../nodes/CompanionPush/store';
import { inRowTurn } from '../../nodes/CompanionPush/store/turns';

const ROW = ['wf-lock', 'n:n-lock'] as const;

describe("flags in a node's row", () => {
	let store: MemoryProcessedData;
	beforeEach(() => {
		resetProcessState();
		store = new MemoryProcessedData();
	});

	test('set, tested and cleared in turns of their own; a test leaves the row as it was', async () => {
		const { context } = storeContext(store);
		await inStoreTurn(context, async (turn) => await turn.setFlags(['a', 'b', 'c']));
		const before = [...store.entries(...ROW)];

		const tested = await inStoreTurn(
			context,
			async (turn) => await turn.hasFlags(['a', 'x', 'c', 'y', 'a']),
		);
		expect(tested).toEqual({ ok: true, value: [true, false, true, false, true] });
		expect(store.entries(...ROW)).toEqual(before);

		await inStoreTurn(context, async (turn) => await turn.clearFlags(['a', 'z']));
		const after = await inStoreTurn(context, async (turn) => await turn.hasFlags(['a', 'b', 'c']));
		expect(after).toEqual({ ok: true, value: [false, true, true] });
		// A flag is one entry: the row holds the two left and the mark of a row holding records.
		expect(store.entries(...ROW)).toHaveLength(3);
	});

	test('a test cut short (n8n stopped before it took its probes out) leaves the flags it tested set', async () => {
		const { context } = storeContext(store);
		await inStoreTurn(context, async (turn) => await turn.setFlags(['a']));
		const stopping = storeContext(store, {
			beforeWrite: (scope) => {
				// The test's second write: the probes' removal.
				if (scope === 'node' && ++writes === 2) throw new Error('n8n stopped');
			},
		});
		let writes = 0;
		const cut = await inStoreTurn(
			stopping.context,
			async (turn) => await turn.hasFlags(['a', 'b']),
		);
		expect(cut.ok).toBe(false);

		const after = await inStoreTurn(context, async (turn) => await turn.hasFlags(['a', 'b', 'c']));
		expect(after).toEqual({ ok: true, value: [true, true, false] });
	});

	test("a row holding flags: 40 keys' writes with Keys to Keep 10 drop none of them", async () => {
		const { context } = storeContext(store);
		await inStoreTurn(context, async (turn) => await turn.setFlags(['slot 1', 'slot 2']));
		for (let index = 0; index < 40; index++) {
			const outcome = await inRowTurn(context, async (writes) => {
				await writes.record([`key ${index}`], 10);
			});
			expect(outcome.ok).toBe(true);
		}
		expect(store.holds(...ROW, 'key 0')).toBe(true);
		const read = await inStoreTurn(
			context,
			async (turn) => await turn.hasFlags(['slot 1', 'slot 2']),
		);
		expect(read).toEqual({ ok: true, value: [true, true] });
	});
});
