/**
 * A randomized run of the reliability requirements: a few thousand operations of the action node,
 * in workflows of several items run through n8n's engine, mixing Send (per item and combined, some
 * in batches), Schedule, Cancel, Get, Get Many sends, Get Many users and users with an active app,
 * with random faults on random endpoints (answers lost before or after the send was registered, a
 * send registered a moment after its 5xx, a send listed late, Retry-After as a date), random list
 * and error body shapes, lists that show less (no recipients, no creation times or text, late, or
 * ignoring paging), an API clock ahead of or behind n8n's, and expired tokens. Some messages recur:
 * the same title and body to the same users in several workflows (a daily reminder), so that a
 * lost answer meets identical sends of other events in the list.
 * About half the workflows (drawn from the seed) run in a busy organization: another client of the
 * same organization sends while they run, so that another client's later send listed may prove a
 * lost answer's send absent. Its sends are not the node's: the ledger and the attribution never see
 * them (they read the node's own requests), and a node that took one for its own would be caught.
 * The summary gives the share of "unknown" for quiet and busy organizations apart.
 * After every workflow the invariants of invariants.ts hold: nobody notified twice per intended
 * send, every registered send reported, every error names what failed, every item answered, no
 * item carrying another item's send, and "unknown" only where the API showed too little. What each
 * operation promises is checked too (a cancel said done is canceled, a Get reads the send asked
 * for). At the end the sandbox's own records are checked once more against every intended send.
 * n8n's own repeats are part of it: sends run with Retry On Fail, a failed workflow is sometimes
 * retried as n8n's Executions list retries it, and keyed sends (Idempotency Key) repeat events
 * inside a run and re-run earlier events in later workflows.
 *
 * Everything random comes from one seed, printed at the start; replay a failure with
 *   RELIABILITY_SEED=<seed> npx jest test/reliability/randomized
 * (RELIABILITY_OPS changes the number of operations, 2000 by default; RELIABILITY_DUMP=1 prints the
 * items, outputs and requests of a workflow whose invariants failed). The waits are shortened for
 * this file (useTimings, reset after): retry backoff, the wait for another process's renewal after
 * a 401, the settle wait of a lookup (300 ms; lists lag less than that) and the watch of a claim
 * left unconfirmed; most 429s ask for Retry-After: 0. What is retried and how often is unchanged.
 */
import { DateTime } from 'luxon';
import { sleep } from 'n8n-workflow';
import type { IDataObject } from 'n8n-workflow';

import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import { ERROR_SHAPES, LIST_SHAPES } from '../../sandbox/index.cts';
import type { FaultSpec } from '../../sandbox/index.cts';
import { seededRandom } from '../../sandbox/random.cts';
import {
	ACTIVE_USERS,
	CANCEL,
	DETAIL,
	NODE_SANDBOX,
	REFRESH,
	SEND,
	SEND_LIST,
	sendParameters,
	storeFor,
	USER_LIST,
	useSandbox,
	nodeResult,
	nodeWorkflow,
	retryWorkflow,
	runWorkflow,
	type CredentialStore,
	type NodeRunResult,
	type WorkflowRunOptions,
	processedDataStore,
	Attribution,
	errorsOf,
	everyItemAnswered,
	isProbeSend,
	InvariantViolation,
	registeredIn,
	SendLedger,
	type IntendedSend,
	type ListConditions,
} from '../harness/index.cts';

const SEED = Number(process.env.RELIABILITY_SEED ?? 7_2026);
const OPERATIONS = Number(process.env.RELIABILITY_OPS ?? 2000);

/** A lookup's settle wait here; lists lag less than that (see ListConditions). */
const SETTLE_MS = 300;
/** Messages that recur across workflows, to the same few users. */
const RECURRING = [
	{ title: 'Daily check-in', body: 'How did your shift go today?' },
	{ title: 'Timesheet reminder', body: 'Please submit your hours before Friday.' },
	{ title: 'Safety briefing', body: 'The safety briefing starts at 8:45.' },
];
const UNIQUE_BODY = 'Your shift starts at 9:00.';
/** A busy organization: another client of the org sends this often while a workflow runs. The
 * waits are shortened here (a lookup waits BUSY_EVIDENCE_WAIT_MS for a later send listed, 60 s by
 * default): a send every 250 ms is ten per wait, where a send a second would be sixty. */
