import { NodeApiError } from 'n8n-workflow';
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import { runPool } from '../common/pool';
import { isTimeWithoutZone, parseTime } from '../common/time';
import { asNodeError } from '../nodeErrors';
import { timings } from '../common/timings';
import * as processState from './pollMemory';
import {
	clearWorkDeadline,
	getNotification,
	readCredentialsAnew,
	setWorkDeadline,
} from '../transport';
import type { ListedNotification, NotificationRecord } from '../transport';
import { detectEvents } from './events';
import { matchesFilters } from './filters';
import type { TriggerEvent } from './events';
import type { LadderTold } from './ladder';
import {
	deadlinesOf,
	keysOfLadder,
	nextDeadline,
	readLadder,
	rememberLevel,
	rememberOpenedAfter,
	storeLadder,
} from './ladder';
import { listOutOfReach, ListOutOfReachError, readListing } from './listing';
import { fetchTestEvent } from './manual';
import { toItems } from './output';
import { readParameters } from './parameters';
import { planReads, scheduleNextRead, windowStart } from './plan';
import { ageOut, floorPastUnread, initialState, isKnown, rememberListed, watchSend } from './state';
import type { TriggerState, WatchedSend } from './state';
import { readState, writeState } from './storedState';
import { stoppedWatchingEvent, warnForgottenEarly } from './watchList/dropped';
import type { DroppedSend } from './watchList/dropped';

/**
 * One poll of the Companion Push Trigger.
 * - First poll: records the sends listed at its time as the starting point and emits nothing.
 * - Then: lists sends newest first down to a margin below the newest one seen (see state.ts: a
 *   send the list shows late is found there), watches the ones not met before, reads the details
 *   that are due (see plan.ts), and emits the events not emitted before. A listing that could not
 *   get that far (listing.ts) fails the poll with an error saying what was not read; if the next
 *   poll cannot either, it goes on from the newest send it read.
 * The state is changed on a copy and stored once everything was read: a poll that fails (an API
 * error after the transport's retries) emits nothing and moves nothing, and the next poll catches up.
 */
export async function pollCompanionPush(
	this: IPollFunctions,
): Promise<INodeExecutionData[][] | null> {
	const parameters = readParameters(this);
	// n8n starts a poll at every tick of the trigger's schedule without waiting for the previous one
	// (its ScheduledTaskManager does not), so a poll still running makes the next one read nothing:
	// two polls never work on one state at once, nor pile up behind a slow API.
	if (this.getMode() !== 'manual' && pollsRunning.has(this)) {
		this.logger.warn(
			'Companion Push Trigger: the previous poll is still running (it ends by its deadline), so this one reads nothing; the next poll catches up',
		);
		return null;
	}
	readCredentialsAnew(this);
	if (this.getMode() === 'manual') return await fetchTestEvent(this, parameters);
	pollsRunning.add(this);
	// Every request of the poll, and every wait between its tries, ends by the poll's deadline.
	setWorkDeadline(this, timings().pollDeadlineMs, 'the poll');
	try {
		return await pollOnce.call(this, parameters);
	} finally {
		clearWorkDeadline(this);
		pollsRunning.delete(this);
	}
}

/** Poll contexts with a poll running (n8n keeps one context per activation of a workflow). */
const pollsRunning = new WeakSet<object>();

/** One scheduled poll: the first one of an activation keeps an API error to n8n's log. */
async function pollOnce(
	this: IPollFunctions,
	parameters: ReturnType<typeof readParameters>,
): Promise<INodeExecutionData[][] | null> {
	// n8n 2.41 runs one poll as it activates the workflow (at publish and at every start) and, if
	// that poll throws, marks the trigger failed for good. An API outage at that moment must not
	// disable the trigger: that poll logs the error and emits nothing, leaving the state as it was;
	// the scheduled polls then catch up, and their errors reach n8n as usual.
	// n8n keeps one poll context per activation, so the first poll of a context is that poll.
	const isActivationPoll = !processState.polledContexts.has(this);
	processState.polledContexts.add(this);
	if (!isActivationPoll) return await pollWithState.call(this, parameters);
	try {
		return await pollWithState.call(this, parameters);
	} catch (error) {
		// A list read out of reach is reported by the scheduled polls (the executions list).
		if (error instanceof ListOutOfReachError) processState.listGapsReported.delete(this);
		else if (!(error instanceof NodeApiError)) throw asNodeError(this, error);
		this.logger.warn(
			`Companion Push Trigger: the first poll after activation failed, the next one retries: ${error.message}`,
		);
		return null;
	}
}

