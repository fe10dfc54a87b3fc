/**
 * The node's door to the Push Notification API: every call of the action node and the trigger
 * goes through here. (The only other HTTP call is the credential's own token renewal, in
 * credentials/CompanionPushApi.credentials.ts, which n8n runs when this door asks for a token.)
 * A call goes down: endpoints.ts (the reads and cancel) or safeSend/ (a send, kept from going out
 * twice or being lost unreported) -> retry.ts (its tries, paced per credential) -> tokenRenewal.ts
 * (a usable token) -> http.ts (one request) -> answers.ts (what came back).
 */
export { readCredentialsAnew } from './tokenRenewal';
export { clearWorkDeadline, setWorkDeadline } from './http';
export {
	cancelNotification,
	getNotification,
	getNotificationWithClock,
	listActiveUserIds,
	listNotifications,
	listUsers,
	listUsersPage,
	USER_PAGE_SIZE,
} from './endpoints';
export { sendNotification } from './safeSend/send';
export { failedSendOutcome, tagged, taggedSendOutcome } from './safeSend/outcomes';
export { isListProbe } from './safeSend/probe';
export type { EarlierAttempt, SendOptions, SendOutcome } from './safeSend/send';
export { parseErrorBody } from './errors';
export type {
	ListedNotification,
	NotificationDetail,
	NotificationRecord,
	SendRequest,
	User,
} from './schemas';