const OTHER_CLIENT_EVERY_MS = 250;
/** A lookup's wait for evidence in a busy organization. The list's Date header counts whole seconds,
 * so the API's clock is known to about a second, and only another client's send made over a second
 * after the loss can prove the list up to date: the wait spans that second and several of its sends
 * (in a quiet organization nothing else sends, and the shorter wait keeps the run short). */
const BUSY_EVIDENCE_WAIT_MS = 2_500;
/** Users only the other client sends to (a workflow's audience of all users takes them too). */
const OTHER_CLIENT_USERS = 3;
/** Fields a list may leave out in this run (each makes it less informative). */
const OMITTABLE = ['target_user_ids', 'created_at', 'title', 'body', 'scheduled_at'] as const;

type Kind = FaultSpec['kind'];
const KINDS: Kind[] = [
	'status5xx',
	'resetBefore',
	'resetAfter',
	'delay',
	'malformedJson',
	'rateLimit',
	'unauthorized',
];

type Op = 'send' | 'schedule' | 'cancel' | 'get' | 'listSends' | 'users' | 'activeUsers';
const OP_WEIGHTS: Array<[Op, number]> = [
	['send', 34],
	['schedule', 16],
	['cancel', 15],
	['get', 15],
	['listSends', 8],
	['users', 7],
	['activeUsers', 5],
];
/** The endpoints an operation calls (a send may read the list after a lost answer). */
const ENDPOINTS: Record<Op, string[]> = {
	send: [SEND, SEND, SEND, SEND_LIST, USER_LIST, ACTIVE_USERS, DETAIL],
	schedule: [SEND, SEND, SEND_LIST],
	cancel: [CANCEL, CANCEL, DETAIL],
	get: [DETAIL],
	listSends: [SEND_LIST],
	users: [USER_LIST],
	activeUsers: [ACTIVE_USERS],
};

