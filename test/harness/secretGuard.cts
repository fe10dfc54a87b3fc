/**
 * The test-wide secret guard: no secret or token in any output, error or log. Every jest test runs with distinctive secret
 * values, and nothing may show one of them: no node output, error message, error description,
 * log line, workflow static data, value handed to n8n's processed-data store, or credential field
 * other than the secret's own.
 *
 * - The sandbox marks every secret it makes when SANDBOX_SECRET_MARKER is set (sandbox/README.md):
 *   client secrets `cps_LEAKGUARD...`, refresh tokens `cpr_LEAKGUARD...`, and every access token it
 *   issues `cpa_LEAKGUARD...`. The sandbox keeps no raw token (only hashes), so the mark is how an
 *   issued token is recognized wherever it turns up, even cut short.
 * - Secrets without the mark (the fake APIs' credential and every token they hand out) are watched
 *   by value once they are made (watchSecret): the whole value, or its first 16 characters.
 * - Importing this module sets the marker and starts recording log lines: writes to
 *   process.stdout/stderr as they happen, and the lines jest's console buffered (n8n's logger
 *   writes there too) whenever findings are taken.
 * - The setup file (setup/secretGuard.ts) also scans every run of the engine harness (outputs of
 *   every node but the harness's own input nodes, every error, the workflow's static data), every
 *   poll of the trigger harness (items, error, the trigger's static data), every call to the
 *   processed-data store, and every credential write (each secret allowed in its own field only).
 *
 * Findings are kept until `takeFindings()`; the setup file fails the test that produced them.
 */
export const SECRET_MARKER = 'LEAKGUARD';
process.env.SANDBOX_SECRET_MARKER = SECRET_MARKER;

const KINDS: Record<string, string> = {
	cps: 'client secret',
	cpr: 'refresh token',
	cpa: 'access token',
};
const MARKED = new RegExp(`(cps|cpr|cpa)_${SECRET_MARKER}[0-9a-f]*`, 'g');

export interface Finding {
	/** Where it was seen: "console.log", "process.stderr", "node output of Companion Push" ... */
	where: string;
	kind: string;
	/** The start of the value only (the finding must not print a whole secret either). */
	value: string;
}

const findings: Finding[] = [];
/** How much the guard looked at (the proof test checks it does look). */
export const scanned = {
	texts: 0,
	runs: 0,
	polls: 0,
	lines: 0,
	storeCalls: 0,
	credentialWrites: 0,
};

/** Unmarked secrets, by the part of them that gives them away (see watchSecret). */
const watched = new Map<string, string>();
/** A watched value shorter than this is too likely to turn up by chance to be watched. */
const SHORTEST_WATCHED = 12;
const WATCHED_PREFIX = 16;

/** Watches a secret that carries no mark (a fake API's credential and tokens): from now on, its
 * whole value or its first 16 characters anywhere the guard looks is a finding of `kind`. */
export function watchSecret(value: unknown, kind: string): void {
	if (typeof value !== 'string' || value.length < SHORTEST_WATCHED) return;
	watched.set(value.slice(0, WATCHED_PREFIX), kind);
}

/** Every secret in `text`: marked ones by their mark, watched ones by value. */
function secretsIn(text: string): Array<{ kind: string; value: string }> {
	const found: Array<{ kind: string; value: string }> = [];
	if (text.includes(SECRET_MARKER)) {
		for (const match of text.matchAll(MARKED))
			found.push({
				kind: KINDS[match[1]],
				value: `${match[0].slice(0, 4 + SECRET_MARKER.length + 4)}...`,
			});
	}
	for (const [start, kind] of watched)
		if (text.includes(start)) found.push({ kind, value: `${start.slice(0, 8)}...` });
	return found;
}

/** Records every secret in `text`, seen at `where`. */
export function scanText(where: string, text: string): void {
	scanned.texts++;
	for (const secret of secretsIn(text)) findings.push({ where, ...secret });
}

