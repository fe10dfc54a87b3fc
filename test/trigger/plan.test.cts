/**
 * The trigger's pure parts, without n8n or the sandbox: the poll plan (back-off, read budget),
 * the bounded state and its aging, event detection and filters.
 */
import type { NotificationDetail } from '../../nodes/CompanionPush/transport';
import { detectEvents, TRIGGER_EVENTS } from '../../nodes/CompanionPush/trigger/events';
import { matchesFilters } from '../../nodes/CompanionPush/trigger/filters';
import { MINUTE_MS } from '../../nodes/CompanionPush/common/time';
import {
	MAX_BACKOFF_MINUTES,
	planReads,
	scheduleNextRead,
} from '../../nodes/CompanionPush/trigger/plan';
import {
	ageOut,
	initialState,
	isKnown,
	LIST_LAG_MARGIN_MS,
	listingEndsAt,
	MAX_RECENT_IDS,
	MAX_REMEMBERED_KEYS,
	MAX_WATCHED_SENDS,
	rememberListed,
	UNTIMED_IDS,
} from '../../nodes/CompanionPush/trigger/state';
import type { TriggerState, WatchedSend } from '../../nodes/CompanionPush/trigger/state';
import { readState, writeState } from '../../nodes/CompanionPush/trigger/storedState';

const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const HOUR_MS = 60 * MINUTE_MS;

function watched(partial: Partial<WatchedSend> = {}): WatchedSend {
	return { from: T0, dueAt: T0, backoffMinutes: 0, keys: [], ...partial };
}

function stateWith(sends: Record<string, WatchedSend>): TriggerState {
	return { ...initialState([], T0), sends };
}

describe('poll plan', () => {
	test('a settled send is re-read after 1, 2, 4 ... minutes, capped, and back to 1 when something new shows', () => {
		let send = watched();
		const intervals: number[] = [];
		let now = T0;
		for (let read = 0; read < 9; read++) {
			const next = scheduleNextRead(send, { status: 'sent', foundSomethingNew: false }, now);
			intervals.push((next.dueAt - now) / MINUTE_MS);
			send = { ...send, ...next };
			now = next.dueAt;
		}
		expect(intervals).toEqual([
			1,
			2,
			4,
			8,
			16,
			32,
			MAX_BACKOFF_MINUTES,
			MAX_BACKOFF_MINUTES,
			MAX_BACKOFF_MINUTES,
		]);
		expect(scheduleNextRead(send, { status: 'sent', foundSomethingNew: true }, now)).toEqual({
			dueAt: now + MINUTE_MS,
			backoffMinutes: 1,
		});
	});

	test('an open deadline makes a settled send due right when it passes, if the back-off would read it later', () => {
		const backedOff = watched({ backoffMinutes: 16 });
		const deadline = T0 + 10 * MINUTE_MS;
		expect(
			scheduleNextRead(backedOff, { status: 'sent', foundSomethingNew: false }, T0, deadline),
		).toEqual({ dueAt: deadline, backoffMinutes: 32 });
		// The back-off comes first: kept; a deadline already passed changes nothing.
		expect(
			scheduleNextRead(watched(), { status: 'sent', foundSomethingNew: false }, T0, deadline).dueAt,
		).toBe(T0 + MINUTE_MS);
		expect(
			scheduleNextRead(
				backedOff,
				{ status: 'sent', foundSomethingNew: false },
				deadline + 1,
				deadline,
			).dueAt,
		).toBe(deadline + 1 + 32 * MINUTE_MS);
	});

	test('a send still sending or scheduled is due again at once (read every poll)', () => {
		for (const status of ['sending', 'scheduled']) {
			expect(
				scheduleNextRead(watched({ backoffMinutes: 8 }), { status, foundSomethingNew: false }, T0),
			).toEqual({ dueAt: T0, backoffMinutes: 0 });
		}
	});

	test('reads: only due sends, never-read first, then the most overdue, at most the budget', () => {
		const state = stateWith({
			notDue: watched({ readAt: T0, dueAt: T0 + 10 * MINUTE_MS }),
			overdueLittle: watched({ readAt: T0, dueAt: T0 - MINUTE_MS }),
			overdueMost: watched({ readAt: T0, dueAt: T0 - 30 * MINUTE_MS }),
			neverRead: watched({ dueAt: T0 }),
			dueInTwoSeconds: watched({ readAt: T0, dueAt: T0 + 2_000 }),
		});
		expect(planReads(state, T0, 10)).toEqual([
			'neverRead',
			'overdueMost',
			'overdueLittle',
			'dueInTwoSeconds',
		]);
		expect(planReads(state, T0, 2)).toEqual(['neverRead', 'overdueMost']);
	});

	test('with a budget smaller than the due sends, the ones left out come first next time', () => {
		const sends: Record<string, WatchedSend> = {};
		for (let n = 0; n < 6; n++) sends[`s${n}`] = watched({ readAt: T0 - HOUR_MS, dueAt: T0 });
		const state = stateWith(sends);
		const seen = new Set<string>();
		let now = T0;
		for (let poll = 0; poll < 3; poll++) {
			const ids = planReads(state, now, 2);
			expect(ids).toHaveLength(2);
			for (const id of ids) {
				expect(seen.has(id)).toBe(false);
				seen.add(id);
				Object.assign(
					state.sends[id],
					{ readAt: now },
					scheduleNextRead(state.sends[id], { status: 'sending', foundSomethingNew: false }, now),
				);
			}
			now += MINUTE_MS;
		}
		expect(seen.size).toBe(6);
	});
});

