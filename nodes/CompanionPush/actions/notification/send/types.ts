import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	IPairedItemData,
} from 'n8n-workflow';

import type { DeliveryTime, QuietHours, TimeOfDay } from '../../../input/deliveryTime';
import type { CheckedMessage } from '../../../input/message';
import type { IdempotencyKey } from '../../../neverTwice';
import type { SendRequest } from '../../../transport';
import type { CapRule } from './capSlots';

/* The shapes the stages of the send path hand each other (see run.ts for the stages). */

export type Audience = 'userIds' | 'user' | 'allUsers' | 'activeUsers';

/** One input item, checked: everything needed to send it, read before anything is sent. */
export interface CheckedItem {
	itemIndex: number;
	message: CheckedMessage;
	audience: Audience;
	/** The recipients given on the item (for the userIds and user audiences). */
	userIds: string[];
	/** Absent for Send, and for a past time sent at once with "Send If Time Is Past". */
	scheduledAtWithOffset?: string;
	sentImmediately?: boolean;
	batchSize: number;
	waitTimeoutSeconds?: number;
	/** The option "Idempotency Key", when set. */
	idempotency?: IdempotencyKey;
	maxParallelRequests: number;
	/** Set when "Deliver at Local Time" or "Quiet Hours" applies (see localDelivery.ts). */
	delivery?: DeliveryPolicy;
	/** "Cap per Person" (Send only), the same on every item (see capPerPerson.ts). */
	cap?: CapRule;
	/** "Digest Key" and its settings (Send only, see ../digest/). */
	digest?: DigestRule;
}

/** The options "Digest Key", "Digest Window (Minutes)" and "Digest Title" of an item, checked. */
export interface DigestRule {
	digestKey: string;
	windowMinutes: number;
	/** The title of a push that carries more than one event; `{count}` stands for their number. */
	title: string;
}

/** An item's delivery options, checked. */
export interface DeliveryPolicy {
	/** "Deliver at Local Time". */
	localTime?: TimeOfDay;
	/** "Quiet Hours", absent when the item is "Critical". */
	quietHours?: QuietHours;
	/** "Recipient Time Zone" of the item's people; absent: the workflow's. */
	recipientTimeZone?: string;
	/** "Recipient Time Zone" is set but empty for this item: its people get the workflow's zone and
	 * are listed on the output. */
	timeZoneMissing: boolean;
}

/** Schedule's reading of "Scheduled At" for an item (see schedule.operation.ts). */
export type ScheduleReader = (
	context: IExecuteFunctions,
	itemIndex: number,
	options: IDataObject,
) => Pick<CheckedItem, 'scheduledAtWithOffset' | 'sentImmediately'>;

/** What the input of a Send or Schedule run asks for, checked. */
export interface SendInput {
	/** "One Send for All Items": the items' recipients go out together, with the first item's message. */
	combined: boolean;
	checkedItems: CheckedItem[];
	/** The error item of each item that failed its check (when the node continues on fail). */
	rejected: Map<number, INodeExecutionData>;
}

/** What one send goes out with: the lead item's message, the recipients, the items it stands for. */
export interface SendGroup {
	lead: CheckedItem;
	/** The items it sends for: the lead alone, or every item in "One Send for All Items" mode. */
	items: CheckedItem[];
	userIds: string[];
	pairedItems: IPairedItemData[];
	/** The content ids of its batches, in order, once planned: the event an Idempotency Key names. */
	layout: string[];
}

/** One send to make: a batch of a group. */
export interface SendTask {
	group: SendGroup;
	batch: string[];
	/** The batch's identity by its recipients (see batchContentId). */
	batchId: string;
	batchIndex: number;
	batchCount: number;
	/** The request this try sends (an earlier try's recorded attempt goes instead: neverTwice/). */
	request: SendRequest;
	/** When this batch reaches its people, with a delivery policy (localDelivery.ts). */
	delivery?: BatchDelivery;
}

/** When a batch reaches its zone, and who in it had no time zone of their own. */
export interface BatchDelivery extends DeliveryTime {
	usersWithoutTimeZone: string[];
}