/** Which secret each credential field may hold: its own kind, nothing else. */
const OWN_SECRET: Record<string, string> = {
	clientSecret: 'client secret',
	refreshToken: 'refresh token',
	accessToken: 'access token',
};

/** Records every secret a credential write puts where it does not belong: any secret in a field
 * that holds none (base URL, client ID, a field n8n does not know) or of another kind than the field's. */
export function scanCredentialWrite(where: string, data: Record<string, unknown>): void {
	scanned.credentialWrites++;
	for (const [field, value] of Object.entries(data)) {
		scanned.texts++;
		for (const secret of secretsIn(jsonText(value))) {
			if (secret.kind !== OWN_SECRET[field])
				findings.push({ where: `${where}, field ${field}`, ...secret });
		}
	}
}

/** The findings so far, console lines included; they are cleared (a test that leaks on purpose
 * takes its own). */
export function takeFindings(): Finding[] {
	scanConsoleBuffer();
	return findings.splice(0, findings.length);
}

export function describeFindings(list: Finding[]): string {
	return [
		`Secret guard: ${list.length} secret value(s) seen where none may appear:`,
		...list.map((finding) => `  - ${finding.kind} (${finding.value}) in ${finding.where}`),
	].join('\n');
}

/** JSON text of a value, tolerant of cycles and BigInt (an error's cause may hold anything). */
export function jsonText(value: unknown): string {
	const seen = new WeakSet<object>();
	try {
		return (
			JSON.stringify(value, (_key, inner: unknown) => {
				if (typeof inner === 'bigint') return String(inner);
				if (typeof inner === 'object' && inner !== null) {
					if (seen.has(inner)) return '[cycle]';
					seen.add(inner);
				}
				return inner;
			}) ?? ''
		);
	} catch {
		return String(value);
	}
}

/** What an error shows: message, description, context, API response, n8n's messages, for the
 * error and each of its causes. */
export function errorText(error: unknown): string {
	const parts: string[] = [];
	const seen = new Set<unknown>();
	let current = error as Record<string, unknown> | undefined;
	while (current && typeof current === 'object' && !seen.has(current)) {
		seen.add(current);
		for (const key of ['message', 'description', 'context', 'errorResponse', 'messages']) {
			const value = current[key];
			if (value !== undefined && value !== null)
				parts.push(typeof value === 'string' ? value : jsonText(value));
		}
		current = current.cause as Record<string, unknown> | undefined;
	}
	if (typeof error === 'string') parts.push(error);
	return parts.join('\n');
}

// ---- log lines ---------------------------------------------------------------------------------
// Jest's console either writes to the process streams (a single file, --verbose) or buffers the
// lines for the reporter (several files). The streams are wrapped; the buffer is read where it is,
// so console itself stays untouched (jest still shows where each line was logged from).

type Write = typeof process.stdout.write;
const originalWrites = new Map<NodeJS.WriteStream, Write>();
for (const [name, stream] of [
	['process.stdout', process.stdout],
	['process.stderr', process.stderr],
] as const) {
	const original = stream.write;
	originalWrites.set(stream, original);
	stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
		scanned.lines++;
		scanText(
			name,
			typeof chunk === 'string'
				? chunk
				: Buffer.isBuffer(chunk)
					? chunk.toString('utf8')
					: String(chunk),
		);
		return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
	} as Write;
}

let bufferedLinesRead = 0;

/** Scans the console lines jest buffered since the last call. */
export function scanConsoleBuffer(): void {
	const buffer =
		(
			console as unknown as {
				getBuffer?: () => Array<{ type: string; message: string }> | undefined;
			}
		).getBuffer?.() ?? [];
	for (const entry of buffer.slice(bufferedLinesRead)) {
		scanned.lines++;
		scanText(`console.${entry.type}`, entry.message);
	}
	bufferedLinesRead = buffer.length;
}

/** Puts the streams back (they are the worker's, shared with later test files). */
export function stopRecordingLogs(): void {
	for (const [stream, original] of originalWrites) stream.write = original;
}
