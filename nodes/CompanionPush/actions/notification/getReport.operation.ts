import { updateDisplayOptions } from 'n8n-workflow';
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	IPairedItemData,
} from 'n8n-workflow';

import { DEFAULT_BUCKET_MINUTES, DeliveryReport } from '../../report/deliveryReport';
import type { ReportOptions } from '../../report/deliveryReport';
import { MAX_ESCALATION_LEVELS, parseEscalationDeadlines } from '../../report/escalationDeadlines';
import { runPool } from '../../common/pool';
import { asNodeError, errorItem, fieldError } from '../../nodeErrors';
import { getNotificationWithClock, isListProbe } from '../../transport';
import { maxParallelRequestsOption, optionsCollection } from '../descriptions';
import { readMaxParallelRequests, readParameter } from '../itemLoop';
import { checkedNotificationId } from './notificationId';

const FIELD = 'Notification IDs';
const OUTPUTS = ['perUser', 'summary', 'totals'] as const;
type Output = (typeof OUTPUTS)[number];

const properties: INodeProperties[] = [
	{
		displayName: 'Notification IDs',
		name: 'notificationIds',
		type: 'string',
		required: true,
		default: '={{ $json.id }}',
		placeholder: 'e.g. 3f2b8c1e-9d4a-4e7b-8a61-2c5d9e0f7a13',
		description:
			"The sends to report on. The IDs of all input items make one report: after a Send, the default (each item's ID) covers every batch. One field may also hold several, separated by commas, or a list.",
	},
	{
		displayName: 'Output',
		name: 'output',
		type: 'options',
		default: 'summary',
		options: [
			{
				name: 'One Item per User',
				value: 'perUser',
				description:
					'One item per user (reached, opened, failed, no device), paired with the input items of their sends',
			},
			{
				name: 'Summary',
				value: 'summary',
				description: 'One item: the totals, and one row per user in "users"',
			},
			{
				name: 'Totals Only',
				value: 'totals',
				description: 'One item: the counters of all sends added up, and the users counted',
			},
		],
	},
	optionsCollection([
		{
			displayName: 'Escalation Deadlines (Minutes)',
			name: 'escalationDeadlines',
			type: 'string',
			default: '',
			placeholder: 'e.g. 15, 30, 45',
			description: `A ladder's deadlines after the send went out, increasing, separated by commas (at most ${MAX_ESCALATION_LEVELS}). Each user's row then lists the levels that would have escalated them ("escalationLevels": deadlines passed before they opened, or by the report if they never opened), and the summary counts the users of each level.`,
		},
		maxParallelRequestsOption,
		{
			displayName: 'Time to Open Bucket (Minutes)',
			name: 'bucketMinutes',
			type: 'number',
			default: DEFAULT_BUCKET_MINUTES,
			typeOptions: { minValue: 1, maxValue: 1440 },
			description:
				'The summary counts opens per bucket of this many minutes since the send went out ("timeToOpen")',
		},
	]),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['notification'], operation: ['getReport'] } },
	properties,
);

/** The IDs an item gives: text split on commas, semicolons, spaces or new lines, or a list (of IDs,
 * or of Send output items, whose `id` is taken). */
function readNotificationIds(context: IExecuteFunctions, itemIndex: number): string[] {
	const ids: string[] = [];
	const visit = (value: unknown, depth: number): void => {
		if (value === null || value === undefined) return;
		if (typeof value === 'string') {
			for (const part of value.split(/[\s,;]+/)) {
				if (part !== '') ids.push(checkedNotificationId(context, part, FIELD, itemIndex));
			}
		} else if (typeof value === 'number' && Number.isFinite(value)) {
			ids.push(String(value));
		} else if (Array.isArray(value) && depth < 3) {
			for (const entry of value) visit(entry, depth + 1);
		} else if (typeof value === 'object' && 'id' in value && depth < 3) {
			visit((value as { id: unknown }).id, depth + 1);
		} else {
			throw fieldError(
				context,
				FIELD,
				`contains a value that is not an ID: ${JSON.stringify(value)?.slice(0, 80)}`,
				itemIndex,
			);
		}
	};
	visit(readParameter(context, 'notificationIds', FIELD, itemIndex, ''), 0);
	if (ids.length === 0) throw fieldError(context, FIELD, 'is empty', itemIndex);
	return ids;
}

