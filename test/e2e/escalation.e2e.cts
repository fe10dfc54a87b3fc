/**
 * The safety alert example (examples/safety-alert-escalation.json) in a running n8n (`n8n start`),
 * against the in-process sandbox on a clock this test moves, and a local mail server
 * (devkit/smtpSink.cts), with the ladder 1, 2, 3 minutes instead of 15, 30, 45. Published, then its
 * manual part sends the alert to everyone; people open at different steps through the sandbox's
 * admin taps (`POST /__sandbox/tap`). Each step once per person: one reminder push for level 1, an
 * e-mail per person for level 2 (and per person no phone reached), one push to the team lead for
 * level 3, a stand-down push for those who opened after being escalated; nothing else, and nothing
 * again at the next read.
 *
 * The sandbox's clock moves only when the test says (a minute and a second past each deadline, once
 * the previous step is done), and n8n polls every real minute: so every poll sees each deadline
 * either not yet or passed, and each tap lands between the two levels it is meant for. Every wait
 * is for a state: a publication, an execution, sends, mails, polls.
 */
import {
	ALERT_FORM_ANSWERS,
	alertFormAuthorization,
	EXAMPLE_SECRETS,
	exampleWorkflows,
	importCredentials,
	N8nHome,
	N8nRestClient,
	request,
	type RunningN8n,
	type SmtpSink,
	startSmtpSink,
	waitFor,
} from './support/index.cts';
import { startSandbox, type Sandbox, type UserKind } from '../../sandbox/index.cts';

const WORKFLOW = 'cpExampleEscalation';
const TRIGGER = 'Alert Ladder';
const SEND = 'POST /push-notification/send';
const LIST = 'GET /push-notification/list';
const MINUTE_MS = 60_000;
/** The example's team lead (examples/follow-up-report.json's ops user too): the sandbox's first user. */
const LEAD = 'e533773a0ba45c0000000000';
/** Kinds whose phones the alert reaches (sandbox/README.md, Users and phones). */
const REACHED: UserKind[] = [
	'onePhone',
	'twoPhones',
	'threePhones',
	'flaky',
	'partlyUninstalled',
	'oneLoggedOutOfTwo',
];
/** Kinds no phone reaches: no active app, or every phone fails for good. */
const NOT_REACHED: UserKind[] = [
	'noPhone',
	'loggedOut',
	'noPermission',
	'uninstalled',
	'unreachable',
];

interface GroupItem {
	event: string;
	level?: number;
	groupKey: string;
	userIds: string[];
}

