/**
 * Notification > Get Many: the organization's sends, newest first, with Limit or Return All,
 * over every list body shape the sandbox can answer with (the spec does not show it).
 */
import type { ListShape } from '../../sandbox/index.cts';
import {
	jsonOf,
	logOf,
	NODE_SANDBOX,
	pairedOf,
	runOn,
	seedSends,
	SEND_LIST,
	storeFor,
	useSandbox,
} from '../harness/index.cts';

const getMany = (fields: Record<string, unknown>) => ({
	resource: 'notification',
	operation: 'getMany',
	...fields,
});

describe('Get Many notifications', () => {
	const sandbox = useSandbox(NODE_SANDBOX);
	/** 250 sends of the primary org, oldest first; 3 of the secondary org. */
	let ids: string[];
	beforeAll(async () => {
		ids = await seedSends(sandbox, 250);
		await seedSends(sandbox, 3, {}, sandbox.orgs.secondary);
	});
	const newestFirst = () => [...ids].reverse();

	/** Back to the default list shape (the seeded sends stay: no reset in this file). */
	const restoreShape = () => sandbox.configure({ listShape: 'envelope' });

	test('Limit 5: the 5 newest sends, one list call, each item paired with the input item', async () => {
		const before = logOf(sandbox, SEND_LIST).length;
		const { items: output, error } = await runOn(sandbox, { parameters: getMany({ limit: 5 }) });

		expect(error).toBeUndefined();
		expect(jsonOf(output).map((json) => json.id)).toEqual(newestFirst().slice(0, 5));
		expect(output[0].json).toMatchObject({ title: 'Send 249', status: expect.any(String) });
		expect(pairedOf(output)).toEqual([[0], [0], [0], [0], [0]]);
		expect(
			logOf(sandbox, SEND_LIST)
				.slice(before)
				.map((entry) => entry.query),
		).toEqual([{ skip: '0', limit: '100' }]);
	});

	test('Limit 150: two pages read, 150 sends', async () => {
		const before = logOf(sandbox, SEND_LIST).length;
		const { items: output } = await runOn(sandbox, { parameters: getMany({ limit: 150 }) });
		expect(jsonOf(output).map((json) => json.id)).toEqual(newestFirst().slice(0, 150));
		expect(
			logOf(sandbox, SEND_LIST)
				.slice(before)
				.map((entry) => entry.query.skip),
		).toEqual(['0', '100']);
	});

	test('Return All (envelope with total): 250 sends in 3 calls, none of another organization', async () => {
		const before = logOf(sandbox, SEND_LIST).length;
		const { items: output } = await runOn(sandbox, { parameters: getMany({ returnAll: true }) });
		expect(jsonOf(output).map((json) => json.id)).toEqual(newestFirst());
		expect(
			logOf(sandbox, SEND_LIST)
				.slice(before)
				.map((entry) => entry.query.skip),
		).toEqual(['0', '100', '200']);
	});

	test.each<[ListShape, string[]]>([
		['bareArray', ['0', '100', '200', '250']],
		['dataArray', ['0', '100', '200', '250']],
		['dataItems', ['0', '100', '200']],
		['dataNotifications', ['0', '100', '200']],
	])(
		'Return All with the list shape "%s": the same 250 sends, newest first',
		async (shape, skips) => {
			sandbox.configure({ listShape: shape });
			try {
				const before = logOf(sandbox, SEND_LIST).length;
				const { items: output, error } = await runOn(sandbox, {
					parameters: getMany({ returnAll: true }),
				});
				expect(error).toBeUndefined();
				expect(jsonOf(output).map((json) => json.id)).toEqual(newestFirst());
				// Without a total, reading stops on the first empty page.
				expect(
					logOf(sandbox, SEND_LIST)
						.slice(before)
						.map((entry) => entry.query.skip),
				).toEqual(skips);
			} finally {
				restoreShape();
			}
		},
	);

	test('Limit with the shape "bareArray": no extra read once the limit is reached', async () => {
		sandbox.configure({ listShape: 'bareArray' });
		try {
			const before = logOf(sandbox, SEND_LIST).length;
			const { items: output } = await runOn(sandbox, { parameters: getMany({ limit: 100 }) });
			expect(output).toHaveLength(100);
			expect(logOf(sandbox, SEND_LIST).length - before).toBe(1);
		} finally {
			restoreShape();
		}
	});

	test('the secondary organization sees only its own 3 sends', async () => {
		const { items: output } = await runOn(sandbox, {
			credentials: storeFor(sandbox, { credential: sandbox.orgs.secondary }),
			parameters: getMany({ returnAll: true }),
		});
		expect(output).toHaveLength(3);
		expect(jsonOf(output).some((json) => ids.includes(json.id as string))).toBe(false);
	});
});
