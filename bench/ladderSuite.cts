/**
 * The ladder suite (row 5): the trigger's alert ladder at 100,000 people, through n8n-core's engine
 * (devkit/poll.cts, a PollContext run by TriggersAndPollers, static data kept across polls) on a
 * sandbox in this process with a manual clock. 100 sends of 1,000 people, each a mix of: 70% who
 * open within 10 minutes, 20% who never do, 6% who open between minutes 20 and 40, 4% without a
 * phone (the shares of the ladder's 5,000-person test). Deadlines 15, 30, 45 minutes, one item per
 * notification and group of people, a poll every minute for 80 minutes, every other setting at its
 * default (Max Reads per Poll 50). n8n's clock (Date.now) follows the sandbox's during the polls, as
 * real clocks do, so the token is renewed ahead of expiry.
 *
 * n8n-core must be loaded after N8N_USER_FOLDER is set: devkit/env first.
 */
import '../devkit/env.cts';

import { performance } from 'node:perf_hooks';

import type { IDataObject } from 'n8n-workflow';

import { CompanionPushTrigger } from '../nodes/CompanionPush/CompanionPushTrigger.node';
import type { Sandbox } from '../sandbox/index.cts';
import { DETAIL, REFRESH, SEND_LIST } from '../devkit/endpoints.cts';
import { registerNodeType } from '../devkit/engine.cts';
import { storeFor } from '../devkit/fixtures.cts';
import { createPollTarget, nodeStaticData, runPoll } from '../devkit/poll.cts';
import {
	countsSince,
	mb,
	median,
	rawClient,
	sendBody,
	totalCalls,
	withMemoryPeak,
} from './measure.cts';
import type { Counts, MemoryPeak } from './measure.cts';
import { count, fmtK, verdictOf } from './report.cts';
import type { Figure, SuiteReport } from './report.cts';

const TRIGGER_TYPE = 'bench.companionPushLadder';
registerNodeType(TRIGGER_TYPE, new CompanionPushTrigger());

const MINUTE = 60_000;
const DEADLINES = [15, 30, 45];
/** The trigger's default Max Reads per Poll: the most detail reads a poll makes. */
const MAX_READS_PER_POLL = 50;

export const FULL_LADDER_SCALE = {
	/** Users the sandbox is seeded with: 60% of them have a phone, 10% none (sandbox/directory.cts). */
	users: 170_000,
	sends: 100,
	peoplePerSend: 1000,
	/** Polls, one a minute after the sends. */
	minutes: 80,
};
export type LadderScale = typeof FULL_LADDER_SCALE;

interface PollFigures {
	minute: number;
	calls: Counts;
	ms: number;
	/** CPU time of this process during the poll (the in-process sandbox's share included). */
	cpuMs: number;
	staticChars: number;
}

/** The people of the alert, by what they do: shares of the whole, each send a mix of all. */
function audienceOf(sandbox: Sandbox, scale: LadderScale) {
	const people = scale.sends * scale.peoplePerSend;
	const kinds = sandbox.orgs.primary.userKinds;
	const withPhones = [...kinds.onePhone, ...kinds.twoPhones, ...kinds.threePhones];
	const share = (percent: number) => Math.round((people * percent) / 100);
	const [early, never, later] = [share(70), share(20), share(6)];
	const audience = {
		opensEarly: withPhones.slice(0, early),
		never: withPhones.slice(early, early + never),
		opensLater: withPhones.slice(early + never, early + never + later),
		noPhone: kinds.noPhone.slice(0, people - early - never - later),
	};
	const everyone = Object.values(audience).flat();
	if (everyone.length !== people)
		throw new Error(`the sandbox has too few users for ${fmtK(people)} people: seed more`);
	return { ...audience, everyone };
}

export type LadderResults = Awaited<ReturnType<typeof runLadderSuite>>;

