/* The trigger's filters (Title Contains, Title Excludes, Announcement ID): which sends it watches. */

export interface Filters {
	/** Only sends whose title contains this text (case-insensitive). */
	titleContains?: string;
	/** Not the sends whose title contains this text (case-insensitive), e.g. the ladder's own
	 * reminders, which the API cannot tell apart from other sends. */
	titleExcludes?: string;
	/** Only sends linked to this announcement (its `announcement_id`, or its announcement deeplink). */
	announcementId?: string;
}

/**
 * Whether a send (a listed one or a detail record) passes the filters: true, false, or undefined
 * when the record does not carry the field needed to decide (the list body is not shown in the
 * spec, so a listed send may lack it; the detail then decides).
 */
export function matchesFilters(
	record: { title?: string | null; deeplink?: string | null; announcement_id?: unknown },
	filters: Filters,
	final = false,
): boolean | undefined {
	let undecided = false;
	const title = filters.titleContains?.trim();
	if (title) {
		if (typeof record.title !== 'string') undecided = true;
		else if (!record.title.toLowerCase().includes(title.toLowerCase())) return false;
	}
	const excluded = filters.titleExcludes?.trim();
	if (excluded) {
		// No title holds no marker; a listed send without one is decided by its detail.
		if (typeof record.title !== 'string') undecided ||= !final;
		else if (record.title.toLowerCase().includes(excluded.toLowerCase())) return false;
	}
	const announcementId = filters.announcementId?.trim();
	if (announcementId) {
		// Spec: "Whether the record also returns announcement_id: not shown"; a send about an
		// announcement usually opens it, so its deeplink names it too.
		const linked =
			String(record.announcement_id ?? '') === announcementId ||
			record.deeplink === `companionapp://announcement/${announcementId}`;
		if (!linked) {
			if ('announcement_id' in record || 'deeplink' in record || final) return false;
			undecided = true;
		}
	}
	if (undecided) return final ? false : undefined;
	return true;
}
