/**
 * The User IDs hint of the AI Agent example (examples/ai-agent-notify.json): the model reads only the
 * `$fromAI` description, not the node's field description, so the hint must hold of the node. Its
 * example IDs look like the IDs Get Many Users returns, and IDs written as it says (comma-separated,
 * exactly as returned) reach exactly those users.
 */
import {
	exampleWorkflows,
	expectEachOnce,
	jsonOf,
	NODE_SANDBOX,
	runOn,
	sendParameters,
	useSandbox,
} from '../harness/index.cts';

/** The description the example gives the model for `userIds`. */
function userIdsHint(): string {
	const example = exampleWorkflows().find(({ file }) => file === 'ai-agent-notify.json')!;
	const tool = example.workflow.nodes.find((node: { type: string }) =>
		node.type.endsWith('.companionPushTool'),
	);
	return /\$fromAI\('userIds', '([^']*)'/.exec(tool.parameters.userIds)![1];
}

/** An ID's length and alphabet: what a model copies from an example. */
const shapeOf = (id: string) =>
	`${id.length} characters, ${/^[0-9a-f]+$/.test(id) ? 'hex digits' : 'not only hex digits'}`;

describe("the AI Agent example's User IDs hint", () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });

	async function usersFromGetMany(): Promise<string[]> {
		const { items, error } = await runOn(sandbox, {
			parameters: { resource: 'user', operation: 'getMany', limit: 5 },
		});
		expect(error).toBeUndefined();
		return jsonOf(items).map((user) => String(user.id));
	}

	test('its example IDs have the shape of the IDs Get Many Users returns', async () => {
		const examples = /\(for example ([^)]*)\)/.exec(userIdsHint())![1].split(', ');
		const returned = await usersFromGetMany();

		expect(examples.length).toBeGreaterThanOrEqual(2);
		expect(new Set(returned.map(shapeOf))).toEqual(new Set([shapeOf(examples[0])]));
		expect(new Set(examples.map(shapeOf))).toEqual(new Set([shapeOf(returned[0])]));
	});

	test('two users of Get Many Users, written as the hint says, are each notified once', async () => {
		expect(userIdsHint()).toMatch(/^Comma-separated user IDs/);
		const [first, second] = await usersFromGetMany();

		const { error } = await runOn(sandbox, {
			parameters: sendParameters({ audience: 'userIds', userIds: `${first}, ${second}` }),
		});

		expect(error).toBeUndefined();
		expectEachOnce(sandbox, [first, second]);
	});
});
