/**
 * "Not ours" needs proof as strong as "ours" (safeSend/match.ts): a difference the spec lets the API
 * make (a cut counted in UTF-16 units, the case of user IDs, recipients outside the organization
 * left out or not counted) is never taken for another send; a canceled send never for ours.
 */
import {
	compareDeliveries,
	compareSend,
	matchOf,
	NO_EVIDENCE,
	notTold,
} from '../../nodes/CompanionPush/transport/safeSend/match';
import type { SeenTexts } from '../../nodes/CompanionPush/transport/safeSend/match';
import type { SendRequest } from '../../nodes/CompanionPush/transport/schemas';

const request: SendRequest = {
	title: 'Shift change now 🚨🚨', // 19 code points, 21 UTF-16 units
	body: 'Open the app to read it.',
	target_user_ids: ['A1', 'B2'],
};
const listed = (fields: Record<string, unknown> = {}) => ({
	id: 'n1',
	title: request.title,
	body: request.body,
	target_user_ids: ['A1', 'B2'],
	status: 'sent',
	scheduled_at: null,
	created_at: '2026-03-02T09:00:00.000Z',
	...fields,
});
const seen = (title: Partial<SeenTexts['title']>): SeenTexts => ({
	...NO_EVIDENCE,
	title: { ...NO_EVIDENCE.title, ...title },
});
const match = (fields: Record<string, unknown>, evidence: SeenTexts = NO_EVIDENCE) =>
	matchOf(compareSend(listed(fields), request, evidence), request);

describe('a text cut by UTF-16 units', () => {
	const halfEmoji = request.title.slice(0, 20); // 20 units, the last one half an emoji
	const noHalf = request.title.slice(0, 19); // the half dropped

	test('seen cutting ours to 20 units: ours, with the half emoji kept or dropped', () => {
		expect(match({ title: halfEmoji }, seen({ cutLengths: [20], cutUnits: [20] }))).toBe('exact');
		expect(match({ title: noHalf }, seen({ cutLengths: [20], cutUnits: [20] }))).toBe('exact');
	});

	test('seen cutting nothing of ours: a cut inside an emoji cannot tell', () => {
		expect(match({ title: halfEmoji })).toBe('undecided');
	});
});

describe('recipients', () => {
	test('user IDs in another case or with surrounding space: the same users', () => {
		expect(match({ target_user_ids: ['a1', ' b2 '] })).toBe('exact');
	});

	test('only some of ours shown: cannot tell, and the unknown says why; one not ours: another send', () => {
		const comparison = compareSend(listed({ target_user_ids: ['a1'] }), request, NO_EVIDENCE);
		expect(matchOf(comparison, request)).toBe('undecided');
		expect(notTold(comparison)).toEqual([
			'only with some of its recipients (this API may leave out, or not count, users outside the organization)',
		]);
		expect(match({ target_user_ids: ['a1', 'c3'] })).toBe('different');
	});

	test('a detail: fewer users counted than ours cannot tell, more prove another send; its delivery entries in another case are ours', () => {
		const wanted = new Set(request.target_user_ids);
		expect(compareDeliveries([{ user_id: 'a1' }], 1, wanted)).toBe('unsure');
		expect(compareDeliveries([], 1, wanted)).toBe('notShown');
		expect(compareDeliveries([{ user_id: 'a1' }], 3, wanted)).toBe('different');
		expect(compareDeliveries([{ user_id: 'a1' }, { user_id: 'b2' }], 2, wanted)).toBe('same');
	});
});

test('a canceled send exactly like ours is never ours; without a status shown, nothing tells', () => {
	expect(match({ status: 'canceled' })).toBe('different');
	expect(match({ status: 'scheduled' })).toBe('exact');
	const comparison = compareSend(listed({ status: undefined }), request, NO_EVIDENCE);
	expect(matchOf(comparison, request)).toBe('undecided');
	expect(notTold(comparison)).toEqual(['the API does not show its status']);
});
