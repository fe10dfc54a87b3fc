/** The only code that talks HTTP to the Push Notification API. */
export { apiRequest, exchange, CREDENTIAL_TYPE, tokenNeedsRenewal } from './request';
export type { ApiCall, ApiResponse, CompanionPushContext } from './request';
export {
	cancelNotification,
	getNotification,
	listActiveUserIds,
	listNotifications,
	listUsers,
	listUsersPage,
	USER_PAGE_SIZE,
} from './endpoints';
export { sendNotification } from './safe-send';
export type { SendOutcome, SendRequest } from './safe-send';
export { parseErrorBody } from './errors';
export { DELIVERY_STATES, SEND_STATES } from './schemas';
export type { Delivery, ListedNotification, NotificationDetail, NotificationRecord, User } from './schemas';