export async function runLadderSuite(
	sandbox: Sandbox,
	scale: LadderScale,
	log: (line: string) => void = () => {},
) {
	const started = Date.now();
	await sandbox.reset();
	const audience = audienceOf(sandbox, scale);
	const target = createPollTarget({
		type: TRIGGER_TYPE,
		credentials: storeFor(sandbox),
		parameters: {
			events: ['noDevice', 'notOpenedInTime', 'openedAfterEscalation'],
			deadlineMode: 'ladder',
			openDeadlines: DEADLINES.join(', '),
			output: 'perGroup',
		},
	});
	const realNow = Date.now;
	Date.now = () => sandbox.clock.now();
	try {
		const activation = await runPoll(target);
		if (activation.error) throw activation.error;

		// The sends, each a mix of everyone (setup, not a figure: raw undici).
		const bodies = Array.from({ length: scale.sends }, (_, index) => {
			const people = audience.everyone.filter((_, person) => person % scale.sends === index);
			return sendBody(people, 'Gas leak in hall B');
		});
		const client = rawClient(sandbox, 4);
		await client.sendAll(await client.token(), bodies, 4).finally(() => client.close());
		const t0 = sandbox.clock.now();
		const sends = sandbox.notifications('primary');
		const sentAt = new Map(sends.map((send) => [send.id, Date.parse(send.sent_at ?? '')]));
		const sentAtOf = new Map<string, number>();
		for (const send of sends)
			for (const userId of send.target_user_ids) sentAtOf.set(userId, sentAt.get(send.id)!);

		// Opens on half minutes: the early ones within 10 minutes, the later ones from 20.5 to 39.5.
		const opensAt = new Map<string, number>();
		const tapsAt = new Map<number, string[]>();
		const opens = (userId: string, at: number) => {
			opensAt.set(userId, at);
			tapsAt.set(at, [...(tapsAt.get(at) ?? []), userId]);
		};
		audience.opensEarly.forEach((userId, index) =>
			opens(userId, t0 + (index % 10) * MINUTE + MINUTE / 2),
		);
		audience.opensLater.forEach((userId, index) =>
			opens(userId, t0 + (20 + (index % 20)) * MINUTE + MINUTE / 2),
		);
		const idOf = new Map(
			sends.flatMap((send) => send.target_user_ids.map((userId) => [userId, send.id])),
		);

		const polls: PollFigures[] = [];
		const told = new Map<string, number>(); // `<event or level>:<userId>` -> times told
		let latestMs = 0; // the most a level was told after its deadline
		log(
			`ladder: ${fmtK(audience.everyone.length)} people in ${scale.sends} sends, ${scale.minutes} polls`,
		);
		const { memory } = await withMemoryPeak(async () => {
			for (let minute = 1; minute <= scale.minutes; minute++) {
				const halfMinute = t0 + minute * MINUTE - MINUTE / 2;
				await sandbox.clock.advance(halfMinute - sandbox.clock.now());
				for (const userId of tapsAt.get(halfMinute) ?? []) sandbox.tap(idOf.get(userId)!, userId);
				await sandbox.clock.advance(MINUTE / 2);
				const before = sandbox.counts();
				const pollStarted = performance.now();
				const cpuBefore = process.cpuUsage();
				const outcome = await runPoll(target);
				const ms = performance.now() - pollStarted;
				const cpu = process.cpuUsage(cpuBefore);
				if (outcome.error) throw outcome.error;
				for (const group of outcome.items) {
					for (const event of group.events as IDataObject[]) {
						const key = `${event.event === 'notOpenedInTime' ? `level ${event.level}` : event.event}:${event.userId}`;
						told.set(key, (told.get(key) ?? 0) + 1);
						if (event.event === 'notOpenedInTime')
							latestMs = Math.max(
								latestMs,
								sandbox.clock.now() - Date.parse(event.deadline as string),
							);
					}
				}
				const staticChars = JSON.stringify(nodeStaticData(target)).length;
				polls.push({
					minute,
					calls: countsSince(before, sandbox.counts()),
					ms,
					cpuMs: (cpu.user + cpu.system) / 1000,
					staticChars,
				});
				if (minute % 10 === 0)
					log(
						`ladder: minute ${minute}, ${fmtK(told.size)} events told, static data ${fmtK(staticChars)} characters`,
					);
			}
		});
		const watched = Object.keys(
			(nodeStaticData(target).watch as { sends: Record<string, unknown> }).sends,
		).length;

		// What the opens say each level must be: those who had opened on no phone by its deadline.
		const openedBy = (userId: string, minutes: number) =>
			(opensAt.get(userId) ?? Infinity) <= sentAtOf.get(userId)! + minutes * MINUTE;
		const reached = [...audience.opensEarly, ...audience.never, ...audience.opensLater];
		const expected: Record<string, number> = {
			noDevice: audience.noPhone.length,
			...Object.fromEntries(
				DEADLINES.map((minutes, index) => [
					`level ${index + 1}`,
					reached.filter((userId) => !openedBy(userId, minutes)).length,
				]),
			),
			openedAfterEscalation: audience.opensLater.length,
		};
		const toldOf = (name: string) =>
			[...told.keys()].filter((key) => key.startsWith(`${name}:`)).length;
		const measuredCounts = Object.fromEntries(
			Object.keys(expected).map((name) => [name, toldOf(name)]),
		);
		const twice = [...told.values()].filter((times) => times > 1).length;
		return {
			scale,
			people: audience.everyone.length,
			polls,
			memory: memory as MemoryPeak,
			expected,
			told: measuredCounts,
			twice,
			latestMinutes: latestMs / MINUTE,
			watched,
			totalMs: realNow() - started,
		};
	} finally {
		Date.now = realNow;
	}
}

