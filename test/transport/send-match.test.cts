/**
 * The match of a listed send with a request (safeSend/match.ts), and what the list of sends teaches
 * about this API's texts (safeSend/registry.ts): a shorter text is ours only where this API was seen
 * to cut ours to that length, and a send shown without a scheduled time is ours only when ours was
 * already due when the API registered it (its own clock, to the precision it writes).
 */
import { resetProcessState } from '../../devkit/processState.cts';
import {
	compareSend,
	learnText,
	matchOf,
	NO_EVIDENCE,
	noEvidence,
	notTold,
} from '../../nodes/CompanionPush/transport/safeSend/match';
import type { SeenTexts } from '../../nodes/CompanionPush/transport/safeSend/match';
import { learnFromListed, seenTexts } from '../../nodes/CompanionPush/transport/safeSend/listings';
import { recordOwner } from '../../nodes/CompanionPush/transport/safeSend/registry';
import type { CompanionPushContext } from '../../nodes/CompanionPush/transport/http';
import type { SendRequest } from '../../nodes/CompanionPush/transport/schemas';

const request: SendRequest = {
	title: 'New message from Anna',
	body: 'Open the app to read it.',
	target_user_ids: ['u1'],
};
/** A listed send exactly like the request, but what `fields` changes. */
const listed = (fields: Record<string, unknown> = {}) => ({
	id: 'n1',
	title: request.title,
	body: request.body,
	target_user_ids: ['u1'],
	status: 'sent',
	scheduled_at: null,
	created_at: '2026-03-02T09:00:00.000Z',
	...fields,
});
const seen = (title: Partial<SeenTexts['title']>): SeenTexts => ({
	...NO_EVIDENCE,
	title: { ...NO_EVIDENCE.title, ...title },
});

describe('a shorter text', () => {
	const ann = listed({ title: 'New message from Ann' });

	test('with no evidence of how this API stores texts: undecided, and the unknown says why', () => {
		const comparison = compareSend(ann, request, NO_EVIDENCE);
		expect(comparison.title).toBe('unsure');
		expect(matchOf(comparison, request)).toBe('undecided');
		expect(notTold(comparison)).toEqual([
			'only with a shorter title (and this API was never seen to cut a title of ours to that length)',
		]);
	});

	test('this API was seen to cut a title of ours to that very length: ours', () => {
		expect(matchOf(compareSend(ann, request, seen({ cutLengths: [20] })), request)).toBe('exact');
	});

	test('this API was seen to cut titles to another length only: undecided', () => {
		expect(matchOf(compareSend(ann, request, seen({ cutLengths: [12] })), request)).toBe(
			'undecided',
		);
	});

	test('this API was seen to keep titles of ours whole, even longer ones: a cut still cannot tell (its limit may have changed since)', () => {
		const evidence = noEvidence();
		learnText(evidence.title, `${request.title} and more`, `${request.title} and more`);
		expect(matchOf(compareSend(ann, request, evidence), request)).toBe('undecided');
	});

	test('a text that is no prefix of ours is another text, evidence or not; the same text trimmed is ours', () => {
		expect(
			matchOf(
				compareSend(listed({ title: 'New message from Bob' }), request, NO_EVIDENCE),
				request,
			),
		).toBe('different');
		expect(
			matchOf(compareSend(listed({ title: ` ${request.title}\n` }), request, NO_EVIDENCE), request),
		).toBe('exact');
	});
});

describe('what the list teaches of texts (sends of this process only)', () => {
	const context = {
		getNode: () => ({ credentials: { companionPushApi: { id: 'cred-match' } } }),
	} as unknown as CompanionPushContext;
	beforeEach(() => resetProcessState());
	afterAll(() => resetProcessState());

	test('an own send listed cut (with an ellipsis) teaches that length; one listed whole teaches its length; others teach nothing', () => {
		recordOwner(context, 'own-cut', 'owner-a', {
			...request,
			title: 'Shift change for the night team',
		});
		recordOwner(context, 'own-whole', 'owner-b', { ...request, title: 'Short title' });
		learnFromListed(context, { id: 'own-cut', title: 'Shift change for th…', body: request.body });
		learnFromListed(context, { id: 'own-whole', title: 'Short title', body: request.body });
		learnFromListed(context, { id: 'someone-else', title: 'New message from', body: 'Open' });

		expect(seenTexts(context)).toEqual({
			title: { cutLengths: [20], cutUnits: [20] },
			body: { cutLengths: [], cutUnits: [] },
		});
		// A send of another client cut the same way is taken for ours (the API cuts ours so); the shown
		// length must match.
		const long = { ...request, title: 'Shift change for the morning team' };
		expect(
			matchOf(
				compareSend(listed({ title: 'Shift change for th…' }), long, seenTexts(context)),
				long,
			),
		).toBe('exact');
		expect(
			matchOf(compareSend(listed({ title: 'Shift change for' }), long, seenTexts(context)), long),
		).toBe('undecided');
	});
});

