/* The answer's body, read here as it arrives rather than by n8n's helper: n8n's `timeout` is the
 * socket's idle time, which a body sent one byte at a time never reaches, and n8n reads any length
 * whole. */

/** The body stream n8n hands back with `encoding: 'stream'` (axios's response stream). */
export interface BodyStream {
	on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
	on(event: 'end', listener: () => void): unknown;
	on(event: 'error', listener: (error: unknown) => void): unknown;
	destroy(): unknown;
}

type BodyRead =
	| { kind: 'whole'; body: unknown }
	| { kind: 'deadline' | 'canceled' | 'tooLarge' }
	| { kind: 'failed'; error: unknown };

/**
 * Reads the body as it arrives, and stops reading (closing the connection) as soon as the deadline
 * passes or more than `maxBytes` came: a body sent one byte at a time, or without end, is never read
 * whole, nor kept.
 */
export async function readBody(
	stream: unknown,
	deadline: AbortSignal,
	signal: AbortSignal,
	maxBytes: number,
): Promise<BodyRead> {
	// Not a stream (a body n8n itself made up): as it is.
	if (typeof (stream as BodyStream | undefined)?.on !== 'function')
		return { kind: 'whole', body: stream };
	const body = stream as BodyStream;
	return await new Promise<BodyRead>((resolve) => {
		const chunks: Uint8Array[] = [];
		let bytes = 0;
		let done = false;
		const finish = (read: BodyRead) => {
			if (done) return;
			done = true;
			signal.removeEventListener('abort', onAbort);
			if (read.kind !== 'whole') body.destroy();
			resolve(read);
		};
		const onAbort = () => finish({ kind: deadline.aborted ? 'deadline' : 'canceled' });
		if (signal.aborted) return onAbort();
		signal.addEventListener('abort', onAbort, { once: true });
		body.on('data', (chunk) => {
			if (done) return;
			const part = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
			bytes += part.byteLength;
			if (bytes > maxBytes) return finish({ kind: 'tooLarge' });
			chunks.push(part);
		});
		body.on('end', () => finish({ kind: 'whole', body: parsedBody(utf8Text(chunks, bytes)) }));
		body.on('error', (error) =>
			finish(
				deadline.aborted
					? { kind: 'deadline' }
					: signal.aborted
						? { kind: 'canceled' }
						: { kind: 'failed', error },
			),
		);
	});
}

/** The chunks of a body as one text (UTF-8, a byte order mark dropped, as n8n's helper reads it). */
function utf8Text(chunks: Uint8Array[], bytes: number): string {
	if (chunks.length === 1) return new TextDecoder().decode(chunks[0]);
	const whole = new Uint8Array(bytes);
	let at = 0;
	for (const chunk of chunks) {
		whole.set(chunk, at);
		at += chunk.byteLength;
	}
	return new TextDecoder().decode(whole);
}

/** The body as n8n's helper gives it without `encoding`: JSON parsed when it parses, else the text. */
function parsedBody(text: string): unknown {
	if (text === '') return text;
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return text;
	}
}

/** The body as JSON: the helper hands back text when the API's JSON is malformed. */
export function readJson(body: unknown): { ok: true; value: unknown } | { ok: false } {
	if (typeof body !== 'string') return { ok: true, value: body };
	try {
		return { ok: true, value: JSON.parse(body) };
	} catch {
		return { ok: false };
	}
}