/** Detail reads of one poll in flight at once (the transport's pace slows them on 429s). */
const PARALLEL_READS = 10;

/** A send's detail, or undefined when the API answers 404 for it. */
async function readDetailUnlessGone(context: IPollFunctions, id: string) {
	try {
		return await getNotification(context, id);
	} catch (error) {
		if (error instanceof NodeApiError && error.httpCode === '404') return undefined;
		throw asNodeError(context, error);
	}
}

/** Sends whose `sent_at` the API wrote without a time zone (see helpers/time.ts): their Not Opened in
 * Time deadline cannot be placed on the API's clock, so it is never told, which n8n's log must say
 * rather than the event staying silent. */
function warnDeadlinesUntold(context: IPollFunctions, ids: string[]): void {
	const shown = ids.slice(0, 10).join(', ');
	context.logger.warn(
		`Companion Push Trigger: the API writes sent_at without a time zone, so Not Opened in Time cannot be told for ${ids.length} notification(s): ` +
			`${shown}${ids.length > 10 ? ', …' : ''}. Their other events are reported; check who opened them with Notification > Get Report.`,
	);
}

/** ageOut, keeping what the poll knows of the sends the bounds forgot (their status) in `dropped`. */
function ageOutTelling(
	state: TriggerState,
	now: number,
	watchWindowMs: number,
	dropped: DroppedSend[],
): void {
	const watched = { ...state.sends };
	for (const id of ageOut(state, now, watchWindowMs))
		dropped.push({ id, reason: 'watchListFull', status: watched[id].status });
}

/** Remembers the events told of a send: the ladder's per person (ladder.ts), the others by key. */
function remember(
	watched: WatchedSend,
	told: Map<string, LadderTold>,
	found: readonly TriggerEvent[],
): void {
	for (const event of found) {
		const userId = event.json.userId as string;
		if (event.name === 'notOpenedInTime') rememberLevel(told, userId, event.level ?? 1);
		else if (event.name === 'openedAfterEscalation') rememberOpenedAfter(told, userId);
		else watched.keys.push(event.key);
	}
	const ladder = storeLadder(told);
	if (ladder) watched.ladder = ladder;
}

