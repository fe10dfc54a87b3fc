/**
 * How many shipped files one Send enters: a plain Send of one item, and a keyed one (Idempotency
 * Key), each run once more after a warm-up, counting the files of `nodes/` with any function called.
 * Not a unit test (its name does not end in .test.cts): `node scripts/filesEntered.js` runs it under
 * jest's coverage, which counts the calls, and prints the files.
 */
import * as fs from 'node:fs';

import {
	count,
	NODE_SANDBOX,
	processedDataStore,
	runOn,
	SEND,
	sendParameters,
	useSandbox,
} from '../harness/index.cts';

/** Istanbul's counters, as jest's coverage keeps them in the test's global scope. */
type Coverage = Record<
	string,
	{ f: Record<string, number>; s: Record<string, number>; b: Record<string, number[]> }
>;

function coverage(): Coverage {
	const counters = (globalThis as { __coverage__?: Coverage }).__coverage__;
	if (!counters)
		throw new Error('no coverage counters: run this file with scripts/filesEntered.js');
	return counters;
}

/** Forgets the calls so far (the warm-up's, and the loading of the modules). */
function resetCounts(): void {
	for (const file of Object.values(coverage())) {
		for (const key of Object.keys(file.f)) file.f[key] = 0;
		for (const key of Object.keys(file.s)) file.s[key] = 0;
		for (const key of Object.keys(file.b)) file.b[key] = file.b[key].map(() => 0);
	}
}

/** The files of `nodes/` with a function called since the last reset, from the repository's root. */
function filesEntered(): string[] {
	return Object.entries(coverage())
		.filter(([, file]) => Object.values(file.f).some((calls) => calls > 0))
		.map(([name]) => name.replace(/^.*?\/(nodes\/)/, '$1'))
		.filter((name) => name.startsWith('nodes/'))
		.sort();
}

describe('files one Send enters', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	// A keyed Send claims its key in n8n's processed-data store, which n8n starts once per process.
	beforeAll(async () => await processedDataStore());

	test('a plain Send and a keyed one, each after a warm-up', async () => {
		const [userId] = sandbox.orgs.primary.usersOfKind('onePhone', 1);
		const plain = async () =>
			await runOn(sandbox, {
				items: [{ to: userId }],
				parameters: sendParameters({ userIds: '={{ $json.to }}' }),
			});
		let events = 0;
		const keyed = async () =>
			await runOn(sandbox, {
				items: [{ to: userId, key: `order-${events++}:shipped` }],
				parameters: sendParameters({
					userIds: '={{ $json.to }}',
					options: { idempotencyKey: '={{ $json.key }}' },
				}),
			});
		const measured = async (run: () => Promise<Awaited<ReturnType<typeof plain>>>) => {
			expect((await run()).error).toBeUndefined();
			resetCounts();
			const sendsBefore = count(sandbox, SEND);
			const { error, items } = await run();
			expect(error).toBeUndefined();
			// One new send each time: a keyed run with a new key sends, it is no repeat.
			expect(count(sandbox, SEND)).toBe(sendsBefore + 1);
			expect(items[0].json.skipped).toBeUndefined();
			return filesEntered();
		};
		const result = { plain: await measured(plain), keyed: await measured(keyed) };
		expect(result.plain).toContain('nodes/CompanionPush/CompanionPush.node.ts');
		fs.writeFileSync(process.env.FILES_ENTERED_OUT!, JSON.stringify(result));
	});
});
