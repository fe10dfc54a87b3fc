/** The sandbox's endpoint keys, as its request log and counts() name them. */
export const REFRESH = 'POST /auth/oauth/v2/refresh';
export const USER_LIST = 'GET /user/list';
export const ACTIVE_USERS = 'GET /user-device/users';
export const SEND = 'POST /push-notification/send';
export const SEND_LIST = 'GET /push-notification/list';
export const DETAIL = 'GET /push-notification/:id';
export const CANCEL = 'POST /push-notification/:id/cancel';