/** One poll with the stored state (see the comment at the top). */
async function pollWithState(
	this: IPollFunctions,
	parameters: ReturnType<typeof readParameters>,
): Promise<INodeExecutionData[][] | null> {
	const staticData = this.getWorkflowStaticData('node');
	// A deep copy: the stored state is replaced only at the end, once every read has succeeded.
	const state = readState(staticData);

	// The server's clock (the list's Date header) is the time of this poll: created_at, sent_at and
	// scheduled_at come from that clock too.
	const { sends: listed, now, unread } = await readListing(this, state);

	if (!state) {
		writeState(staticData, initialState(listed, now));
		return null;
	}

	// A reading that did not reach the floor is reported, and the poll changes nothing: the next one
	// catches up if it can. A poll that throws keeps no state, so the report is remembered in the
	// process: when the next poll cannot reach the floor either, it goes on past it instead of
	// failing for good (the report said which notifications are not read).
	const reported = processState.listGapsReported;
	if (unread && reported.get(this) !== unread.floor) {
		reported.set(this, unread.floor);
		throw listOutOfReach(this, unread);
	}
	reported.delete(this);

	const fresh = listed.filter((send) => !isKnown(state, send.id));
	rememberListed(state, fresh);
	if (unread) floorPastUnread(state);
	for (const send of fresh) {
		if (matchesFilters(send as ListedNotification, parameters.filters) === false) continue;
		watchSend(state, send.id, send, now);
	}
	const dropped: DroppedSend[] = [];
	ageOutTelling(state, now, parameters.watchWindowMs, dropped);

	const selected = new Set(parameters.events);
	const events: TriggerEvent[] = [];
	const deadlinesUntold: string[] = [];
	const records = new Map<string, NotificationRecord>();
	const earlierKeys = new Map<string, readonly string[]>();
	// The details due are read in parallel (a poll costs about one round trip, not one per read);
	// the first failure stops the poll after what is in flight.
	const due = planReads(state, now, parameters.maxReadsPerPoll);
	const details = await runPool(
		due.length,
		PARALLEL_READS,
		async (index) => await readDetailUnlessGone(this, due[index]),
		true,
	);
	const failure = details.find((result) => result?.ok === false);
	if (failure) throw asNodeError(this, failure.error);
	for (const [index, id] of due.entries()) {
		const detail = (details[index] as { value: Awaited<ReturnType<typeof readDetailUnlessGone>> })
			.value;
		if (detail === undefined) {
			// The API no longer knows this send (404): nothing more can happen to it. Failing every
			// poll over it instead would stop the trigger for good (see pollCompanionPush).
			dropped.push({ id, reason: 'notFound', status: state.sends[id].status });
			delete state.sends[id];
			continue;
		}
		const record = detail.notification;
		const watched = state.sends[id];
		if (matchesFilters(record, parameters.filters, true) === false) {
			delete state.sends[id];
			continue;
		}
		const told = readLadder(watched.ladder);
		const keysBefore = [...watched.keys, ...keysOfLadder(told)];
		const emittedKeys = new Set(keysBefore);
		const { openDeadlinesMs } = parameters;
		const found = detectEvents({
			detail,
			previousStatus: watched.status,
			emittedKeys,
			selected,
			now,
			openDeadlinesMs,
		});
		const statusChanged = watched.status !== record.status;
		// Said when the send is first read or changes state, not at every read of its back-off.
		if (
			selected.has('notOpenedInTime') &&
			isTimeWithoutZone(record.sent_at) &&
			(watched.readAt === undefined || statusChanged)
		)
			deadlinesUntold.push(id);
		if (found.length > 0) {
			earlierKeys.set(id, keysBefore);
			remember(watched, told, found);
		}
		watched.from = windowStart(
			watched.from,
			parseTime(record.scheduled_at),
			parseTime(record.sent_at),
		);
		const foundSomethingNew = found.length > 0 || statusChanged;
		const deadline = nextDeadline(deadlinesOf(record, openDeadlinesMs), now);
		Object.assign(
			watched,
			scheduleNextRead(watched, { status: record.status, foundSomethingNew }, now, deadline),
		);
		watched.status = record.status;
		watched.readAt = now;
		// A canceled send never changes again (spec: canceled before sending, no deliveries).
		if (record.status === 'canceled') delete state.sends[id];
		events.push(...found);
		records.set(id, record);
	}
	ageOutTelling(state, now, parameters.watchWindowMs, dropped);

	writeState(staticData, state);
	const full = dropped.filter((send) => send.reason === 'watchListFull');
	if (full.length > 0)
		warnForgottenEarly(
			this,
			full.map((send) => send.id),
		);
	if (deadlinesUntold.length > 0) warnDeadlinesUntold(this, deadlinesUntold);
	// Each dropped send is told to the workflow, with its title when this poll listed or read it.
	const titles = new Map(listed.map((send) => [send.id, send.title]));
	for (const send of dropped)
		events.push(
			stoppedWatchingEvent({ ...send, title: records.get(send.id)?.title ?? titles.get(send.id) }),
		);
	if (events.length === 0) return null;
	return [
		toItems(events, parameters.output, records, earlierKeys).map((json: IDataObject) => ({ json })),
	];
}