describe('state', () => {
	test('readState returns a copy; writeState replaces it in one assignment; foreign data starts afresh', () => {
		const staticData: Record<string, unknown> = {};
		expect(readState(staticData as never)).toBeUndefined();
		writeState(staticData as never, stateWith({ a: watched() }));
		const copy = readState(staticData as never)!;
		copy.sends.a.keys.push('status:sent');
		expect((staticData.watch as TriggerState).sends.a.keys).toEqual([]);
		expect(readState({ watch: { version: 99 } } as never)).toBeUndefined();
		expect(
			readState({ watch: { ...stateWith({}), sends: { a: { from: 'x' } } } } as never),
		).toBeUndefined();
	});

	const at = (ms: number) => new Date(ms).toISOString();

	test('the list is read down to a margin below the newest created_at seen; known sends above it are passed over, not stopped at', () => {
		const state = initialState([{ id: 'n1', created_at: at(T0) }], T0);
		expect(state.listed).toEqual({
			floor: T0,
			newestCreatedAt: T0,
			recent: [{ id: 'n1', createdAt: T0 }],
		});
		state.sends.w = watched();

		// Ten minutes later a new send is listed: the floor follows it, LIST_LAG_MARGIN_MS below.
		rememberListed(state, [{ id: 'n2', created_at: at(T0 + 10 * MINUTE_MS) }]);
		expect(state.listed.floor).toBe(T0 + 10 * MINUTE_MS - LIST_LAG_MARGIN_MS);
		expect(state.listed.recent.map((send) => send.id)).toEqual(['n2']); // n1 is below the floor now

		expect(listingEndsAt(state, { id: 'n2', created_at: at(T0 + 10 * MINUTE_MS) })).toBe(false); // known: passed over
		expect(isKnown(state, 'n2')).toBe(true);
		expect(isKnown(state, 'w')).toBe(true);
		// A send created a minute before n2 and listed only now: above the floor, not known, so it is new.
		const late = { id: 'late', created_at: at(T0 + 9 * MINUTE_MS) };
		expect(listingEndsAt(state, late)).toBe(false);
		expect(isKnown(state, 'late')).toBe(false);
		// Below the floor the reading ends.
		expect(listingEndsAt(state, { id: 'old', created_at: at(state.listed.floor - 1) })).toBe(true);
		// Without created_at, the first send met before ends it; an unknown one does not.
		expect(listingEndsAt(state, { id: 'w' })).toBe(true);
		expect(listingEndsAt(state, { id: 'x' })).toBe(false);
		// Before the first poll has a state, only its own time ends the reading.
		expect(listingEndsAt(undefined, { id: 'y', created_at: at(T0 - 1) }, T0)).toBe(true);
		expect(listingEndsAt(undefined, { id: 'y', created_at: at(T0) }, T0)).toBe(false);
	});

	test('recent stays bounded: beyond MAX_RECENT_IDS within the margin the floor rises past the oldest; UNTIMED_IDS sends without created_at', () => {
		const state = initialState([], T0);
		const many = Array.from({ length: MAX_RECENT_IDS + 50 }, (_, n) => ({
			id: `s${n}`,
			created_at: at(T0 + (MAX_RECENT_IDS + 50 - n) * 100),
		}));
		rememberListed(state, many);
		expect(state.listed.recent).toHaveLength(MAX_RECENT_IDS - 1);
		const kept = new Set(state.listed.recent.map((send) => send.id));
		// The oldest ones are gone and lie below the floor: never listed (nor watched) again.
		for (const send of many.filter((entry) => !kept.has(entry.id)))
			expect(listingEndsAt(state, send)).toBe(true);
		for (const send of many.filter((entry) => kept.has(entry.id)))
			expect(listingEndsAt(state, send)).toBe(false);

		rememberListed(
			state,
			Array.from({ length: UNTIMED_IDS + 5 }, (_, n) => ({ id: `u${n}` })),
		);
		expect(
			state.listed.recent.filter((send) => send.createdAt === undefined).map((send) => send.id),
		).toEqual(Array.from({ length: UNTIMED_IDS }, (_, n) => `u${n}`));
	});

	test('a state stored by the first version is taken over: its sends stay watched, the reading starts where it stopped', () => {
		const newestCreatedAt = T0 + HOUR_MS;
		const stored = {
			watch: {
				version: 1,
				startedAt: T0,
				newest: { ids: ['n9', 'n8'], createdAt: newestCreatedAt },
				sends: { n8: watched() },
			},
		};
		const state = readState(stored as never)!;
		expect(state).toEqual({
			version: 3,
			startedAt: T0,
			listed: { floor: newestCreatedAt, newestCreatedAt, recent: [{ id: 'n9' }, { id: 'n8' }] },
			sends: { n8: watched() },
		});
		expect(listingEndsAt(state, { id: 'n9', created_at: at(newestCreatedAt) })).toBe(false);
		expect(isKnown(state, 'n9')).toBe(true);
		expect(listingEndsAt(state, { id: 'older', created_at: at(newestCreatedAt - 1) })).toBe(true);
	});

	test('aging: a send is forgotten once its window has passed since it went out', () => {
		const state = stateWith({
			fresh: watched({ from: T0 - 23 * HOUR_MS }),
			old: watched({ from: T0 - 25 * HOUR_MS }),
			scheduledLater: watched({ from: T0 + 48 * HOUR_MS }),
		});
		// Forgotten at the end of its window: nothing lost, so nothing to report.
		expect(ageOut(state, T0, 24 * HOUR_MS)).toEqual([]);
		expect(Object.keys(state.sends).sort()).toEqual(['fresh', 'scheduledLater']);
	});

	test('hard bounds: at most MAX_WATCHED_SENDS sends and MAX_REMEMBERED_KEYS keys, oldest forgotten first, and returned', () => {
		const many: Record<string, WatchedSend> = {};
		for (let n = 0; n < MAX_WATCHED_SENDS + 10; n++) many[`s${n}`] = watched({ from: T0 + n });
		const state = stateWith(many);
		const forgotten = ageOut(state, T0 + MAX_WATCHED_SENDS, 24 * HOUR_MS);
		expect(Object.keys(state.sends)).toHaveLength(MAX_WATCHED_SENDS);
		expect(forgotten.sort()).toEqual(Array.from({ length: 10 }, (_, n) => `s${n}`).sort());

		const keysEach = MAX_REMEMBERED_KEYS / 4;
		const heavy = stateWith({
			a: watched({
				from: T0 + 1,
				keys: Array.from({ length: keysEach }, (_, n) => `u${n}:0:opened`),
			}),
			b: watched({
				from: T0 + 2,
				keys: Array.from({ length: keysEach }, (_, n) => `u${n}:0:opened`),
			}),
			c: watched({
				from: T0 + 3,
				keys: Array.from({ length: keysEach * 2 }, (_, n) => `u${n}:0:opened`),
			}),
			d: watched({ from: T0 + 4, keys: ['status:sent'] }),
		});
		expect(ageOut(heavy, T0, 24 * HOUR_MS)).toEqual(['a']);
		expect(JSON.stringify(heavy).length).toBeLessThan(MAX_REMEMBERED_KEYS * 40);
	});
});