describe('the safety alert example with its alert ladder in a running n8n', () => {
	let sandbox: Sandbox;
	let smtp: SmtpSink;
	let home: N8nHome;
	let n8n: RunningN8n;
	let rest: N8nRestClient;
	let example: { nodes: any[] };
	let alertId: string;
	let sentAt: number;
	let emailOf: Map<string, string>;
	let notReached: string[];
	let reached: string[];
	/** Open before level 1, between levels 1 and 2, between levels 2 and 3. */
	let opensFirst: string;
	let opensAfterLevel1: string;
	let opensAfterLevel2: string;

	const sends = () => sandbox.requestLog().filter((entry) => entry.endpoint === SEND);
	const sendsTitled = (prefix: string) =>
		sends().filter((entry) => String((entry.body as { title?: string }).title).startsWith(prefix));
	const mailsTo = (userId: string) =>
		smtp.mails.filter((mail) => mail.to.includes(emailOf.get(userId)!.toLowerCase()));
	const without = (people: string[], ...left: string[]) =>
		people.filter((userId) => !left.includes(userId)).sort();

	/** Moves the API's clock to `minutes` and a second after the alert went out. */
	const moveClockTo = (minutes: number) =>
		sandbox.clock.set(new Date(sentAt + minutes * MINUTE_MS + 1000).toISOString());
	/** Opens the alert on one phone of `userId`, as a builder would with the sandbox's admin API. */
	const open = async (userId: string) => {
		const tapped = await request(`${sandbox.baseUrl}/__sandbox/tap`, {
			method: 'POST',
			body: { notificationId: alertId, userId },
		});
		expect(tapped.status).toBe(200);
	};
	/** Every execution of the example finished (none new, running or waiting). */
	const executionsDone = () =>
		waitFor(
			'every execution to finish',
			async () => {
				const list = await rest.listExecutions(WORKFLOW);
				return (
					list.every((execution) => !['new', 'running', 'waiting'].includes(execution.status)) &&
					list
				);
			},
			60_000,
			500,
		);
	/** A step comes at the next poll (n8n's, every real minute) and its execution. */
	const untilNextPoll = <T,>(what: string, check: () => T | false | Promise<T | false>) =>
		waitFor(what, check, 2 * MINUTE_MS + 30_000, 500);

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0, seedUsers: 30, deliveryMs: 500, clock: 'manual' });
		smtp = await startSmtpSink();
		home = await N8nHome.create();
		await home.useSandbox(sandbox);
		await importCredentials(
			home.env,
			[
				{
					id: 'cpExampleSmtp',
					name: 'SMTP (your mail server)',
					type: 'smtp',
					data: {
						host: '127.0.0.1',
						port: smtp.port,
						secure: false,
						disableStartTls: true,
						user: '',
						password: '',
					},
				},
			],
			{ runtime: home.runtime },
		);
		example = structuredClone(
			exampleWorkflows().find((entry) => entry.file === 'safety-alert-escalation.json')!.workflow,
		);
		const trigger = example.nodes.find((node: { name: string }) => node.name === TRIGGER);
		expect([trigger.parameters.deadlineMode, trigger.parameters.openDeadlines]).toEqual([
			'ladder',
			'15, 30, 45',
		]);
		trigger.parameters.openDeadlines = '1, 2, 3';
		await home.importWorkflows([example]);
		n8n = await home.start();
		rest = new N8nRestClient(n8n.url);
		await rest.login();
	});

	afterAll(async () => {
		await n8n?.stop();
		await smtp?.stop();
		await sandbox?.stop();
		home?.remove();
	});

	test('published: its trigger polls once and records where to start', async () => {
		const before = sandbox.requestLog().length;
		await rest.activateWorkflow(WORKFLOW);
		const status = await waitFor(
			'the example to be published',
			async () => {
				const current = await rest.call('GET', `/workflows/${WORKFLOW}/publication-status`);
				return current.status !== 'in_progress' && current.status !== 'pending' && current;
			},
			60_000,
			250,
		);
		expect(status.status).toBe('published');
		await waitFor(
			'the activation poll',
			() =>
				sandbox
					.requestLog()
					.slice(before)
					.some((entry) => entry.endpoint === LIST),
			30_000,
			250,
		);
		// The alert comes after the point the trigger starts from, on the API's clock too.
		await sandbox.clock.advance(1000);
	});

	test('Send the Alert (a manual run, its form filled in as a user types it): one send to every user', async () => {
		// As "Execute workflow" in the editor: a manual run from the form, which waits for its test
		// form to be submitted; the form's fields as the form page posts them, as a user typed them.
		const waiting = await rest.call('POST', `/workflows/${WORKFLOW}/run`, {
			triggerToStartFrom: { name: 'Send the Alert' },
		});
		expect(waiting).toMatchObject({ waitingForWebhook: true });
		const form = example.nodes.find((node: { name: string }) => node.name === 'Send the Alert');
		const fields = new FormData();
		ALERT_FORM_ANSWERS.forEach((answer, index) => fields.append(`field-${index}`, answer));
		expect(form.parameters.formFields.values).toHaveLength(ALERT_FORM_ANSWERS.length);
		const submitted = await fetch(`${n8n.url}/form-test/${form.webhookId}`, {
			method: 'POST',
			headers: { authorization: alertFormAuthorization(EXAMPLE_SECRETS) }, // the form's login
			body: fields,
		});
		expect(submitted.status).toBe(200);
		await waitFor(
			'the manual execution',
			async () => {
				const runs = (await rest.listExecutions(WORKFLOW)).filter(
					(execution) => execution.mode === 'manual',
				);
				return runs.length === 1 && runs[0].status === 'success';
			},
			60_000,
			500,
		);
		const [alert] = sandbox.notifications('primary');
		expect(sandbox.notifications('primary')).toHaveLength(1);
		const { primary } = sandbox.orgs;
		expect([...alert.target_user_ids].sort()).toEqual([...primary.userIds].sort());
		alertId = alert.id;
		sentAt = Date.parse(alert.sent_at!);
		// Every delivery and retry done before any deadline (the flaky phones reached by their retry).
		await sandbox.clock.advance(5000);
		expect(sandbox.notifications('primary')[0].status).not.toBe('sending');

		notReached = primary.userIds.filter((userId) => NOT_REACHED.includes(primary.kindOf(userId)!));
		reached = primary.userIds.filter((userId) => REACHED.includes(primary.kindOf(userId)!));
		expect(notReached.length + reached.length).toBe(primary.userIds.length);
		[opensFirst, opensAfterLevel1, opensAfterLevel2] = primary.usersOfKind('onePhone', 3);
		expect(opensAfterLevel2).toBeDefined();
		expect(primary.userIds[0]).toBe(LEAD);
		await open(opensFirst);

		const token = await request(`${sandbox.baseUrl}/auth/oauth/v2/refresh`, {
			method: 'POST',
			body: {
				client_id: primary.clientId,
				client_secret: primary.clientSecret,
				refresh_token: primary.refreshToken,
			},
		});
		const users = await request(`${sandbox.baseUrl}/user/list?skip=0&limit=1000`, {
			headers: { authorization: `Bearer ${token.json.access_token}` },
		});
		emailOf = new Map(
			(users.json as Array<{ id: string; email: string }>).map((user) => [user.id, user.email]),
		);
	});

	test('15 minutes (here 1): one reminder push to everyone reached who has not opened, keyed by its group; an e-mail to each person no phone reached', async () => {
		await moveClockTo(1);
		const [reminder] = await untilNextPoll('the reminder', () => {
			const found = sendsTitled('Reminder: ');
			return found.length > 0 && found;
		});
		expect(reminder.body).toMatchObject({
			title: 'Reminder: Safety alert: leave building B',
			body: 'Gas leak in building B. Leave by the nearest exit now and gather at assembly point 3.',
		});
		expect([...(reminder.body as { target_user_ids: string[] }).target_user_ids].sort()).toEqual(
			without(reached, opensFirst),
		);
		await untilNextPoll('an e-mail to each person no phone reached', () =>
			notReached.every((userId) => mailsTo(userId).length > 0),
		);
		for (const userId of notReached)
			expect(mailsTo(userId)[0].data).toContain('could not reach you');
		await executionsDone();
		await open(opensAfterLevel1);
	});

	test('30 minutes (here 2): an e-mail to each person still not opened; the one who opened after the reminder is stood down', async () => {
		await moveClockTo(2);
		const level2 = without(reached, opensFirst, opensAfterLevel1);
		await untilNextPoll(
			'an e-mail to each person at level 2, and a stand-down',
			() =>
				level2.every((userId) => mailsTo(userId).length > 0) &&
				sendsTitled('Stand down: ').length > 0,
		);
		expect(mailsTo(level2[0])[0].data).toContain('have not opened this safety alert');
		expect(sendsTitled('Stand down: ')[0].body).toMatchObject({
			title: 'Stand down: 1 opened the alert late',
			target_user_ids: [LEAD],
		});
		await executionsDone();
		await open(opensAfterLevel2);
	});

	test('45 minutes (here 3): one push to the team lead about the people still not opened; the one who opened after the e-mail is stood down', async () => {
		await moveClockTo(3);
		await untilNextPoll(
			'the team lead push and a second stand-down',
			() =>
				sendsTitled('Alert not opened by ').length > 0 && sendsTitled('Stand down: ').length > 1,
		);
		const level3 = without(reached, opensFirst, opensAfterLevel1, opensAfterLevel2);
		expect(sendsTitled('Alert not opened by ')[0].body).toMatchObject({
			// The minutes come from the event: 3 on this ladder, not the example's 45.
			title: `Alert not opened by ${level3.length} people in 3 min`,
			body: '"Safety alert: leave building B": not opened on any phone 3 minutes after it went out (level 3 of the alert ladder). Please call them: their user IDs are in the execution.',
			target_user_ids: [LEAD],
		});
		await executionsDone();
	});

	test('the next read of the alert repeats nothing; the sandbox, the mails and the executions show every step once per person', async () => {
		const readsOfAlert = () =>
			sandbox
				.requestLog()
				.filter(
					(entry) =>
						entry.endpoint === 'GET /push-notification/:id' && entry.path.endsWith(alertId),
				).length;
		const readsBefore = readsOfAlert();
		// Past every back-off of the alert, so the next poll reads it again: a step told twice would
		// be told then.
		await moveClockTo(8);
		await untilNextPoll('one more read of the alert', () => readsOfAlert() > readsBefore);
		const runs = await executionsDone();

		// The sandbox: the alert, one reminder, one push to the lead, two stand-downs; no call failed.
		expect(sends().map((entry) => (entry.body as { title: string }).title)).toEqual([
			'Safety alert: leave building B',
			'Reminder: Safety alert: leave building B',
			'Stand down: 1 opened the alert late',
			`Alert not opened by ${without(reached, opensFirst, opensAfterLevel1, opensAfterLevel2).length} people in 3 min`,
			'Stand down: 1 opened the alert late',
		]);
		expect(
			sandbox.requestLog().filter((entry) => entry.status !== 200 && entry.status !== 202),
		).toEqual([]);

		// The mails: one per person no phone reached or at level 2, nobody else.
		const level2 = without(reached, opensFirst, opensAfterLevel1);
		expect(
			smtp.mails
				.map((mail) => mail.to)
				.flat()
				.sort(),
		).toEqual(
			[...notReached, ...level2].map((userId) => emailOf.get(userId)!.toLowerCase()).sort(),
		);

		// The executions: each person once per event and level, in the groups the steps got.
		const told = new Map<string, string[]>();
		const groupKeys: string[] = [];
		const triggerRuns = runs
			.filter((execution: { mode: string }) => execution.mode === 'trigger')
			.sort((a: { id: string }, b: { id: string }) => Number(a.id) - Number(b.id));
		expect(
			triggerRuns.every((execution: { status: string }) => execution.status === 'success'),
		).toBe(true);
		for (const execution of triggerRuns) {
			const runData = (await rest.getExecution(execution.id)).data.resultData.runData;
			for (const { json } of runData[TRIGGER][0].data.main[0] as Array<{ json: GroupItem }>) {
				const step = json.event === 'notOpenedInTime' ? `level ${json.level}` : json.event;
				groupKeys.push(json.groupKey);
				told.set(step, [...(told.get(step) ?? []), ...json.userIds]);
			}
		}
		const sorted = (people: string[] | undefined) => [...(people ?? [])].sort();
		expect(sorted(told.get('notReached'))).toEqual(sorted(notReached));
		expect(sorted(told.get('level 1'))).toEqual(without(reached, opensFirst));
		expect(sorted(told.get('level 2'))).toEqual(level2);
		expect(sorted(told.get('level 3'))).toEqual(
			without(reached, opensFirst, opensAfterLevel1, opensAfterLevel2),
		);
		expect(sorted(told.get('openedAfterEscalation'))).toEqual(
			sorted([opensAfterLevel1, opensAfterLevel2]),
		);
		expect([...told.keys()].sort()).toEqual(
			['level 1', 'level 2', 'level 3', 'notReached', 'openedAfterEscalation'].sort(),
		);
		// One key per group: the second stand-down of the alert is keyed apart from the first.
		expect(groupKeys.sort()).toEqual(
			[
				'notReached',
				'level-1',
				'level-2',
				'level-3',
				'openedAfterEscalation',
				'openedAfterEscalation-after-1',
			]
				.map((group) => `${alertId}-${group}`)
				.sort(),
		);
		console.log(
			`[e2e] alert ladder: ${reached.length} reached, ${notReached.length} not reached; ` +
				`levels ${['level 1', 'level 2', 'level 3'].map((step) => told.get(step)!.length).join('/')}, ` +
				`${triggerRuns.length} trigger executions, ${sends().length} sends, ${smtp.mails.length} e-mails`,
		);
	});
});