// ---- the figures ---------------------------------------------------------------------------------------

export function ladderFiguresOf(results: LadderResults): SuiteReport {
	const { scale, polls } = results;
	const title = `Alert ladder, ${fmtK(results.people)} people in ${scale.sends} sends, 3 levels (${DEADLINES.join(', ')} min), a poll a minute for ${scale.minutes} min`;
	const maxCalls = Math.max(...polls.map((poll) => totalCalls(poll.calls)));
	const most = (endpoint: string) => Math.max(...polls.map((poll) => count(poll.calls, endpoint)));
	const ms = polls.map((poll) => poll.ms);
	const cpuMs = polls.map((poll) => poll.cpuMs);
	const staticMax = Math.max(...polls.map((poll) => poll.staticChars));
	const toldAnything = results.told.noDevice + results.told['level 1'];
	const countsRight = Object.entries(results.expected).every(
		([name, expected]) => results.told[name] === expected,
	);
	const names: Record<string, string> = {
		noDevice: 'No Device',
		openedAfterEscalation: 'Opened After Escalation',
	};
	const listed = (counts: Record<string, number>) =>
		Object.entries(counts)
			.map(([name, value]) => `${names[name] ?? name} ${fmtK(value)}`)
			.join(', ');
	const figures: Figure[] = [
		{
			row: '5',
			figure: `${title}: API calls per poll`,
			measured: `max ${maxCalls} (list ${most(SEND_LIST)}, detail ${most(DETAIL)}, refresh ${most(REFRESH)}); median ${median(polls.map((poll) => totalCalls(poll.calls)))}; ${fmtK(polls.reduce((sum, poll) => sum + totalCalls(poll.calls), 0))} in all`,
			goal: `<= ${MAX_READS_PER_POLL + 2} (1 list + Max Reads per Poll ${MAX_READS_PER_POLL} + 1 refresh)`,
			verdict: verdictOf(maxCalls <= MAX_READS_PER_POLL + 2),
			how: `Sandbox counts around each poll, run as an active n8n workflow runs it (devkit/poll.cts), 1 run. ${fmtK(results.people)} people in ${scale.sends} sends of ${fmtK(scale.peoplePerSend)}, each a mix of: 70% opening within 10 min, 20% never, 6% between min 20 and 40, 4% without a phone; events No Device, Not Opened in Time (deadlines ${DEADLINES.join(', ')}), Opened After Escalation; One Item per Notification and Group of People; other settings at their defaults. n8n's clock follows the sandbox's manual clock.`,
		},
		{
			row: '5',
			figure: `${title}: events told`,
			measured: `${listed(results.told)}; told twice ${results.twice}; a level told at most ${results.latestMinutes.toFixed(1)} min after its deadline; ${results.watched} of ${scale.sends} sends still watched at the end`,
			goal: `${listed(results.expected)} (what the opens say), none twice, none forgotten`,
			verdict: verdictOf(countsRight && results.twice === 0 && results.watched === scale.sends),
			how: 'Every event of every emitted group counted per person; the expected counts follow from when each person opened and each send went out (sent_at). A level is told at the first poll that reads the send after its deadline: with 100 sends due at once and 50 reads per poll, half are read a poll later.',
		},
		{
			row: '5',
			figure: `${title}: static data, memory, time per poll`,
			measured: `static data max ${fmtK(staticMax)} characters (${(staticMax / toldAnything).toFixed(1)} per person told anything, ${fmtK(toldAnything)} people), bound 2,000,000; peak heapUsed ${mb(results.memory.heapDelta)} above the baseline, live after the polls ${mb(results.memory.retainedHeapDelta)}; time per poll median ${median(ms).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms (CPU of the process, sandbox included: median ${median(cpuMs).toFixed(0)} ms, max ${Math.max(...cpuMs).toFixed(0)} ms)`,
			goal: '<= 2,000,000 characters',
			verdict: verdictOf(staticMax <= 2_000_000),
			how: "Static data: the JSON of the node's static data after each poll. Memory: process.memoryUsage() sampled every 5 ms during the 80 polls, peak heapUsed minus a baseline taken after a forced GC before the first of them (the in-process sandbox with its 100 sends is in the baseline; its answers and opens during the polls are not). Time: wall time of each poll, and the CPU time of the process during it (process.cpuUsage), the sandbox answering in the same process; on a shared machine the wall time also holds waits for the cores.",
		},
	];
	const setup = [
		`- Sandbox (row 5): in the same process (startSandbox, 127.0.0.1, ${fmtK(scale.users)} users, manual clock). 1 run. ${(results.totalMs / 1000).toFixed(0)} s.`,
	];
	return { figures, misses: [], setup };
}
