import { buildDeeplink } from './deeplink';

/** The spec's recommended maximum lengths (the enforced ones are not shown). */
export const RECOMMENDED_TITLE_LENGTH = 50;
export const RECOMMENDED_BODY_LENGTH = 150;
/** The longest title and body taken: 20 and about 27 times the recommendations, and as long as the
 * 4 KB that Apple's and Google's push services carry for a whole notification. A longer text is a
 * mapping mistake (a whole document mapped into the field), refused before it is sent to anyone. */
export const MAX_TITLE_LENGTH = 1_000;
export const MAX_BODY_LENGTH = 4_000;

interface MessageFields {
	title: unknown;
	body: unknown;
	imageUrl?: unknown;
	deeplink?: unknown;
	deeplinkAnnouncementId?: unknown;
	customDeeplink?: unknown;
	announcementId?: unknown;
}

/** The message part of a send request, checked and ready to go out. */
export interface CheckedMessage {
	title: string;
	body: string;
	image_url?: string;
	deeplink?: string;
	announcement_id?: string;
	warnings: string[];
}

export interface FieldProblem {
	/** The field as the user sees it in n8n, e.g. "Image URL". */
	field: string;
	problem: string;
}

/** Text from a parameter: strings as they are, numbers and booleans written out; anything else
 * (an object or array from an expression) is a problem for the named field. */
function asText(value: unknown, field: string): string | FieldProblem {
	if (value === undefined || value === null) return '';
	if (typeof value === 'string') return value;
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	return {
		field,
		problem: `must be text, but the expression gave ${Array.isArray(value) ? 'a list' : 'an object'}`,
	};
}

export const isProblem = (value: unknown): value is FieldProblem =>
	typeof value === 'object' && value !== null && 'problem' in value;

/** Nothing visible: only white space and invisible format characters (zero-width spaces and
 * joiners, byte-order marks), which `trim()` keeps. */
function isBlank(text: string): boolean {
	return text.replace(/[\s\p{Cf}]/gu, '') === '';
}

/** Characters as a reader counts them (code points): an emoji is one, not the two UTF-16 units
 * of `.length`, so 30 emoji do not trip the 50-character recommendation. */
function characterCount(text: string): number {
	return Array.from(text).length;
}

function tooLong(field: string, length: number, most: number, recommended: number): FieldProblem {
	return {
		field,
		problem: `has ${length.toLocaleString('en-US')} characters: at most ${most.toLocaleString('en-US')} are taken (phones show far fewer; the API recommends ${recommended}). Check what the expression gives`,
	};
}

/** Checks title, body, image and deeplink against the spec's field table. */
export function checkMessage(fields: MessageFields): CheckedMessage | FieldProblem {
	const title = asText(fields.title, 'Title');
	if (isProblem(title)) return title;
	if (isBlank(title))
		return { field: 'Title', problem: 'is empty: a notification needs a visible title' };
	const body = asText(fields.body, 'Body');
	if (isProblem(body)) return body;
	if (isBlank(body))
		return { field: 'Body', problem: 'is empty: a notification needs a message text' };

	const lengths = [
		['Title', characterCount(title), MAX_TITLE_LENGTH, RECOMMENDED_TITLE_LENGTH],
		['Body', characterCount(body), MAX_BODY_LENGTH, RECOMMENDED_BODY_LENGTH],
	] as const;
	for (const [field, length, most, recommended] of lengths)
		if (length > most) return tooLong(field, length, most, recommended);
	const message: CheckedMessage = { title, body, warnings: [] };
	for (const [field, length, , recommended] of lengths) {
		if (length > recommended)
			message.warnings.push(
				`${field} has ${length} characters; the API recommends at most ${recommended} (phones may cut it)`,
			);
	}

	const imageUrl = asText(fields.imageUrl, 'Image URL');
	if (isProblem(imageUrl)) return imageUrl;
	if (imageUrl.trim() !== '') {
		const problem = checkImageUrl(imageUrl.trim());
		if (problem) return { field: 'Image URL', problem };
		message.image_url = imageUrl.trim();
	}

	const announcementId = asText(fields.announcementId, 'Linked Announcement ID');
	if (isProblem(announcementId)) return announcementId;
	if (announcementId.trim() !== '') message.announcement_id = announcementId.trim();

	const choice = asText(fields.deeplink, 'Deeplink');
	const deeplinkAnnouncementId = asText(fields.deeplinkAnnouncementId, 'Announcement to Open');
	const customDeeplink = asText(fields.customDeeplink, 'Custom Deeplink');
	for (const value of [choice, deeplinkAnnouncementId, customDeeplink])
		if (isProblem(value)) return value;
	const deeplink = buildDeeplink(
		choice as string,
		(deeplinkAnnouncementId as string) || announcementId,
		customDeeplink as string,
	);
	if ('problem' in deeplink) return deeplink;
	if (deeplink.deeplink) message.deeplink = deeplink.deeplink;
	if (deeplink.warning) message.warnings.push(deeplink.warning);
	return message;
}

/** The spec: a public https address of a JPG or PNG image. */
export function checkImageUrl(imageUrl: string): string | undefined {
	let url: URL;
	try {
		url = new URL(imageUrl);
	} catch {
		return `is not a web address: "${imageUrl.slice(0, 80)}"`;
	}
	if (url.protocol !== 'https:') return `must be a public https:// address (got ${url.protocol}//)`;
	if (!/\.(jpe?g|png)$/i.test(url.pathname)) return 'must point to a .jpg, .jpeg or .png image';
	return undefined;
}