describe(`randomized run: ${OPERATIONS} operations with random faults (seed ${SEED})`, () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, deliveryMs: 5 });
	let store: CredentialStore;
	beforeAll(async () => {
		useTimings({
			retry: { baseDelayMs: 5, maxDelayMs: 40 },
			foreignRenewalWaitMs: { min: 5, max: 15 },
			lookupSettleMs: SETTLE_MS,
			// A send made after a lost answer is listed within the lag (a third of SETTLE_MS at most).
			lookupEvidenceWaitMs: 2 * SETTLE_MS,
			heldKeyWaitMs: 200,
		});
		// One credential for the whole run, as n8n keeps it: its token lives across workflows.
		store = storeFor(sandbox);
		(await processedDataStore()).reset();
	});
	afterAll(async () => {
		resetProcessState();
	});

	test('the invariants hold after every workflow', async () => {
		console.log(
			`randomized reliability run: seed ${SEED}, ${OPERATIONS} operations (replay: RELIABILITY_SEED=${SEED} npx jest test/reliability/randomized)`,
		);
		const random = seededRandom(SEED);
		const pick = <T,>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
		const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
		const chance = (p: number) => random() < p;
		const weighted = <T,>(entries: Array<[T, number]>): T => {
			let draw = random() * entries.reduce((sum, [, weight]) => sum + weight, 0);
			for (const [value, weight] of entries) if ((draw -= weight) < 0) return value;
			return entries[0][0];
		};
		const users = sandbox.orgs.primary.userIds.slice(0, -OTHER_CLIENT_USERS);
		const otherClientUsers = sandbox.orgs.primary.userIds.slice(-OTHER_CLIENT_USERS);
		// Which workflows run in a busy organization: a stream of its own, so that the workflows drawn
		// are the same as in a run where every organization is quiet.
		const busyDraw = seededRandom(SEED + 1);
		const someUsers = (count: number) => [
			...new Set(Array.from({ length: count }, () => pick(users))),
		];
		/** The users recurring messages go to, workflow after workflow. */
		const regulars = users.slice(0, 4);

		const ledger = new SendLedger();
		const attribution = new Attribution();
		const scheduledIds: string[] = [];
		const sentIds: string[] = [];
		const tally = {
			workflows: 0,
			operations: 0,
			faultsAdded: 0,
			faultsHit: 0,
			errorRuns: 0,
			errorItems: 0,
			recovered: 0,
			extraChecks: 0,
			retryOnFail: 0,
			executionRetries: 0,
			keyed: 0,
			repeatedEvents: 0,
			skippedByKey: 0,
			sentByEarlierTry: 0,
			recurringItems: 0,
			lostAnswers: 0,
			otherClientSends: 0,
		};
		/** Lost answers of sends and how their items ended, in quiet and in busy organizations. */
		const byOrganization = {
			quiet: { workflows: 0, lostAnswers: 0, unknown: 0, notShownUpToDate: 0 },
			busy: { workflows: 0, lostAnswers: 0, unknown: 0, notShownUpToDate: 0 },
		};
		/** Lost answers where the API gave what decides them: a busy organization (another client's
		 * sends can show the list up to date) whose list was informative throughout the run. */
		const withEvidence = {
			lostAnswers: 0,
			unknown: 0,
			notShownUpToDate: 0,
			/** Of those, in a workflow whose API clock was moved. */
			afterClockMoved: 0,
			twin: 0,
		};
		const unknownSoFar = () => {
			const { notInformative, notShownUpToDate, reasonNotShown, twin } = attribution.unknown;
			return {
				all: notInformative + notShownUpToDate + reasonNotShown + twin,
				notShownUpToDate,
				twin,
			};
		};
		/** Keyed send workflows run so far: a later workflow may deliver the same events again. */
		const keyedRuns: Array<{
			op: Op;
			parameters: IDataObject;
			items: IDataObject[];
			combined: boolean;
			intended: IntendedSend[];
		}> = [];
		const outcomes: Record<Op, { ok: number; failed: number }> = Object.fromEntries(
			OP_WEIGHTS.map(([op]) => [op, { ok: 0, failed: 0 }]),
		) as Record<Op, { ok: number; failed: number }>;

		let previousClockOffsetMs = 0;
		while (tally.operations < OPERATIONS) {
			const workflow = ++tally.workflows;
			const organization = busyDraw() < 0.5 ? 'busy' : 'quiet';
			byOrganization[organization].workflows++;
			useTimings({
				lookupEvidenceWaitMs: organization === 'busy' ? BUSY_EVIDENCE_WAIT_MS : 2 * SETTLE_MS,
			});
			const op = weighted(OP_WEIGHTS);
			const itemCount = between(1, 6);
			const continueOnFail = chance(0.5);
			let parameters: IDataObject;
			let items: IDataObject[];
			let itemsOfTitle: (title: string) => number[] = () => [];
			/** What each item of a Send or Schedule was sent for (per item, or the one combined send). */
			let intended: IntendedSend[] = [];
			let intendedOf: (itemIndex: number) => IntendedSend | undefined = () => undefined;
			let retryOnFail = false;

			switch (op) {
				case 'send':
				case 'schedule': {
					retryOnFail = chance(0.3);
					if (keyedRuns.length > 0 && chance(0.08)) {
						// The same events again (an ERP delivering twice): every keyed send is skipped.
						const earlier = pick(keyedRuns);
						({ parameters, items, intended } = earlier);
						const combinedEarlier = earlier.combined;
						itemsOfTitle = (title) =>
							combinedEarlier
								? items.map((_, index) => index)
								: items.flatMap((item, index) => (item.title === title ? [index] : []));
						intendedOf = (index) => (combinedEarlier ? intended[0] : intended[index]);
						tally.repeatedEvents += items.length;
						break;
					}
					const combined = op === 'send' && chance(0.15);
					const batchSize = chance(0.3) ? between(1, 3) : 1000;
					const schedule =
						op === 'schedule' ? { operation: 'schedule', scheduledAt: '={{ $json.at }}' } : {};
					const audience = weighted<string>([
						['userIds', 86],
						['allUsers', 7],
						['activeUsers', 7],
					]);
					// Some items carry a recurring message to some of the regular users. Within one workflow the
					// items of one message go to different users (one audience read from the API: one item), so
					// that each registered send tells the item it stands for.
					const regularsLeft = new Map<string, string[]>();
					items = Array.from({ length: itemCount }, (_, item) => {
						const event = combined ? `w${workflow} all` : `w${workflow} i${item}`;
						const at = DateTime.now()
							.plus({ hours: between(1, 72) })
							.toISO();
						const message = chance(0.35) ? pick(RECURRING) : undefined;
						const left = message && (regularsLeft.get(message.title) ?? [...regulars]);
						const to = !left
							? []
							: audience === 'userIds'
								? left.splice(between(0, left.length - 1), between(1, 2))
								: left.splice(0);
						if (message && left && to.length > 0) {
							regularsLeft.set(message.title, left);
							tally.recurringItems++;
							return { event, ...message, to, at };
						}
						return {
							event,
							title: `R${SEED} w${workflow} i${item}`,
							body: UNIQUE_BODY,
							to: someUsers(between(1, batchSize < 1000 ? 5 : 3)),
							at,
						};
					});
					const keyed = chance(0.3);
					if (keyed) {
						for (const item of items) item.key = `key ${item.event}`;
						// The same event twice in one run: the copy carries the same key and title.
						if (!combined && chance(0.5)) items.push({ ...items[between(0, items.length - 1)] });
						tally.keyed++;
					}
					parameters = sendParameters({
						...schedule,
						title: '={{ $json.title }}',
						body: '={{ $json.body }}',
						userIds: '={{ $json.to }}',
						audience,
						sendMode: combined ? 'combined' : 'perItem',
						options: { batchSize, ...(keyed ? { idempotencyKey: '={{ $json.key }}' } : {}) },
					});
					const intendedOfItem = (item: IDataObject, userIds: string[]): IntendedSend => ({
						event: item.event as string,
						title: item.title as string,
						body: item.body as string,
						...(audience === 'userIds' ? { userIds } : {}),
					});
					// Combined: one send with the first item's message stands for every item.
					intended = combined
						? [
								intendedOfItem(
									items[0],
									items.flatMap((item) => item.to as string[]),
								),
							]
						: items.map((item) => intendedOfItem(item, item.to as string[]));
					intendedOf = (index) => (combined ? intended[0] : intended[index]);
					if (keyed) keyedRuns.push({ op, parameters, items, combined, intended });
					itemsOfTitle = (title) =>
						combined
							? items.map((_, index) => index)
							: items.flatMap((item, index) => (item.title === title ? [index] : []));
					break;
				}
				case 'cancel': {
					const pool = chance(0.75) && scheduledIds.length > 0 ? scheduledIds : sentIds;
					items = Array.from({ length: itemCount }, () => ({
						id: pool.length > 0 ? pick(pool) : 'no-such-send',
					}));
					parameters = {
						resource: 'notification',
						operation: 'cancel',
						notificationId: '={{ $json.id }}',
						options: { ignoreIfNotScheduled: chance(0.5) },
					};
					break;
				}
				case 'get': {
					items = Array.from({ length: itemCount }, () => ({
						id: sentIds.length > 0 ? pick(sentIds) : 'no-such-send',
					}));
					parameters = {
						resource: 'notification',
						operation: 'get',
						notificationId: '={{ $json.id }}',
						options: { deliveries: pick(['include', 'omit', 'split']) },
					};
					break;
				}
				case 'listSends':
					items = Array.from({ length: Math.min(itemCount, 2) }, () => ({}));
					parameters = { resource: 'notification', operation: 'getMany', limit: between(1, 30) };
					break;
				case 'users':
					items = Array.from({ length: Math.min(itemCount, 2) }, () => ({}));
					parameters = chance(0.5)
						? { resource: 'user', operation: 'getMany', returnAll: true }
						: { resource: 'user', operation: 'getMany', limit: between(1, 80) };
					break;
				case 'activeUsers':
					items = Array.from({ length: Math.min(itemCount, 2) }, () => ({}));
					parameters = {
						resource: 'user',
						operation: 'getActive',
						options: { idsOnly: chance(0.5) },
					};
					break;
			}

			// Random conditions for this workflow.
			if (chance(0.65)) {
				for (let index = between(1, 3); index > 0; index--) {
					const kind = pick(KINDS);
					const endpoint = chance(0.1) ? REFRESH : chance(0.1) ? '*' : pick(ENDPOINTS[op]);
					const fault: FaultSpec = { endpoint, kind, times: chance(0.7) ? 1 : between(2, 4) };
					if (kind === 'rateLimit')
						Object.assign(fault, {
							retryAfterSeconds: 0,
							...(chance(0.1) ? { retryAfterAsDate: true } : {}),
						});
					if (kind === 'delay') fault.delayMs = between(0, 30);
					if (kind === 'status5xx')
						Object.assign(fault, {
							status: pick([500, 502, 503, 504]),
							afterProcessing: chance(0.5),
						});
					// The send of a lost answer listed late, or registered a moment after its 5xx (within the settle wait).
					const onSends = endpoint === SEND || endpoint === '*';
					if (onSends && kind === 'resetAfter' && chance(0.3))
						fault.listDelayMs = between(1, SETTLE_MS / 3);
					if (onSends && (kind === 'resetAfter' || fault.afterProcessing === true) && chance(0.3))
						fault.registerAfterMs = between(1, SETTLE_MS / 3);
					sandbox.addFault(fault);
					tally.faultsAdded++;
				}
			}
			// A failure that outlasts the node's own retries on a later send of the run: what makes n8n
			// run the node (Retry On Fail) or the execution (a retry) again.
			if ((op === 'send' || op === 'schedule') && chance(0.25)) {
				const refusal = chance(0.5);
				sandbox.addFault({
					endpoint: SEND,
					kind: refusal ? 'forbidden' : 'status5xx',
					skip: between(0, 3),
					times: refusal ? 1 : between(4, 8),
				});
				tally.faultsAdded++;
			}
			const shapes = {
				listShape: pick(LIST_SHAPES),
				errorShape: pick(ERROR_SHAPES),
				listIncludesTargets: chance(0.85),
			};
			// How much the list shows, and the API's clock. New sends are listed late by less than the
			// settle wait (a list lagging longer can make a second send: docs/reliability.md).
			const listSettings = {
				listLagMs: chance(0.2) ? between(1, SETTLE_MS / 3) : 0,
				listOmitsFields: chance(0.1) ? OMITTABLE.filter(() => chance(0.4)) : [],
				listIgnoresSkip: chance(0.05),
				storedTitleMaxLength: chance(0.05) ? 12 : null,
				clockOffsetMs: chance(0.3) ? between(-120_000, 120_000) : 0,
				// Times written without a zone (the spec says only "ISO 8601"): nothing places them.
				timesWithoutZone: chance(0.05) ? 'UTC' : null,
				// A schedule already past when it arrives: shown as not scheduled, or as when it went out.
				pastScheduledAtShownAs: pick(['null', 'asSent'] as const),
			};
			sandbox.configure({ ...shapes, ...listSettings });
			// The API's clock set apart from where the workflow before left it (a clock stepped): what the
			// process placed of it from its earlier sends no longer holds.
			const clockMoved = listSettings.clockOffsetMs !== previousClockOffsetMs;
			previousClockOffsetMs = listSettings.clockOffsetMs;
			const informativeList =
				shapes.listIncludesTargets &&
				listSettings.listOmitsFields.length === 0 &&
				!listSettings.listIgnoresSkip &&
				listSettings.storedTitleMaxLength === null &&
				listSettings.timesWithoutZone === null;
			/** Whether the list showed enough to prove every lost answer's outcome in a part of the log. */
			const listConditions = (from: number, to?: number): ListConditions => {
				if (!informativeList)
					return { informative: false, why: JSON.stringify({ ...shapes, ...listSettings }) };
				const failed = sandbox
					.requestLog()
					.slice(from, to)
					.find(
						(entry) =>
							[SEND_LIST, DETAIL, REFRESH].includes(entry.endpoint) &&
							(entry.status !== 200 || (entry.fault !== undefined && entry.fault !== 'delay')),
					);
				return failed
					? {
							informative: false,
							why: `${failed.endpoint} answered ${failed.status} (${failed.fault ?? failed.limitedBy ?? 'no fault'})`,
						}
					: { informative: true };
			};
			if (chance(0.05)) sandbox.expireAccessTokens();
			// A slow database under n8n's store of Idempotency Keys: each statement held a while.
			(await processedDataStore()).stall = chance(0.1)
				? () => sleep(between(0, SETTLE_MS))
				: undefined;

			const logStart = sandbox.requestLog().length;
			const workflowRun: WorkflowRunOptions = nodeWorkflow({
				type: 'companionPush',
				parameters,
				items,
				continueOnFail,
				credentials: store,
				settings: retryOnFail
					? { retryOnFail: true, maxTries: between(2, 3), waitBetweenTries: 0 }
					: undefined,
			});
			if (retryOnFail) tally.retryOnFail++;
			let run: NodeRunResult;
			let executionRetry: { logStart: number; run: NodeRunResult } | undefined;
			// Another client's sends, beside the node's for as long as the workflow runs: through the
			// sandbox's own side, so they take no fault meant for the node and stay out of the request
			// log that the ledger and the attribution read.
			const otherClient =
				organization === 'busy'
					? setInterval(() => {
							tally.otherClientSends++;
							sandbox.sendAsAnotherClient('primary', {
								title: `Other client ${tally.otherClientSends}`,
								body: 'Sent by another integration of the organization.',
								target_user_ids: [
									otherClientUsers[tally.otherClientSends % otherClientUsers.length],
								],
							});
						}, OTHER_CLIENT_EVERY_MS)
					: undefined;
			try {
				const firstRun = await runWorkflow(workflowRun);
				run = nodeResult(firstRun);
				// A failed workflow retried as from n8n's Executions list, sometimes under faults again.
				if (run.error && (op === 'send' || op === 'schedule') && chance(0.5)) {
					if (chance(0.5)) sandbox.clearFaults();
					const retryLogStart = sandbox.requestLog().length;
					executionRetry = {
						logStart: retryLogStart,
						run: nodeResult(await retryWorkflow(workflowRun, firstRun)),
					};
					tally.executionRetries++;
				}
			} finally {
				clearInterval(otherClient);
				sandbox.clearFaults();
			}
			tally.operations += items.length;
			const log = sandbox.requestLog().slice(logStart);
			tally.faultsHit += log.filter((entry) => entry.fault !== undefined).length;

			const context = () =>
				`workflow ${workflow} (${op}, ${organization} organization, ${items.length} items, continueOnFail ${continueOnFail}, retryOnFail ${retryOnFail}, execution retried ${executionRetry !== undefined}, ${JSON.stringify({ ...shapes, ...listSettings })}; seed ${SEED})`;
			try {
				// Which intended send each registered send stands for (throws for a send nobody asked for).
				attribution.attribute(registeredIn(log), intended);
				const eventOf = (send: { id: string; title: string }) =>
					attribution.eventOf(send.id) ?? send.title;
				const registered = ledger.check(sandbox, logStart, run, itemsOfTitle, {
					logEnd: executionRetry?.logStart,
					eventOf,
				});
				if (executionRetry)
					registered.push(
						...ledger.check(sandbox, executionRetry.logStart, executionRetry.run, itemsOfTitle, {
							eventOf,
						}),
					);
				const unknownBefore = unknownSoFar();
				const parts: Array<[NodeRunResult, number, number | undefined]> = executionRetry
					? [
							[run, logStart, executionRetry.logStart],
							[executionRetry.run, executionRetry.logStart, undefined],
						]
					: [[run, logStart, undefined]];
				for (const [result, from, to] of parts) {
					if (op === 'send' || op === 'schedule') {
						everyItemAnswered(result, items.length);
						const conditions = listConditions(from, to);
						const unknownBeforePart = unknownSoFar();
						attribution.checkOutputs(result, intendedOf, conditions);
						const sends = sandbox
							.requestLog()
							.slice(from, to)
							.filter((entry) => entry.endpoint === SEND && !isProbeSend(entry));
						const lost = sends.filter(
							(entry) =>
								entry.status === 0 || entry.status >= 500 || entry.fault === 'malformedJson',
						).length;
						tally.lostAnswers += lost;
						byOrganization[organization].lostAnswers += lost;
						if (organization === 'busy' && conditions.informative) {
							const unknownAfterPart = unknownSoFar();
							withEvidence.lostAnswers += lost;
							withEvidence.unknown += unknownAfterPart.all - unknownBeforePart.all;
							const notShownUpToDate =
								unknownAfterPart.notShownUpToDate - unknownBeforePart.notShownUpToDate;
							withEvidence.notShownUpToDate += notShownUpToDate;
							if (clockMoved) withEvidence.afterClockMoved += notShownUpToDate;
							withEvidence.twin += unknownAfterPart.twin - unknownBeforePart.twin;
						}
					}
					tally.skippedByKey += result.items.filter((item) => item.json.skipped === true).length;
					tally.sentByEarlierTry += result.items.filter(
						(item) => item.json.sentByEarlierTry === true,
					).length;
				}
				const unknownAfter = unknownSoFar();
				byOrganization[organization].unknown += unknownAfter.all - unknownBefore.all;
				byOrganization[organization].notShownUpToDate +=
					unknownAfter.notShownUpToDate - unknownBefore.notShownUpToDate;
				if (executionRetry) run = executionRetry.run;
				const errors = errorsOf(run);
				if (run.error) tally.errorRuns++;
				tally.errorItems += errors.length - (run.error ? 1 : 0);
				outcomes[op][errors.length > 0 ? 'failed' : 'ok']++;
				const outputs = run.items.map((item) => item.json);
				tally.recovered += outputs.filter((json) => json.recoveredAfter !== undefined).length;

				// What each operation promises on top of the invariants.
				if (op === 'send' || op === 'schedule') {
					for (const send of registered) (op === 'schedule' ? scheduledIds : sentIds).push(send.id);
					// Each id was checked against its item's own send (Attribution, invariant 5).
					tally.extraChecks += outputs.filter(
						(json) => typeof json.id === 'string' || typeof json.earlierSendId === 'string',
					).length;
				}
				if (op === 'cancel') {
					const byId = new Map(sandbox.notifications().map((send) => [send.id, send.status]));
					for (const json of outputs) {
						if (json.canceled === undefined) continue;
						tally.extraChecks++;
						const status = byId.get(json.id as string);
						if (json.canceled === true && status !== 'canceled')
							throw new InvariantViolation(`cancel of ${json.id} said done, the send is ${status}`);
						if (json.canceled === false && status === 'canceled')
							throw new InvariantViolation(
								`cancel of ${json.id} said not canceled, the send is canceled`,
							);
					}
				}
				if (op === 'get') {
					for (const [index, item] of run.items.entries()) {
						if (item.json.error !== undefined) continue;
						tally.extraChecks++;
						const asked = items[pairedIndex(item.pairedItem) ?? index]?.id;
						const got = item.json.notificationId ?? item.json.id;
						if (got !== asked) throw new InvariantViolation(`Get of ${asked} gave ${got}`);
					}
				}
			} catch (error) {
				if (error instanceof InvariantViolation) error.message = `${context()}:\n${error.message}`;
				if (error instanceof InvariantViolation && process.env.RELIABILITY_DUMP) {
					const outcome = (result: NodeRunResult) => ({
						error: result.error?.message,
						description: result.error?.description,
						items: result.items.map((item) => item.json),
					});
					const requests = log.map((entry) => [
						entry.endpoint,
						entry.status,
						entry.fault,
						entry.notificationId,
						(entry.body as IDataObject | undefined)?.title,
						(entry.body as IDataObject | undefined)?.target_user_ids,
					]);
					console.log(
						JSON.stringify(
							{
								items,
								run: outcome(run),
								retry: executionRetry && outcome(executionRetry.run),
								requests,
							},
							null,
							1,
						),
					);
				}
				throw error;
			}
		}

		// The sandbox's own records, once more: per intended send, nobody among its recipients twice.
		const perEvent = new Map<string, Map<string, number>>();
		for (const send of sandbox.notifications('primary')) {
			const event = attribution.eventOf(send.id);
			if (event === undefined) continue;
			const perUser = perEvent.get(event) ?? new Map<string, number>();
			for (const userId of new Set(send.target_user_ids))
				perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
			perEvent.set(event, perUser);
		}
		const twice = [...perEvent.entries()].flatMap(([event, perUser]) =>
			[...perUser.entries()]
				.filter(([, times]) => times > 1)
				.map(([userId]) => `${userId} in ${event}`),
		);
		expect(twice).toEqual([]);
		const { notInformative, notShownUpToDate, reasonNotShown, twin } = attribution.unknown;

		console.log(
			[
				`randomized reliability run (seed ${SEED}): ${tally.operations} operations in ${tally.workflows} workflows`,
				`faults: ${tally.faultsAdded} injected, ${tally.faultsHit} hit a request; ${tally.recovered} sends recovered from the list after a lost answer`,
				`outcomes: ${ledger.registered} sends registered, ${tally.errorRuns} workflows stopped by an error, ${tally.errorItems} error items; per operation ${JSON.stringify(outcomes)}`,
				`n8n's repeats: ${tally.retryOnFail} workflows with Retry On Fail, ${tally.executionRetries} failed workflows retried, ${tally.keyed} keyed workflows, ${tally.repeatedEvents} events delivered again; ${tally.sentByEarlierTry} items answered from an earlier try, ${tally.skippedByKey} skipped by their key`,
				`lost answers (5xx, reset, unreadable 202) of sends: ${tally.lostAnswers}; items ended "unknown": ${notInformative + notShownUpToDate + reasonNotShown + twin} (${notInformative} with a list that showed too little or a read that failed, ${notShownUpToDate} with no later send of the process listed to show the list up to date, ${reasonNotShown} named by a stopping error without their reason, ${twin} beside an identical send of unknown outcome); ${attribution.acceptedIdNotFound} accepted without the id the list should have given; ${tally.recurringItems} items of recurring messages`,
				`share of "unknown": ${percent(notInformative + notShownUpToDate + reasonNotShown + twin, tally.lostAnswers)} of the lost answers, ${percent(notShownUpToDate, tally.lostAnswers)} for want of a later send listed`,
				`busy organizations: ${byOrganization.busy.workflows} of ${tally.workflows} workflows ran beside another client of the organization (${tally.otherClientSends} sends of it); share of "unknown" ${shareOf(byOrganization.quiet)} in quiet organizations, ${shareOf(byOrganization.busy)} in busy ones`,
				`where the API gave evidence (a busy organization, an informative list): share of "unknown" ${percent(withEvidence.unknown, withEvidence.lostAnswers)} of ${withEvidence.lostAnswers} lost answers (${withEvidence.notShownUpToDate} for want of a later send listed, ${withEvidence.afterClockMoved} of them with the API's clock moved since the workflow before; ${withEvidence.twin} beside an identical send of unknown outcome)`,
				`invariants checked: ${ledger.checks + tally.extraChecks + perEvent.size} (${ledger.checks} after each workflow, ${tally.extraChecks} per-operation, ${perEvent.size} intended sends at the end)`,
			].join('\n'),
		);
		expect(tally.operations).toBeGreaterThanOrEqual(OPERATIONS);
		// The run exercised what it claims: faults were met, sends recovered, errors reported.
		expect(tally.faultsHit).toBeGreaterThan(OPERATIONS / 10);
		expect(tally.recovered).toBeGreaterThan(0);
		expect(tally.errorRuns + tally.errorItems).toBeGreaterThan(0);
		expect(tally.executionRetries).toBeGreaterThan(0);
		expect(tally.sentByEarlierTry).toBeGreaterThan(0);
		expect(tally.skippedByKey).toBeGreaterThan(0);
		expect(tally.recurringItems).toBeGreaterThan(0);
		expect(tally.lostAnswers).toBeGreaterThan(0);
		// Both kinds of organization were run, and the other client did send beside the node.
		expect(byOrganization.busy.workflows).toBeGreaterThan(0);
		expect(byOrganization.quiet.workflows).toBeGreaterThan(0);
		expect(tally.otherClientSends).toBeGreaterThan(0);
		// The shares of "unknown" are reported above, not asserted: a lookup's wait here is short
		// (2.5 s in a busy organization), and on a loaded machine it may end before another client's
		// send is later than the loss by the API's clock as the Date header bounds it (whole seconds).
		// Alone on the machine, where the API gave evidence, the items left "unknown" were those beside
		// an identical send of unknown outcome and those of a workflow whose API clock was moved. That
		// another client's send proves a send absent is asserted where it is exact:
		// test/reliability/exact-or-unknown-settle.test.cts.
	}, 900_000); // 3 to 7 min on a busy 2-core machine (CI runs it beside the end-to-end files)
});

function shareOf(organization: {
	lostAnswers: number;
	unknown: number;
	notShownUpToDate: number;
}): string {
	const { lostAnswers, unknown, notShownUpToDate } = organization;
	return `${percent(unknown, lostAnswers)} of ${lostAnswers} lost answers (${percent(notShownUpToDate, lostAnswers)} for want of a later send listed)`;
}

function percent(part: number, whole: number): string {
	return whole === 0 ? 'none' : `${((100 * part) / whole).toFixed(1)}%`;
}

function pairedIndex(paired: unknown): number | undefined {
	const first = Array.isArray(paired) ? paired[0] : paired;
	if (typeof first === 'number') return first;
	return typeof first === 'object' && first !== null ? (first as { item: number }).item : undefined;
}