describe('events', () => {
	const all = new Set(TRIGGER_EVENTS);
	const detail = (
		status: string,
		deliveries: NotificationDetail['deliveries'],
	): NotificationDetail => ({
		notification: { id: 'n1', title: 'Hello', status, sent_at: '2026-03-02T09:00:00.000Z' },
		deliveries,
	});
	const at = '2026-03-02T09:00:01.500Z';

	test('deliveries are keyed by user and their count in each state, whatever their order', () => {
		const entries = [
			{ user_id: 'u1', status: 'opened', sent_at: at, opened_at: '2026-03-02T09:05:00.000Z' },
			{ user_id: 'u2', status: 'sent', sent_at: at, opened_at: null },
			{ user_id: 'u1', status: 'failed', sent_at: at, opened_at: null },
			{ user_id: 'u2', status: 'opened', sent_at: at, opened_at: '2026-03-02T09:06:00.000Z' },
		];
		const read = (deliveries: typeof entries) =>
			detectEvents({
				detail: detail('partially_failed', deliveries),
				previousStatus: 'sending',
				// u2's open was told by a version that named it by its place: it counts as told.
				emittedKeys: new Set(['u2:1:opened']),
				selected: all,
				now: T0,
			});
		const events = read(entries);
		expect(events.map((event) => event.key)).toEqual([
			'status:partially_failed',
			'u1:0:opened',
			'u1:0:failed',
		]);
		expect(events.map((event) => event.json.eventKey)).toEqual([
			'n1:status:partially_failed',
			'n1:u1:0:opened',
			'n1:u1:0:failed',
		]);
		expect(events[0].json).toMatchObject({ status: 'partially_failed', previousStatus: 'sending' });
		// The same entries in the other order are the same events.
		expect(
			read([...entries].reverse())
				.map((event) => event.key)
				.sort(),
		).toEqual(events.map((event) => event.key).sort());
		// Told once: every key remembered, the entries in any order tell nothing more.
		const told = new Set(events.map((event) => event.key));
		for (const order of [entries, [...entries].reverse()])
			expect(
				detectEvents({
					detail: detail('partially_failed', order),
					previousStatus: 'partially_failed',
					emittedKeys: new Set([...told, 'u2:1:opened']),
					selected: all,
					now: T0,
				}),
			).toEqual([]);
	});

	test('a failure is reported once the send has settled, not while it is still sending (its only phone: not reached)', () => {
		const failed = [{ user_id: 'u1', status: 'failed', sent_at: at, opened_at: null }];
		expect(
			detectEvents({
				detail: detail('sending', failed),
				emittedKeys: new Set(),
				selected: all,
				now: T0,
			}),
		).toEqual([]);
		expect(
			detectEvents({
				detail: detail('failed', failed),
				emittedKeys: new Set(),
				selected: all,
				now: T0,
			}).map((e) => e.name),
		).toEqual(['notificationSettled', 'deliveryFailed', 'notReached']);
	});

	test('only the selected kinds are emitted', () => {
		const events = detectEvents({
			detail: detail('sent', [{ user_id: 'u1', status: 'opened', sent_at: at, opened_at: at }]),
			emittedKeys: new Set(),
			selected: new Set(['deliveryOpened'] as const),
			now: T0,
		});
		expect(events.map((event) => event.name)).toEqual(['deliveryOpened']);
	});

	test('filters: undecided while the listed send lacks the field, decided on the detail', () => {
		expect(matchesFilters({ id: 'x' } as never, { titleContains: 'hello' })).toBeUndefined();
		expect(matchesFilters({ title: 'Say HELLO' }, { titleContains: 'hello' })).toBe(true);
		expect(matchesFilters({ title: 'Bye' }, { titleContains: 'hello' })).toBe(false);
		expect(matchesFilters({ title: 'x' }, { announcementId: 'a1' })).toBeUndefined();
		expect(matchesFilters({ title: 'x' }, { announcementId: 'a1' }, true)).toBe(false);
		expect(
			matchesFilters({ deeplink: 'companionapp://announcement/a1' }, { announcementId: 'a1' }),
		).toBe(true);
		expect(
			matchesFilters({ announcement_id: 'a1', deeplink: null }, { announcementId: 'a1' }),
		).toBe(true);
		expect(
			matchesFilters(
				{ announcement_id: 'a2', title: 'hello' },
				{ announcementId: 'a1', titleContains: 'hello' },
			),
		).toBe(false);
		expect(matchesFilters({}, {})).toBe(true);
	});

	describe('per person: No Device and Not Opened in Time', () => {
		const sentAt = '2026-03-02T09:00:00.000Z';
		const deadline = T0 + 15 * MINUTE_MS;
		const after = (minutes: number) => new Date(T0 + minutes * MINUTE_MS).toISOString();
		const deliveries: NotificationDetail['deliveries'] = [
			{ user_id: 'twoPhonesOneOpened', status: 'sent', sent_at: at, opened_at: null },
			{ user_id: 'twoPhonesOneOpened', status: 'opened', sent_at: at, opened_at: after(3) },
			{ user_id: 'openedLate', status: 'opened', sent_at: at, opened_at: after(16) },
			{ user_id: 'notOpened', status: 'sent', sent_at: at, opened_at: null },
			{ user_id: 'notOpened', status: 'failed', sent_at: at, opened_at: null },
			{ user_id: 'openedNoTime', status: 'opened', sent_at: at, opened_at: null },
			{ user_id: 'allFailed', status: 'failed', sent_at: at, opened_at: null },
			{ user_id: 'noApp', status: 'no_device', sent_at: at, opened_at: null },
		];
		const read = (now: number, status = 'sent', emittedKeys = new Set<string>()) =>
			detectEvents({
				detail: { notification: { id: 'n1', title: 'Alert', status, sent_at: sentAt }, deliveries },
				emittedKeys,
				selected: new Set(['noDevice', 'notOpenedInTime'] as const),
				now,
				openDeadlinesMs: [15 * MINUTE_MS],
			});

		test('before the deadline: only No Device, once the send has settled', () => {
			expect(read(deadline - 1, 'sending')).toEqual([]);
			expect(read(deadline - 1).map((event) => [event.name, event.key])).toEqual([
				['noDevice', 'noApp:noDevice'],
			]);
		});

		test('at the deadline: each person reached who opened on no phone by then, one event each; an open after it does not undo it', () => {
			const events = read(deadline + 5 * MINUTE_MS);
			expect(events.map((event) => event.key)).toEqual([
				'openedLate:notOpened',
				'notOpened:notOpened',
				'noApp:noDevice',
			]);
			const late = events[0].json;
			expect(late).toEqual({
				event: 'notOpenedInTime',
				eventKey: 'n1:openedLate:notOpened',
				notificationId: 'n1',
				title: 'Alert',
				body: null,
				userId: 'openedLate',
				sentAt,
				level: 1,
				deadline: new Date(deadline).toISOString(),
				phonesReached: 1,
				openedAt: after(16),
			});
			expect(events[1].json).toMatchObject({
				userId: 'notOpened',
				phonesReached: 1,
				openedAt: null,
			});
			// Emitted keys are not emitted again.
			expect(
				read(deadline + 6 * MINUTE_MS, 'sent', new Set(events.map((event) => event.key))),
			).toEqual([]);
		});

		test('Not Reached: a person with no active app or whose every phone failed, once settled; then never Not Opened in Time too', () => {
			const selected = new Set(['notReached', 'notOpenedInTime'] as const);
			const readReach = (now: number, status: string, emittedKeys = new Set<string>()) =>
				detectEvents({
					detail: {
						notification: { id: 'n1', title: 'Alert', status, sent_at: sentAt },
						deliveries,
					},
					emittedKeys,
					selected,
					now,
					openDeadlinesMs: [15 * MINUTE_MS],
				});
			expect(readReach(deadline - 1, 'sending')).toEqual([]);
			const settled = readReach(deadline - 1, 'partially_failed');
			expect(settled.map((event) => event.key)).toEqual([
				'allFailed:notReached',
				'noApp:notReached',
			]);
			expect(settled.map((event) => event.json)).toEqual([
				{
					event: 'notReached',
					eventKey: 'n1:allFailed:notReached',
					notificationId: 'n1',
					title: 'Alert',
					body: null,
					userId: 'allFailed',
					sentAt,
					reason: 'deliveryFailed',
					phonesFailed: 1,
				},
				expect.objectContaining({ userId: 'noApp', reason: 'noDevice', phonesFailed: 0 }),
			]);

			// The service's own retry reaches the person whose phone failed, who then does not open it
			// in time: already reported as not reached, they are not reported again.
			const retried: NotificationDetail['deliveries'] = [
				{ user_id: 'allFailed', status: 'sent', sent_at: at, opened_at: null },
				{ user_id: 'neverFailed', status: 'sent', sent_at: at, opened_at: null },
			];
			const late = detectEvents({
				detail: {
					notification: { id: 'n1', status: 'sent', sent_at: sentAt },
					deliveries: retried,
				},
				emittedKeys: new Set(settled.map((event) => event.key)),
				selected,
				now: deadline + MINUTE_MS,
				openDeadlinesMs: [15 * MINUTE_MS],
			});
			expect(late.map((event) => event.key)).toEqual(['neverFailed:notOpened']);
		});

		test('the deadline runs from sent_at (a scheduled send: when it went out); none before it went out', () => {
			const scheduled = (now: number, sent_at: string | null) =>
				detectEvents({
					detail: {
						notification: {
							id: 'n2',
							status: 'sent',
							scheduled_at: '2026-03-02T08:00:00.000Z',
							sent_at,
						},
						deliveries: deliveries.slice(3, 4),
					},
					emittedKeys: new Set(),
					selected: new Set(['notOpenedInTime'] as const),
					now,
					openDeadlinesMs: [15 * MINUTE_MS],
				});
			expect(scheduled(deadline - 1, sentAt)).toEqual([]);
			expect(scheduled(deadline, sentAt).map((event) => event.key)).toEqual([
				'notOpened:notOpened',
			]);
			expect(scheduled(deadline + HOUR_MS, null)).toEqual([]);
		});
	});
});
