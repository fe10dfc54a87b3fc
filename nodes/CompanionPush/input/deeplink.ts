/** The in-app destinations of the spec's deeplink table. */
const DEEPLINK_SCHEME = 'companionapp://';
const KNOWN_DESTINATIONS = ['home', 'chat', 'coach'] as const;

/** The first control character (C0, DEL, C1, or a Unicode line or paragraph separator) and where. */
function firstControlCharacter(text: string): { index: number; code: number } | undefined {
	for (let index = 0; index < text.length; index++) {
		const code = text.charCodeAt(index);
		if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029)
			return { index, code };
	}
	return undefined;
}

type Deeplink = { deeplink?: string; warning?: string } | { problem: string; field: string };

/** Builds the deeplink from the picker, or says which field is wrong. */
export function buildDeeplink(
	choice: string,
	announcementId: string,
	customValue: string,
): Deeplink {
	switch (choice) {
		case '':
		case 'none':
			return {};
		case 'home':
		case 'chat':
		case 'coach':
			return { deeplink: `${DEEPLINK_SCHEME}${choice}` };
		case 'announcement':
			if (announcementId.trim() === '') {
				return {
					field: 'Announcement to Open',
					problem:
						'is needed to open an announcement: fill it in (or Linked Announcement ID), or pick another Deeplink',
				};
			}
			return {
				deeplink: `${DEEPLINK_SCHEME}announcement/${encodeURIComponent(announcementId.trim())}`,
			};
		case 'custom':
			return checkCustomDeeplink(customValue, 'Custom Deeplink');
		default:
			// An expression may put a full deeplink straight into the picker: a problem is the picker's.
			return checkCustomDeeplink(choice, 'Deeplink');
	}
}

function checkCustomDeeplink(value: string, field: string): Deeplink {
	const deeplink = value.trim();
	// A line break, tab or other invisible character inside an address is a slip of the expression
	// (a value with its new line); the app would not open it. Refused, so nothing is sent.
	const control = firstControlCharacter(deeplink);
	if (control) {
		const code = control.code.toString(16).toUpperCase().padStart(4, '0');
		return {
			field,
			problem: `contains a control character (U+${code}, a line break, tab or other invisible character) at position ${control.index + 1}: remove it`,
		};
	}
	if (!deeplink.startsWith(DEEPLINK_SCHEME)) {
		return {
			field,
			problem: `must start with ${DEEPLINK_SCHEME} (got "${deeplink.slice(0, 60)}"), e.g. ${DEEPLINK_SCHEME}chat`,
		};
	}
	const path = deeplink.slice(DEEPLINK_SCHEME.length);
	const known =
		(KNOWN_DESTINATIONS as readonly string[]).includes(path) || /^announcement\/[^/]+$/.test(path);
	return known
		? { deeplink }
		: {
				deeplink,
				warning: `Deeplink "${deeplink}" is not one of the app's destinations: a tap only opens the app`,
			};
}
