import type { ListShape } from '../types.cts';

export interface ListPage {
	items: unknown[];
	/** All sends of the organization, not only this page. */
	total: number;
	skip: number;
	limit: number;
}

/** Spec GET /push-notification/list: "Response body of this endpoint: not shown" (see ListShape). */
export function renderList(page: ListPage, shape: ListShape): unknown {
	const { items, total, skip, limit } = page;
	switch (shape) {
		case 'envelope':
			return { ok: true, data: { notifications: items, total, skip, limit } };
		case 'bareArray':
			return items;
		case 'dataArray':
			return { ok: true, data: items };
		case 'dataItems':
			return { ok: true, data: { items, total } };
		case 'dataNotifications':
			return { ok: true, data: { notifications: items, total } };
	}
}
