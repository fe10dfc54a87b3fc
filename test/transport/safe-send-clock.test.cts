/**
 * After a lost answer, another client's send proves the list up to date only when its creation time
 * is later than the loss on the API's clock, placed from this process's own listed send, each time
 * taken at the precision the API writes it with. An API that writes whole seconds: a send stamped in
 * the second after the loss may have been made before it (the stamp may be rounded, and so may our
 * own send's), so it proves nothing; one stamped 3 s after does. A fake API, so the stamps are exact.
 */
import { resetProcessState, useTimings } from '../../devkit/processState.cts';
import { isListProbe, sendNotification } from '../../nodes/CompanionPush/transport';
import type { SendRequest } from '../../nodes/CompanionPush/transport';
import { errorInNode, fakeStore, useFakeApis, valueInNode } from '../harness/index.cts';
import type { FakeRequest } from '../harness/index.cts';

const SECOND = 1_000;
/** A time written as this API writes it: whole seconds, cut. */
const wholeSeconds = (ms: number) =>
	new Date(Math.floor(ms / SECOND) * SECOND).toISOString().replace('.000Z', 'Z');
/** Waits until `ms` past a whole second of this clock. */
const untilPastSecond = (ms: number) =>
	new Promise((resolve) => setTimeout(resolve, SECOND + ms - (Date.now() % SECOND)));

describe("safe send: another client's send placed by a creation time in whole seconds", () => {
	const fakeApis = useFakeApis();
	beforeEach(() => {
		resetProcessState();
		useTimings({ lookupSettleMs: 200, lookupEvidenceWaitMs: 1_000 });
	});
	afterAll(() => resetProcessState());

	/** An API that registers every send, writes times in whole seconds, and answers 503 to the
	 * first send titled "Ours" without registering it; another client then sends, stamped
	 * `otherStampedAfterMs` after the whole second of the loss. It refuses sends to nobody (422), so
	 * no list probe proves anything here: only the other client's send can. */
	async function startApi(otherStampedAfterMs: number) {
		const sends: Array<Record<string, unknown>> = [];
		let lost = false;
		const api = await fakeApis.start((request: FakeRequest) => {
			if (request.method === 'POST' && request.path === '/push-notification/send') {
				const body = JSON.parse(request.body) as SendRequest;
				if (isListProbe(body))
					return { status: 422, body: { ok: false, error: { message: 'no user' } } };
				if (body.title === 'Ours' && !lost) {
					lost = true;
					const otherAt = Math.floor(Date.now() / SECOND) * SECOND + otherStampedAfterMs;
					sends.unshift({
						id: 'other',
						title: 'Another client',
						body: 'B',
						status: 'sending',
						target_user_ids: ['u9'],
						created_at: wholeSeconds(otherAt),
					});
					return { status: 503, body: { ok: false, error: { message: 'busy' } } };
				}
				const id = `s${sends.length}`;
				sends.unshift({ id, ...body, status: 'sending', created_at: wholeSeconds(Date.now()) });
				return { status: 202, body: { ok: true, data: { id, status: 'sending' } } };
			}
			if (request.method === 'GET' && request.path === '/push-notification/list')
				return { body: { ok: true, data: Number(request.query.skip ?? 0) > 0 ? [] : sends } };
			return { status: 404, body: { ok: false } };
		});
		const store = fakeStore(api);
		const posts = () =>
			api.requests.filter(
				(request) =>
					request.path === '/push-notification/send' && !isListProbe(JSON.parse(request.body)),
			).length;
		// A send of this process, made at the start of a second: listed, it places the API's clock.
		await untilPastSecond(20);
		await valueInNode(store, (context) =>
			sendNotification(context, { title: 'Earlier', body: 'B', target_user_ids: ['u1'] }),
		);
		// Ours goes out 100 ms into a second, so the other send's stamp is later than the loss.
		await untilPastSecond(100);
		const ours: SendRequest = { title: 'Ours', body: 'B', target_user_ids: ['u2'] };
		return { store, posts, ours };
	}

	test('stamped the next whole second: it may have been made before the loss, so "unknown", not sent again', async () => {
		const { store, posts, ours } = await startApi(SECOND);
		const error = await errorInNode(store, (context) => sendNotification(context, ours));

		expect(error.message).toBe(
			'Sending the notification: the outcome is unknown (HTTP 503), so it was not sent again',
		);
		expect(error.description).toContain('nothing shows the list is up to date');
		expect(posts()).toBe(2);
	});

	test('stamped 3 s after the loss: made after it, so the list is up to date, the send absent and made once', async () => {
		const { store, posts, ours } = await startApi(3 * SECOND);
		const outcome = await valueInNode(store, (context) => sendNotification(context, ours));

		expect(outcome.id).toBe('s2');
		expect(posts()).toBe(3);
	});
});
