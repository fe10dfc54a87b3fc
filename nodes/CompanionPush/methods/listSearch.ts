import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { listUsersPage, USER_PAGE_SIZE } from '../transport';

/** Users for the "User" picker. The API has no search, so pages of the user list are read and
 * filtered here by name, username or e-mail; the next page token is the `skip` to read from. */
export async function searchUsers(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const wanted = (filter ?? '').trim().toLowerCase();
	let skip = Number(paginationToken ?? 0) || 0;
	const results: INodeListSearchResult['results'] = [];
	// A few pages per call at most, so the picker answers quickly even for large organizations.
	for (let pagesRead = 0; pagesRead < 5 && results.length < 50; pagesRead++) {
		const page = await listUsersPage(this, skip, USER_PAGE_SIZE);
		if (page.length === 0) return { results };
		skip += page.length;
		for (const user of page) {
			const fullName = [user.name, user.lastname].filter(Boolean).join(' ');
			const text = [fullName, user.username, user.email, user.id].join(' ').toLowerCase();
			if (wanted === '' || text.includes(wanted)) {
				results.push({
					name: `${fullName || user.username || user.id}${user.email ? ` (${user.email})` : ''}`,
					value: user.id,
				});
			}
		}
	}
	return { results, paginationToken: String(skip) };
}
