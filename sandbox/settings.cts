import { z } from 'zod';
import { isKnownZone } from './notifications/shownTimes.cts';
import { STORED_FORM_DEFAULTS, storedFormsSchema } from './notifications/storedForms.cts';
import {
	ERROR_SHAPES,
	LIST_FIELDS,
	LIST_SHAPES,
	type ErrorShape,
	type ListField,
	type ListShape,
	type SandboxSettings,
} from './types.cts';

/** The documented default of every "not shown" choice (see README, conformance table). */
export const DEFAULT_SETTINGS: SandboxSettings = {
	listShape: 'envelope',
	errorShape: 'okFalse',
	tokenLifetimeSeconds: 3600, // spec Authentication 4
	refreshRevokesPreviousTokens: false,
	listIncludesTargets: true,
	recordIncludesAnnouncementId: false, // the record table does not list it
	listDefaultLimit: 100,
	listLagMs: 0, // list paging and filters: not shown
	listIgnoresSkip: false,
	listMaxPageSize: null,
	listOmitsFields: [],
	userListDefaultLimit: 100,
	userListOverLimit: 'clamp',
	userListIgnoresSkip: false,
	scheduledAtWithoutZoneStatus: 400,
	tenantIdPolicy: 'reject',
	sendWithoutOrganizationUser: 'accept', // spec: such ids do not receive it
	maxTitleLength: null,
	maxBodyLength: null,
	storageTrimsText: false, // the record table: title and body "As sent"
	storedTitleMaxLength: null,
	storedBodyMaxLength: null,
	maxRecipients: null,
	deliveryMs: 1500,
	scheduleLatenessMs: 0,
	pastScheduledAtShownAs: 'null', // the record table: "Null when the send was not scheduled"
	retriesVisible: true,
	autoTapShare: 0,
	autoTapAfterMs: 60_000,
	latencyMs: 0,
	latencyJitterMs: 0,
	rateLimitPerSecond: null, // spec Limits: "Rate limits: not shown"
	maxInFlight: null,
	clockOffsetMs: 0,
	timesWithoutZone: null, // spec: "ISO 8601"; written in UTC with Z
	...STORED_FORM_DEFAULTS, // as sent: see notifications/storedForms.ts
	deliveryOrder: 'planned', // order of the delivery entries: not shown
	detailMaxDeliveries: null,
};

const nonNegativeInt = z.number().int().nonnegative();
const limitOrNull = z.number().int().positive().nullable();

/** Checks a partial settings object (from options, a test, or POST /__sandbox/settings). */
export const settingsPatchSchema = z
	.object({
		listShape: z.enum(LIST_SHAPES as [ListShape, ...ListShape[]]),
		errorShape: z.enum(ERROR_SHAPES as [ErrorShape, ...ErrorShape[]]),
		tokenLifetimeSeconds: z.number().int().positive(),
		refreshRevokesPreviousTokens: z.boolean(),
		listIncludesTargets: z.boolean(),
		recordIncludesAnnouncementId: z.boolean(),
		listDefaultLimit: z.number().int().min(1).max(1000),
		listLagMs: nonNegativeInt,
		listIgnoresSkip: z.boolean(),
		listMaxPageSize: limitOrNull,
		listOmitsFields: z.array(z.enum(LIST_FIELDS as [ListField, ...ListField[]])),
		userListDefaultLimit: z.number().int().min(1).max(1000),
		userListOverLimit: z.enum(['clamp', 'reject']),
		userListIgnoresSkip: z.boolean(),
		sendWithoutOrganizationUser: z.enum(['accept', 'reject']),
		scheduledAtWithoutZoneStatus: z.union([z.literal(400), z.literal(422)]),
		tenantIdPolicy: z.enum(['reject', 'ignore']),
		maxTitleLength: limitOrNull,
		maxBodyLength: limitOrNull,
		storageTrimsText: z.boolean(),
		storedTitleMaxLength: limitOrNull,
		storedBodyMaxLength: limitOrNull,
		maxRecipients: limitOrNull,
		deliveryMs: nonNegativeInt,
		scheduleLatenessMs: nonNegativeInt,
		pastScheduledAtShownAs: z.enum(['null', 'asSent']),
		retriesVisible: z.boolean(),
		autoTapShare: z.number().min(0).max(1),
		autoTapAfterMs: nonNegativeInt,
		latencyMs: nonNegativeInt,
		latencyJitterMs: nonNegativeInt,
		rateLimitPerSecond: z.number().positive().finite().nullable(),
		maxInFlight: limitOrNull,
		clockOffsetMs: z.number().int(),
		timesWithoutZone: z
			.string()
			.refine(isKnownZone, { message: 'an IANA time zone name, e.g. UTC or Europe/Berlin' })
			.nullable(),
		...storedFormsSchema,
		deliveryOrder: z.enum(['planned', 'lastUpdate']),
		detailMaxDeliveries: z.number().int().nonnegative().nullable(),
	})
	.partial()
	.strict();

/** Picks the settings fields out of an object that may hold other options too. */
export function pickSettings(source: object): Partial<SandboxSettings> {
	const picked: Record<string, unknown> = {};
	for (const key of Object.keys(DEFAULT_SETTINGS)) {
		const value = (source as Record<string, unknown>)[key];
		if (value !== undefined) picked[key] = value;
	}
	return picked as Partial<SandboxSettings>;
}

/** Validates a patch; throws an Error naming the bad setting. */
export function checkSettingsPatch(patch: unknown): Partial<SandboxSettings> {
	const result = settingsPatchSchema.safeParse(patch);
	if (!result.success) {
		const issue = result.error.issues[0];
		const where = issue.path.join('.') || '(settings)';
		throw new Error(`invalid sandbox setting ${where}: ${issue.message}`);
	}
	return result.data as Partial<SandboxSettings>;
}
