/**
 * A network link with a round-trip time in front of a sandbox: a TCP relay on 127.0.0.1 that holds
 * every chunk half the round trip each way, and a connection's first chunk one round trip more (the
 * TCP handshake a client waits for before sending). So, as over a real network, a request on a new
 * connection holds its caller about 2 round trips over http (connect, request), 3 over https
 * (connect, TLS 1.3 handshake, request), and 1 on a kept-alive connection: what a client that opens
 * a connection per request, as n8n's HTTP helper does, pays. TLS goes through untouched. The relay
 * keeps when each connection opened and closed: how many a client opened, and how many were open at
 * once (for a client with a connection per request: its requests in flight).
 */
import * as fs from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

import { startSandbox } from '../sandbox/index.cts';
import type { SandboxOptions } from '../sandbox/index.cts';
import { tokenOf } from './measure.cts';

export interface DelayedLink {
	/** The sandbox's base URL through the link (same scheme, the link's port). */
	baseUrl: string;
	port: number;
	roundTripMs: number;
	setRoundTripMs(ms: number): void;
	/** Connections accepted within [from, to] (Date.now() times), and the most open at once then. */
	connectionsWithin(from?: number, to?: number): { accepted: number; peakOpen: number };
	close(): Promise<void>;
}

/** Relays `from` to `to`, each chunk `delayMs()` later (the first one `firstExtraMs` more), in order;
 * `onEnded` when the end has been relayed. One queue and one timer per direction: separate timers
 * for each chunk could fire out of order (a timer counts from the event loop's cached time). */
function relay(
	from: Socket,
	to: Socket,
	delayMs: () => number,
	firstExtraMs: () => number,
	onEnded: () => void = () => undefined,
): void {
	const queue: Array<{ due: number; action: () => void }> = [];
	let timer: NodeJS.Timeout | undefined;
	let first = true;
	const drain = () => {
		timer = undefined;
		while (queue.length > 0 && queue[0].due <= Date.now()) queue.shift()!.action();
		if (queue.length > 0) timer = setTimeout(drain, queue[0].due - Date.now());
	};
	const later = (extraMs: number, action: () => void) => {
		const due = Math.max(Date.now() + delayMs() + extraMs, queue.at(-1)?.due ?? 0);
		queue.push({ due, action });
		if (!timer) drain();
	};
	from.on('data', (chunk: Buffer) => {
		const extra = first ? firstExtraMs() : 0;
		first = false;
		later(extra, () => {
			if (!to.destroyed) to.write(chunk);
		});
	});
	from.on('end', () =>
		later(0, () => {
			to.end();
			onEnded();
		}),
	);
}

/** Starts a link on 127.0.0.1 to `targetBaseUrl` (an http:// or https:// sandbox on 127.0.0.1). */
export async function startDelayedLink(
	targetBaseUrl: string,
	roundTripMs = 0,
): Promise<DelayedLink> {
	const target = new URL(targetBaseUrl);
	let rtt = roundTripMs;
	const lifetimes: Array<{ openedAt: number; closedAt: number }> = [];
	const open = new Set<Socket>();
	// Half-open allowed: an end is relayed (late, after the data before it), not applied at once.
	const server = createServer({ allowHalfOpen: true }, (client) => {
		// Over once the client has the server's last byte and its end (or the client went first).
		const lifetime = { openedAt: Date.now(), closedAt: Infinity };
		lifetimes.push(lifetime);
		const over = () => (lifetime.closedAt = Math.min(lifetime.closedAt, Date.now()));
		client.on('close', over);
		const upstream = connect({
			host: target.hostname,
			port: Number(target.port),
			allowHalfOpen: true,
		});
		for (const socket of [client, upstream]) {
			socket.setNoDelay(true);
			open.add(socket);
			socket.on('close', () => open.delete(socket));
		}
		// A reset on one side resets the other.
		client.on('error', () => upstream.destroy());
		upstream.on('error', () => client.destroy());
		relay(
			client,
			upstream,
			() => rtt / 2,
			() => rtt,
		);
		relay(
			upstream,
			client,
			() => rtt / 2,
			() => 0,
			over,
		);
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => resolve());
	});
	const port = (server.address() as AddressInfo).port;
	return {
		baseUrl: `${target.protocol}//127.0.0.1:${port}`,
		port,
		get roundTripMs() {
			return rtt;
		},
		setRoundTripMs: (ms) => {
			rtt = ms;
		},
		connectionsWithin: (from = -Infinity, to = Infinity) => {
			const accepted = lifetimes.filter(
				({ openedAt }) => openedAt >= from && openedAt <= to,
			).length;
			// +1 at each opening, -1 at each closing, in time order (closings first at the same ms).
			const steps = lifetimes
				.filter(({ openedAt, closedAt }) => openedAt <= to && closedAt >= from)
				.flatMap(({ openedAt, closedAt }) => [
					{ at: Math.max(openedAt, from), step: 1 },
					{ at: closedAt, step: -1 },
				])
				.sort((a, b) => a.at - b.at || a.step - b.step);
			let current = 0;
			let peakOpen = 0;
			for (const { step } of steps) peakOpen = Math.max(peakOpen, (current += step));
			return { accepted, peakOpen };
		},
		close: async () => {
			for (const socket of open) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

/**
 * An https sandbox in this process (real clock) behind a link of `roundTripMs`: its certificate
 * authority written into `folder` for n8n to trust (NODE_EXTRA_CA_CERTS: nothing insecure switched
 * on), and an access token of its primary organization (for the HTTP Request node's header).
 */
export async function startHttpsSite(folder: string, options: SandboxOptions, roundTripMs = 0) {
	const sandbox = await startSandbox({ port: 0, clock: 'real', ...options, tls: true });
	const link = await startDelayedLink(sandbox.baseUrl, roundTripMs);
	const caFile = path.join(folder, 'sandbox-ca.pem');
	fs.writeFileSync(caFile, sandbox.caCertificate!);
	const stop = async () => {
		await link.close();
		await sandbox.stop();
	};
	return { sandbox, link, caFile, token: await tokenOf(sandbox), stop };
}
