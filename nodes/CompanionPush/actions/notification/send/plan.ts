import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, NodeApiError } from 'n8n-workflow';

import { batchContentId, toBatches, uniqueUserIds } from '../../../input/recipients';
import { listActiveUserIds, listUsers } from '../../../transport';
import type { SendRequest } from '../../../transport';
import { asNodeError, fieldError } from '../../../nodeErrors';
import { notSentForOtherItems } from './failures';
import { RunCap } from './capPerPerson';
import { zoneParts } from './localDelivery';
import type { Audience, BatchDelivery, SendGroup, SendInput, SendTask } from './types';

/** What the plan hands the run: the groups, their batches, and what could not be planned. */
export interface SendPlan {
	groups: SendGroup[];
	tasks: SendTask[];
	/** Groups whose audience could not be read or is empty (when the node continues on fail). */
	groupErrors: Map<SendGroup, NodeApiError | NodeOperationError>;
	/** With "Cap per Person": the slots taken and the people left out (capPerPerson.ts). */
	cap?: RunCap;
}

/** One group per item, or one for all items in "One Send for All Items" mode. */
function groupsOf(input: SendInput): SendGroup[] {
	const { checkedItems } = input;
	if (!input.combined)
		return checkedItems.map((item) => ({
			lead: item,
			items: [item],
			userIds: item.userIds,
			pairedItems: [{ item: item.itemIndex }],
			layout: [],
		}));
	return [
		{
			lead: checkedItems[0],
			items: checkedItems,
			userIds: checkedItems.flatMap((item) => item.userIds),
			pairedItems: checkedItems.map((item) => ({ item: item.itemIndex })),
			layout: [],
		},
	];
}

/** Reads audiences that live in the API once per run, however many items ask for them. */
function audienceReader(context: IExecuteFunctions) {
	const cache = new Map<Audience, Promise<string[]>>();
	return async (group: SendGroup): Promise<string[]> => {
		const { audience, itemIndex } = group.lead;
		if (audience === 'userIds' || audience === 'user') return group.userIds;
		if (!cache.has(audience)) {
			cache.set(
				audience,
				audience === 'allUsers'
					? listUsers(context, Infinity, itemIndex).then((users) => users.map((user) => user.id))
					: listActiveUserIds(context, itemIndex),
			);
		}
		return await cache.get(audience)!;
	};
}

/** The request a batch goes out with: its group's message, its recipients, and the time it goes out
 * at: its zone's with a delivery policy (absent: now), else the item's. */
function requestFor(group: SendGroup, batch: string[], delivery?: BatchDelivery): SendRequest {
	const { title, body, image_url, deeplink, announcement_id } = group.lead.message;
	const scheduledAt = delivery ? delivery.scheduledAt : group.lead.scheduledAtWithOffset;
	return {
		title,
		body,
		target_user_ids: batch,
		...(image_url ? { image_url } : {}),
		...(deeplink ? { deeplink } : {}),
		...(announcement_id ? { announcement_id } : {}),
		...(scheduledAt ? { scheduled_at: scheduledAt } : {}),
	};
}

/** A group's batches of at most Batch Size; with a delivery policy, per time zone first, each
 * batch with its zone's delivery time. */
function batchesOf(
	context: IExecuteFunctions,
	group: SendGroup,
	recipients: string[],
): Array<{ batch: string[]; delivery?: BatchDelivery }> {
	const { lead } = group;
	if (!lead.delivery) return toBatches(recipients, lead.batchSize).map((batch) => ({ batch }));
	const parts = zoneParts(group, recipients, context.getTimezone(), Date.now());
	if ('problem' in parts)
		throw fieldError(context, 'Scheduled At', parts.problem, lead.itemIndex, 'item');
	return parts.flatMap(({ recipients: ofZone, delivery, usersWithoutTimeZone }) =>
		toBatches(ofZone, lead.batchSize).map((batch) => ({
			batch,
			delivery: {
				...delivery,
				usersWithoutTimeZone: batch.filter((userId) => usersWithoutTimeZone.has(userId)),
			},
		})),
	);
}

/**
 * The sends to make, read before any is made: each group's audience (those read from the API once
 * per run), de-duplicated, split by time zone when a delivery policy applies (localDelivery.ts), and
 * into batches of at most Batch Size, each with the request it goes out with; with Cap per Person, people over the cap are taken out first
 * (capPerPerson.ts). A group whose audience cannot be read, or is empty, fails whole: it stops the node (naming the items not sent), or,
 * when the node continues on fail, it is set aside with its error.
 */
export async function planSends(context: IExecuteFunctions, input: SendInput): Promise<SendPlan> {
	const groups = groupsOf(input);
	const readAudience = audienceReader(context);
	const tasks: SendTask[] = [];
	const groupErrors = new Map<SendGroup, NodeApiError | NodeOperationError>();
	const setAside = (group: SendGroup, error: unknown) => {
		const nodeError = asNodeError(context, error, group.lead.itemIndex);
		if (!context.continueOnFail()) throw notSentForOtherItems(nodeError, group, groups);
		groupErrors.set(group, nodeError);
	};
	const audiences: Array<{ group: SendGroup; recipients: string[] }> = [];
	for (const group of groups) {
		try {
			const recipients = uniqueUserIds(await readAudience(group));
			if (recipients.length === 0) {
				throw new NodeOperationError(
					context.getNode(),
					'The audience has no users: nothing was sent',
					{
						itemIndex: group.lead.itemIndex,
						description:
							group.lead.audience === 'activeUsers'
								? 'No user has an active app right now (installed, logged in, notifications allowed).'
								: 'The organization has no users.',
					},
				);
			}
			audiences.push({ group, recipients });
		} catch (error) {
			setAside(group, error);
		}
	}
	const capRule = input.checkedItems[0].cap;
	const cap = capRule ? await RunCap.apply(context, capRule, audiences) : undefined;
	for (const { group, recipients } of audiences) {
		// Every person over the cap: no send, the item says so (capPerPerson.ts).
		if (recipients.length === 0) continue;
		try {
			const batches = batchesOf(context, group, recipients);
			group.layout = batches.map(({ batch }) => batchContentId(batch));
			batches.forEach(({ batch, delivery }, batchIndex) =>
				tasks.push({
					group,
					batch,
					batchId: group.layout[batchIndex],
					batchIndex,
					batchCount: batches.length,
					request: requestFor(group, batch, delivery),
					...(delivery ? { delivery } : {}),
				}),
			);
		} catch (error) {
			// (Send, the one operation with a cap, plans no time that can fail here.)
			setAside(group, error);
		}
	}
	return { groups, tasks, groupErrors, ...(cap ? { cap } : {}) };
}
