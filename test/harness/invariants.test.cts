/**
 * The send ledger of the randomized run against what the node tells: a run stopped by an error
 * after more sends than its error names (it names 20 and counts the rest, to stay a few KB) has told
 * the workflow about every send; a send neither named nor counted has not been told.
 */
import { resetProcessState } from '../../devkit/processState.cts';
import {
	InvariantViolation,
	nodeResult,
	nodeWorkflow,
	runWorkflow,
	SEND,
	sendRun,
	SendLedger,
	storeFor,
	NODE_SANDBOX,
	useSandbox,
} from './index.cts';

describe('send ledger: every registered send told', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, resetBeforeEach: true });
	afterAll(() => resetProcessState());

	/** One item to `recipients` users in batches of one, refused at batch `refusedAt` (stopping the run). */
	async function stoppedRun(recipients: number, refusedAt: number) {
		const userIds = sandbox.orgs.primary.userIds.slice(0, recipients);
		sandbox.addFault({ endpoint: SEND, kind: 'forbidden', skip: refusedAt - 1 });
		const logStart = sandbox.requestLog().length;
		const result = nodeResult(
			await runWorkflow(
				nodeWorkflow({
					...sendRun(sandbox, [{ userId: userIds.join(',') }], {
						options: { batchSize: 1, maxParallelRequests: 1 },
					}),
					credentials: storeFor(sandbox),
					continueOnFail: false,
				}),
			),
		);
		return { logStart, result };
	}

	test('25 batches, the 24th refused: 23 sent, 20 named and 3 counted: told', async () => {
		const { logStart, result } = await stoppedRun(25, 24);
		expect(result.error?.description).toContain('and 3 more.');
		expect(
			new SendLedger().check(sandbox, logStart, result, () => [0]).map((send) => send.id),
		).toHaveLength(23);
	});

	test('a send the error neither names nor counts: not told', async () => {
		const { logStart, result } = await stoppedRun(25, 24);
		// The error as if it had counted one send fewer.
		result.error!.description = result.error!.description!.replace('and 3 more.', 'and 2 more.');
		expect(() => new SendLedger().check(sandbox, logStart, result, () => [0])).toThrow(
			InvariantViolation,
		);
	});
});
