/**
 * "Exact or unknown" with an API that writes its times without a zone (the spec says only "ISO
 * 8601"): here, as UTC wall times with no `Z`. Read in n8n's host zone, such a time is hours off:
 * in Berlin our own send seemed older than its first attempt (so it was sent again), in New York an
 * older look-alike seemed new (so it was taken for ours). A time the node cannot place on the API's
 * clock places nothing: whatever the host's zone, the lookup decides the same way. Runs go through
 * n8n's engine against the sandbox; sends are counted from the sandbox's request log.
 */
import {
	expectEachOnce,
	HOUR,
	jsonOf,
	logOf,
	MESSAGE,
	registeredSends,
	runOnce,
	runWithLaterSend,
	SEND,
	sendAsAnotherClient,
	sendRun,
	useHostTimeZone,
	useKeyedRuns,
} from '../harness/index.cts';

const HOST_ZONES = ['Europe/Berlin', 'America/New_York'];
const WITHOUT_ZONE =
	"the API writes its creation time without a time zone, so nothing tells whether it was made before this send's first try";

describe('exact or unknown, with times written without a zone', () => {
	const keyedRuns = useKeyedRuns();
	const { sandbox } = keyedRuns;
	const hostZone = useHostTimeZone();
	let users: string[];
	beforeAll(() => ({ users } = keyedRuns));
	beforeEach(() => sandbox.configure({ timesWithoutZone: 'UTC' }));

	const posts = () => logOf(sandbox, SEND).length;
	const sendsTo = (userId: string) =>
		registeredSends(sandbox).filter((send) => send.userIds.includes(userId));

	test.each(HOST_ZONES)(
		'host in %s: our own send, its answer lost, listed with a created_at without a zone: sent once, "unknown" (nothing places it)',
		async (zone) => {
			hostZone.set(zone);
			sandbox.addFault({ endpoint: SEND, kind: 'resetAfter' });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

			expectEachOnce(sandbox, [users[0]]);
			expect(posts()).toBe(1);
			expect(item.error).toBe(
				'Sending the notification: the outcome is unknown (ECONNRESET), so it was not sent again',
			);
			expect(item.errorDescription).toContain(
				`the list holds a send that could be it, but ${WITHOUT_ZONE} (${sendsTo(users[0])[0].id})`,
			);
			expect(item.errorDescription).toContain('Check the list of sends (Notification > Get Many)');
		},
	);

	test.each(HOST_ZONES)(
		'host in %s: an identical send made an hour earlier by another client, ours reset before reaching the API: never taken for ours, nothing sent blindly',
		async (zone) => {
			hostZone.set(zone);
			const theirs = await sendAsAnotherClient(sandbox, [users[0]], MESSAGE, -HOUR);
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			const [item] = jsonOf((await runOnce(sendRun(sandbox, [{ userId: users[0] }]))).items);

			expect(item.id).toBeUndefined();
			expect(item.error).toBe(
				'Sending the notification: the outcome is unknown (ECONNRESET), so it was not sent again',
			);
			expect(item.errorDescription).toContain(
				`the list holds a send that could be it, but ${WITHOUT_ZONE} (${theirs})`,
			);
			expect(sendsTo(users[0]).map((send) => send.id)).toEqual([theirs]);
		},
	);

	test.each(HOST_ZONES)(
		'host in %s: a send to other recipients with a time without a zone is not a candidate: ours, its answer lost, is proven absent and sent once',
		async (zone) => {
			hostZone.set(zone);
			const other = await sendAsAnotherClient(sandbox, [users[1]], MESSAGE, -HOUR);
			sandbox.addFault({ endpoint: SEND, kind: 'resetBefore' });
			// A later send of this process, listed, shows the list is up to date past ours.
			const run = sendRun(sandbox, [{ userId: users[0] }]);
			const { result } = await runWithLaterSend(sandbox, run, users[2]);
			const [item] = jsonOf(result.items);

			const [ours] = sendsTo(users[0]);
			expect(item).toMatchObject({ id: ours.id });
			expect(ours.id).not.toBe(other);
			expectEachOnce(sandbox, [users[0], users[1], users[2]]);
		},
	);
});
