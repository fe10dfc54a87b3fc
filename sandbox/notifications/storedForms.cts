import { z } from 'zod';

/**
 * Differences the specification leaves an API free to make between a send as requested and the send
 * as it stores and shows it: how a cut text is counted, the case of user IDs, and whom
 * `targeted_users` counts. Each is a switch (SandboxSettings); the defaults keep what was sent.
 */
export interface StoredFormSwitches {
	/**
	 * How storedTitleMaxLength / storedBodyMaxLength count (spec Limits: enforced lengths "not shown").
	 * `codePoints` (default): as a database column of characters does, no emoji split. `utf16Units`:
	 * as JavaScript, Java or .NET strings do, so a cut may fall inside an emoji and keep its first half.
	 */
	storedTextCutsBy: 'codePoints' | 'utf16Units';
	/**
	 * The spec says nothing of the case of user IDs. false (default): an ID is matched exactly, so one
	 * in another case is outside the organization (not notified). true: IDs are matched without regard
	 * to case and stored in lower case, so the list's `target_user_ids` and the deliveries show them
	 * in lower case whatever case was sent.
	 */
	userIdsShownLowerCase: boolean;
	/**
	 * Whom `targeted_users` counts (spec: "Users in the recipient list", and IDs outside the caller's
	 * organization "do not receive the notification"). `organizationMembers` (default): the distinct
	 * recipients of the caller's organization. `allRecipients`: every distinct ID sent.
	 */
	targetedUsersCount: 'organizationMembers' | 'allRecipients';
}

export const STORED_FORM_DEFAULTS: StoredFormSwitches = {
	storedTextCutsBy: 'codePoints',
	userIdsShownLowerCase: false,
	targetedUsersCount: 'organizationMembers',
};

/** The checks of the switches, merged into the settings' schema (settings.ts). */
export const storedFormsSchema = {
	storedTextCutsBy: z.enum(['codePoints', 'utf16Units']),
	userIdsShownLowerCase: z.boolean(),
	targetedUsersCount: z.enum(['organizationMembers', 'allRecipients']),
};

/** The first maxLength characters, counted as `unit` says. */
export function cutText(
	text: string,
	maxLength: number | null,
	unit: StoredFormSwitches['storedTextCutsBy'],
): string {
	if (maxLength === null) return text;
	// String.slice counts UTF-16 units: a cut inside an emoji keeps its first half.
	if (unit === 'utf16Units') return text.slice(0, maxLength);
	const characters = Array.from(text);
	return characters.length <= maxLength ? text : characters.slice(0, maxLength).join('');
}

/** User IDs as the API stores them. */
export function storedUserIds(userIds: string[], switches: StoredFormSwitches): string[] {
	return switches.userIdsShownLowerCase ? userIds.map((userId) => userId.toLowerCase()) : userIds;
}

/** `targeted_users` of a send: its stored IDs, and those of them in the caller's organization. */
export function targetedUsersOf(
	storedIds: string[],
	memberIds: string[],
	switches: StoredFormSwitches,
): number {
	return switches.targetedUsersCount === 'allRecipients'
		? new Set(storedIds).size
		: memberIds.length;
}
