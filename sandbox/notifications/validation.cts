import { z } from 'zod';
import { ApiError, type FieldProblem } from '../apiError.cts';
import type { SandboxSettings } from '../types.cts';

/**
 * Validation of the send request, per the spec's field table. Each problem carries its status:
 * 422 for a required field that is missing or empty (spec Errors: "A required field is missing or
 * malformed, for example an empty recipient list"), 400 for a present field with an invalid value
 * (spec Errors: "A field value is invalid"). The answer is 422 when any field is missing, else 400;
 * its `field` is the first problem, `problems` lists all.
 */

export interface SendInput {
	title: string;
	body: string;
	target_user_ids: string[];
	image_url: string | null;
	deeplink: string | null;
	/** Normalized to UTC (toISOString), null when absent. */
	scheduled_at: string | null;
	announcement_id: string | null;
}

interface Problem extends FieldProblem {
	status: 400 | 422;
}

const nonBlank = z.string().trim().min(1);
/** ISO 8601 date-time with an explicit zone: `Z`, ±hh:mm or ±hhmm. */
const ISO_WITH_ZONE =
	/^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
const ISO_WITHOUT_ZONE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/i;
/** Spec: "Public https address of a JPG or PNG image". Paths without an extension are accepted (CDNs). */
const IMAGE_EXTENSION = /\.(jpe?g|png)$/i;
const HAS_EXTENSION = /\.[a-z0-9]{2,5}$/i;

export function validateSend(raw: unknown, settings: SandboxSettings): SendInput {
	if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
		throw new ApiError(400, 'invalid_body', 'The request body must be a JSON object');
	}
	const input = raw as Record<string, unknown>;
	const problems: Problem[] = [];
	const missing = (field: string, message = `${field} is required`) =>
		problems.push({ field, message, status: 422 });
	const invalid = (field: string, message: string) =>
		problems.push({ field, message, status: 400 });

	for (const field of ['title', 'body'] as const) {
		const value = input[field];
		if (value === undefined || value === null) missing(field);
		else if (typeof value !== 'string') invalid(field, `${field} must be a string`);
		else if (!nonBlank.safeParse(value).success) missing(field, `${field} must not be empty`);
	}
	const titleLimit = settings.maxTitleLength;
	if (titleLimit !== null && typeof input.title === 'string' && input.title.length > titleLimit) {
		invalid('title', `title is longer than ${titleLimit} characters`);
	}
	const bodyLimit = settings.maxBodyLength;
	if (bodyLimit !== null && typeof input.body === 'string' && input.body.length > bodyLimit) {
		invalid('body', `body is longer than ${bodyLimit} characters`);
	}

	const targets = input.target_user_ids;
	if (targets === undefined || targets === null) missing('target_user_ids');
	else if (!Array.isArray(targets))
		invalid('target_user_ids', 'target_user_ids must be an array of user id strings');
	else if (targets.length === 0)
		missing('target_user_ids', 'target_user_ids must hold at least one user id');
	else {
		const bad = targets.findIndex((id) => !nonBlank.safeParse(id).success);
		if (bad >= 0) invalid('target_user_ids', `target_user_ids[${bad}] must be a non-empty string`);
		else if (settings.maxRecipients !== null && targets.length > settings.maxRecipients) {
			invalid(
				'target_user_ids',
				`target_user_ids holds more than ${settings.maxRecipients} user ids`,
			);
		}
	}

	const imageUrl = input.image_url;
	if (imageUrl !== undefined && imageUrl !== null) {
		const url = typeof imageUrl === 'string' ? parseUrl(imageUrl) : undefined;
		if (url?.protocol !== 'https:')
			invalid('image_url', 'image_url must be a public https URL of a JPG or PNG image');
		else if (HAS_EXTENSION.test(url.pathname) && !IMAGE_EXTENSION.test(url.pathname)) {
			invalid('image_url', 'image_url must point to a JPG or PNG image');
		}
	}

	// Any deeplink string is accepted: "Any other value produces no error" (spec, Deeplink destinations).
	checkOptionalString(input, 'deeplink', invalid);
	checkOptionalString(input, 'announcement_id', invalid);

	const scheduledAt = input.scheduled_at;
	if (scheduledAt !== undefined && scheduledAt !== null) {
		if (typeof scheduledAt !== 'string')
			invalid('scheduled_at', 'scheduled_at must be an ISO 8601 string');
		else if (ISO_WITHOUT_ZONE.test(scheduledAt)) {
			problems.push({
				field: 'scheduled_at',
				message: 'scheduled_at has no time zone; add an offset such as +02:00 or Z',
				status: settings.scheduledAtWithoutZoneStatus,
			});
		} else if (!isRealDateTime(scheduledAt)) {
			invalid(
				'scheduled_at',
				'scheduled_at must be an ISO 8601 date-time with a time zone offset or Z',
			);
		}
	}

	// Spec Authentication 6: the organization comes from the credential; tenant_id must not be sent.
	if (
		'tenant_id' in input &&
		input.tenant_id !== undefined &&
		settings.tenantIdPolicy === 'reject'
	) {
		invalid(
			'tenant_id',
			'tenant_id must not be sent; the organization is taken from the credential',
		);
	}

	if (problems.length > 0) {
		problems.sort((a, b) => b.status - a.status); // the 422s (missing fields) first
		const [first] = problems;
		const code = first.status === 422 ? 'validation_error' : 'invalid_value';
		throw new ApiError(
			first.status,
			code,
			first.message,
			first.field,
			problems.map(({ field, message }) => ({ field, message })),
		);
	}

	return {
		title: input.title as string,
		body: input.body as string,
		target_user_ids: targets as string[],
		image_url: (imageUrl as string | null | undefined) ?? null,
		deeplink: (input.deeplink as string | null | undefined) ?? null,
		scheduled_at:
			typeof scheduledAt === 'string' ? new Date(Date.parse(scheduledAt)).toISOString() : null,
		announcement_id: (input.announcement_id as string | null | undefined) || null,
	};
}

/** Zone present, parseable, and a real calendar day (Date.parse rolls 02-30 over to March). */
function isRealDateTime(value: string): boolean {
	const match = ISO_WITH_ZONE.exec(value);
	if (!match || Number.isNaN(Date.parse(value))) return false;
	const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
	const calendar = new Date(Date.UTC(year, month - 1, day));
	return calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === day;
}

function parseUrl(value: string): URL | undefined {
	try {
		return new URL(value);
	} catch {
		return undefined;
	}
}

function checkOptionalString(
	input: Record<string, unknown>,
	field: string,
	invalid: (field: string, message: string) => void,
) {
	const value = input[field];
	if (value !== undefined && value !== null && typeof value !== 'string')
		invalid(field, `${field} must be a string`);
}
