/**
 * The "User" picker (listSearch searchUsers) run in n8n-core's real LoadOptionsContext, with the
 * credential resolved by the harness's credentials helper, against the sandbox.
 */
import { LoadOptionsContext } from 'n8n-core';
import { Workflow } from 'n8n-workflow';
import type { ILoadOptionsFunctions, INode } from 'n8n-workflow';

import { CompanionPush } from '../../nodes/CompanionPush/CompanionPush.node';
import {
	call,
	count,
	logOf,
	NODE_SANDBOX,
	REFRESH,
	storeFor,
	tokenFor,
	USER_LIST,
	useSandbox,
	buildAdditionalData,
	nodeTypes,
	type CredentialStore,
} from '../harness/index.cts';

interface UserRecord {
	id: string;
	name: string;
	lastname: string;
	username: string;
	email: string;
}

/** A load-options context as n8n's editor builds one for the "user" parameter of the node. */
function pickerContext(store: CredentialStore): ILoadOptionsFunctions {
	const stored = store.get();
	const node: INode = {
		id: 'n-test',
		name: 'Companion Push',
		type: 'companionPush',
		typeVersion: 1,
		position: [0, 0],
		parameters: { resource: 'notification', operation: 'send', audience: 'user' },
		credentials: { companionPushApi: { id: stored.id, name: stored.name } },
	};
	const workflow = new Workflow({
		id: 'wf-picker',
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes,
		settings: { timezone: 'UTC' },
	});
	return new LoadOptionsContext(workflow, node, buildAdditionalData(store), 'parameters.user');
}

describe('User picker (searchUsers)', () => {
	const sandbox = useSandbox({ ...NODE_SANDBOX, seedUsers: 1200, resetBeforeEach: true });
	let users: UserRecord[];
	const search = new CompanionPush().methods.listSearch.searchUsers;
	beforeAll(async () => {
		const token = await tokenFor(sandbox);
		users = (await call(sandbox, 'GET', '/user/list?skip=1100&limit=5', { token }))
			.body as UserRecord[];
	});

	test('no filter: the first page, named "Name Lastname (email)", with a token for the next page', async () => {
		const result = await search.call(pickerContext(storeFor(sandbox)));

		expect(result.results).toHaveLength(1000);
		expect(result.paginationToken).toBe('1000');
		expect(result.results[0].value).toBe(sandbox.orgs.primary.userIds[0]);
		expect(result.results[0].name).toMatch(/^\S+ \S+ \(\S+@\S+\)$/);
		expect(logOf(sandbox, USER_LIST).map((entry) => entry.query)).toEqual([
			{ skip: '0', limit: '1000' },
		]);
		expect(count(sandbox, REFRESH)).toBe(1);
	});

	test('the next page from the token, then an empty page: no token once the list is read to its end', async () => {
		const context = pickerContext(storeFor(sandbox));
		const second = await search.call(context, '', '1000');
		expect(second.results.map((entry) => entry.value)).toEqual(
			sandbox.orgs.primary.userIds.slice(1000),
		);
		expect(second.paginationToken).toBe('1200');

		const last = await search.call(context, '', second.paginationToken);
		expect(last).toEqual({ results: [] });
		expect(logOf(sandbox, USER_LIST).map((entry) => entry.query.skip)).toEqual(['1000', '1200']);
	});

	test('a filter on the e-mail finds that user on the second page, case-insensitively', async () => {
		const wanted = users[2];
		const result = await search.call(pickerContext(storeFor(sandbox)), wanted.email.toUpperCase());

		expect(result.results.map((entry) => entry.value)).toContain(wanted.id);
		expect(
			result.results.every((entry) =>
				String(entry.name).toLowerCase().includes(wanted.email.toLowerCase()),
			),
		).toBe(true);
	});

	test('a filter matching nobody: no results, the whole list read once', async () => {
		const result = await search.call(pickerContext(storeFor(sandbox)), 'zz-nobody-by-this-name');
		expect(result.results).toEqual([]);
		expect(result.paginationToken).toBeUndefined();
		expect(logOf(sandbox, USER_LIST).map((entry) => entry.query.skip)).toEqual([
			'0',
			'1000',
			'1200',
		]);
	});
});
