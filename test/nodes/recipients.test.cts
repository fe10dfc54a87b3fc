/**
 * The recipients helpers (helpers/recipients.ts) on plain inputs: how text is split, what looks
 * like an e-mail or a name, and when the API's count of recipients is worth a note.
 */
import {
	describeUnusualUserIds,
	parseUserIds,
	recipientsCountedByApi,
	unusualUserId,
} from '../../nodes/CompanionPush/input/recipients';

describe('recipients', () => {
	test('text splits on commas, semicolons and line breaks, not on spaces; each ID trimmed', () => {
		expect(parseUserIds(' a, b;c\r\nd\n\n, Jane Doe ,\te\t')).toEqual({
			userIds: ['a', 'b', 'c', 'd', 'Jane Doe', 'e'],
		});
	});

	test('an ID over 256 characters is a problem naming its place; 256 are taken', () => {
		expect(parseUserIds(['a', 'x'.repeat(256)])).toEqual({ userIds: ['a', 'x'.repeat(256)] });
		expect(parseUserIds(`a, ${'x'.repeat(257)}`)).toEqual({
			problem: expect.stringContaining('has an ID of 257 characters (ID 2'),
		});
	});

	test('an @ looks like an e-mail, a space inside like a name; hyphens, dots and digits do not', () => {
		expect(unusualUserId('jane@acme.com')).toBe('an e-mail');
		expect(unusualUserId('Jane Doe')).toBe('a name');
		expect(unusualUserId('Jane\u00a0Doe')).toBe('a name');
		expect(unusualUserId('e533773a0ba45c0000000000')).toBeUndefined();
		expect(unusualUserId('user-42.b_7')).toBeUndefined();
		expect(describeUnusualUserIds(['ok', 'a@b', 'c d', 'e@f', 'g h'])).toBe(
			'"a@b" looks like an e-mail, "c d" looks like a name, "e@f" looks like an e-mail and 1 more',
		);
		expect(describeUnusualUserIds(['ok'])).toBeUndefined();
	});

	test("the API's count gives a note only when it differs from the recipients asked", () => {
		expect(recipientsCountedByApi(3, { targeted_users: 3 })).toBeUndefined();
		expect(recipientsCountedByApi(3, {})).toBeUndefined();
		expect(recipientsCountedByApi(3, undefined)).toBeUndefined();
		expect(recipientsCountedByApi(3, { targeted_users: 1 })).toEqual({
			recipientsCountedByApi: 1,
			recipientsNote: expect.stringContaining('The API counts 1 of the 3 recipients'),
		});
	});
});