/** The time-to-open options: bad ones fail naming the field, before any read. */
function readReportOptions(context: IExecuteFunctions, options: IDataObject): ReportOptions {
	const bucketMinutes = Number(options.bucketMinutes ?? DEFAULT_BUCKET_MINUTES);
	if (!Number.isInteger(bucketMinutes) || bucketMinutes < 1 || bucketMinutes > 1440)
		throw fieldError(
			context,
			'Time to Open Bucket (Minutes)',
			`must be a whole number of minutes from 1 to 1440 (got ${String(options.bucketMinutes)})`,
			0,
		);
	try {
		return {
			bucketMinutes,
			escalationMinutes: parseEscalationDeadlines(options.escalationDeadlines),
		};
	} catch (error) {
		throw fieldError(context, 'Escalation Deadlines (Minutes)', (error as Error).message, 0);
	}
}

const paired = (items: Iterable<number>): IPairedItemData[] =>
	[...new Set(items)].map((item) => ({ item }));

/**
 * One delivery report for the sends named by all input items: each send is read once (up to Max
 * Parallel Requests at once) and added to the report as it arrives. Bad input fails before any
 * read; with Continue On Fail, a bad item or a send that cannot be read becomes an error item and
 * the report covers the rest.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const continueOnFail = this.continueOnFail();
	const output: INodeExecutionData[] = [];
	/** Each send, with the input items that named it. */
	const itemsOf = new Map<string, number[]>();
	for (let itemIndex = 0; itemIndex < this.getInputData().length; itemIndex++) {
		try {
			for (const id of readNotificationIds(this, itemIndex))
				itemsOf.set(id, [...(itemsOf.get(id) ?? []), itemIndex]);
		} catch (error) {
			if (!continueOnFail) throw asNodeError(this, error, itemIndex);
			output.push(errorItem(asNodeError(this, error, itemIndex), { item: itemIndex }));
		}
	}
	const mode = readParameter(this, 'output', 'Output', 0, 'summary') as Output;
	if (!OUTPUTS.includes(mode))
		throw fieldError(this, 'Output', `has an unknown value "${String(mode)}"`, 0);
	const options = readParameter(this, 'options', 'Options', 0, {}) as IDataObject;
	const parallel = readMaxParallelRequests(this, options, 0);
	const reportOptions = readReportOptions(this, options);

	const ids = [...itemsOf.keys()];
	const report = new DeliveryReport(reportOptions);
	const reads = await runPool(
		ids.length,
		parallel,
		async (index) => {
			const read = await getNotificationWithClock(this, ids[index], itemsOf.get(ids[index])![0]);
			if (!isListProbe(read.detail.notification)) report.add(read.detail, read.serverTimeMs);
		},
		!continueOnFail,
	);
	const readItems: number[] = [];
	for (const [index, result] of reads.entries()) {
		const items = itemsOf.get(ids[index])!;
		if (result === undefined) continue;
		if (result.ok) {
			readItems.push(...items);
			continue;
		}
		const error = asNodeError(this, result.error, items[0]);
		if (!continueOnFail) throw error;
		output.push(errorItem(error, paired(items), { notificationId: ids[index] }));
	}
	if (report.notificationIds.length === 0) return output;

	if (mode === 'perUser') {
		for (const row of report.userRows()) {
			output.push({
				json: row as unknown as IDataObject,
				pairedItem: paired(row.notificationIds.flatMap((id) => itemsOf.get(id)!)),
			});
		}
		return output;
	}
	const totals = report.totals() as unknown as IDataObject;
	output.push({
		json:
			mode === 'summary'
				? { ...totals, users: report.userRows() as unknown as IDataObject[] }
				: totals,
		pairedItem: paired(readItems),
	});
	return output;
}