describe('a send shown without a scheduled time, for a request with one', () => {
	const createdAt = '2026-03-02T09:00:00Z'; // whole seconds: registered within the second after it
	const due = (offsetMs: number) => ({
		...request,
		scheduled_at: new Date(Date.parse(createdAt) + offsetMs).toISOString(),
	});
	const verdict = (offsetMs: number, created: unknown = createdAt) =>
		compareSend(listed({ created_at: created }), due(offsetMs), NO_EVIDENCE).scheduledAt;

	test("due at or before its creation on the API's clock: past there, sent at once: it may be ours", () => {
		expect(verdict(-30_000)).toBe('same');
		expect(verdict(0)).toBe('same');
	});

	test('due after its creation, beyond the precision of the time written: not ours', () => {
		expect(verdict(1_000)).toBe('different');
		expect(verdict(3_600_000)).toBe('different');
		expect(verdict(2, '2026-03-02T09:00:00.000Z')).toBe('different');
	});

	test('due within the second a whole-second creation time leaves open: unsure; no creation time: not shown', () => {
		expect(verdict(400)).toBe('unsure');
		expect(verdict(400, null)).toBe('notShown');
	});

	test('a request without a scheduled time: null is the same, a time is another send', () => {
		expect(compareSend(listed(), request, NO_EVIDENCE).scheduledAt).toBe('same');
		expect(compareSend(listed({ scheduled_at: createdAt }), request, NO_EVIDENCE).scheduledAt).toBe(
			'different',
		);
	});
});

describe('times written without a zone (the wall time of a zone the API does not name)', () => {
	const scheduled = { ...request, scheduled_at: '2026-03-02T12:00:00+01:00' }; // 11:00 UTC
	const verdict = (fields: Record<string, unknown>, sent: SendRequest = scheduled) =>
		compareSend(listed(fields), sent, NO_EVIDENCE).scheduledAt;

	test('a scheduled time without a zone that some zone could write for ours: unsure, and the reason says why', () => {
		for (const wall of ['2026-03-02T11:00:00', '2026-03-02T12:00:00.000', '2026-03-02T06:00:00'])
			expect(verdict({ scheduled_at: wall })).toBe('unsure');
		const comparison = compareSend(
			listed({ scheduled_at: '2026-03-02T12:00:00' }),
			scheduled,
			NO_EVIDENCE,
		);
		expect(matchOf(comparison, scheduled)).toBe('undecided');
		expect(notTold(comparison)).toEqual([
			'only with a scheduled time that cannot tell (none, for a send made about when ours was due, or one written without a time zone)',
		]);
	});

	test('one farther from ours than any zone is from UTC (UTC-12 to UTC+14): another send', () => {
		expect(verdict({ scheduled_at: '2026-03-03T01:00:01' })).toBe('different'); // 14 h 1 s ahead
		expect(verdict({ scheduled_at: '2026-03-01T22:59:59' })).toBe('different'); // 12 h 1 s behind
		expect(verdict({ scheduled_at: '2026-03-03T00:59:00' })).toBe('unsure');
	});

	test('a null scheduled time and a creation time without a zone: nothing tells whether ours was due', () => {
		expect(verdict({ scheduled_at: null, created_at: '2026-03-02T12:00:00.000' })).toBe('notShown');
	});

	test('with a zone, whichever offset the API writes: the same instant, as before', () => {
		expect(verdict({ scheduled_at: '2026-03-02T11:00:00Z' })).toBe('same');
		expect(verdict({ scheduled_at: '2026-03-02T06:00:00.000-05:00' })).toBe('same');
		expect(verdict({ scheduled_at: '2026-03-02T11:05:00Z' })).toBe('different');
	});
});
