/** The only code that talks HTTP to the Push Notification API. */
export { apiRequest } from './read';
export { exchange, CREDENTIAL_TYPE, tokenNeedsRenewal } from './request';
export type { Answer, ApiCall, CompanionPushContext } from './request';
export {
	cancelNotification,
	getNotification,
	listActiveUserIds,
	listNotifications,
	listUsers,
	listUsersPage,
	USER_PAGE_SIZE,
} from './endpoints';
export { failedSendOutcome, sendNotification } from './safeSend';
export type { FailedSendOutcome, SendOptions, SendOutcome, SendRequest } from './safeSend';
export { parseErrorBody } from './errors';
export { DELIVERY_STATES, SEND_STATES } from './schemas';
export type { Delivery, ListedNotification, NotificationDetail, NotificationRecord, User } from './schemas';
