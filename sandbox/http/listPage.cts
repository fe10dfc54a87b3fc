import { isListed, publicRecord, type StoredNotification } from '../notifications/store.cts';
import type { SendView } from '../notifications/timeline.cts';
import type { SandboxState } from '../state.cts';
import type { SandboxSettings } from '../types.cts';
import type { ListPage } from './listShapes.cts';

/**
 * The page GET /push-notification/list answers (spec: newest first; body, paging and filters not
 * shown). By default: every registered send of the org, `skip`/`limit` honoured, each element the
 * notification record plus `target_user_ids`. The switches make it mislead a client the way a real
 * list can: sends listed late (listLagMs, a fault's listDelayMs), `skip` ignored, pages silently
 * smaller than asked, fields left out.
 */
export function listPage(
	state: SandboxState,
	orgId: string,
	asked: { skip: number; limit: number },
	now: number,
): ListPage {
	const { settings } = state;
	const listed = state.store.list(orgId).filter((stored) => isListed(stored, now, settings));
	const from = settings.listIgnoresSkip ? 0 : asked.skip;
	const size =
		settings.listMaxPageSize === null
			? asked.limit
			: Math.min(asked.limit, settings.listMaxPageSize);
	const items = listed
		.slice(from, from + size)
		.map((stored) => listElement(stored, state.view(stored, now), settings));
	// The envelope echoes what was asked, so neither switch shows in the answer.
	return { items, total: listed.length, skip: asked.skip, limit: asked.limit };
}

function listElement(
	stored: StoredNotification,
	view: SendView,
	settings: SandboxSettings,
): Record<string, unknown> {
	const element = publicRecord(stored, view, settings);
	if (settings.listIncludesTargets) element.target_user_ids = [...stored.input.target_user_ids];
	for (const field of settings.listOmitsFields) delete element[field];
	return element;
}
