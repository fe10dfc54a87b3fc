/**
 * The node's door to the Push Notification API: every call of the action node and the trigger
 * goes through here. (The only other HTTP call is the credential's own token renewal, in
 * credentials/CompanionPushApi.credentials.ts, which n8n runs when this door asks for a token.)
 */
export { repeatableRequest } from './repeatableRequest';
export { readCredentialsAnew } from './tokenRenewal';
export type { Answer, ApiCall, CompanionPushContext } from './http';
export {
	cancelNotification,
	getNotification,
	listActiveUserIds,
	listNotifications,
	listUsers,
	listUsersPage,
	USER_PAGE_SIZE,
} from './endpoints';
export { failedSendOutcome, sendNotification } from './safeSend/send';
export type { FailedSendOutcome, SendOptions, SendOutcome } from './safeSend/send';
export { parseErrorBody } from './errors';
export type { Delivery, ListedNotification, NotificationDetail, NotificationRecord, SendRequest, User } from './schemas';
