/**
 * The one measuring module of every suite: what a run cost (wall and CPU time, the sandbox's calls,
 * the TCP connections it accepted, the requests it had in flight, memory), the CPU time of another
 * process (a real n8n), raw undici (the fastest honest client: the baseline), the sides of a case
 * run in turn, medians and spreads.
 */
import { execFileSync } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { Pool } from 'undici';

import type { Sandbox, SandboxSettings } from '../sandbox/index.cts';

/** The message every side of every case sends; each real-n8n chain gives it a title of its own. */
export const TITLE = 'Benchmark';
export const BODY = 'A notification sent by npm run bench';
export const sendBody = (userIds: string[], title = TITLE) =>
	JSON.stringify({ title, body: BODY, target_user_ids: userIds });

// ---- what the sandbox saw -------------------------------------------------------------------------

/** API calls the sandbox saw, per endpoint (admin calls are never counted). */
export type Counts = Record<string, number>;

export const totalCalls = (counts: Counts) =>
	Object.values(counts).reduce((sum, value) => sum + value, 0);

/** Calls made between two counts() snapshots. */
export function countsSince(before: Counts, after: Counts): Counts {
	const diff: Counts = {};
	for (const [endpoint, value] of Object.entries(after))
		if (value !== (before[endpoint] ?? 0)) diff[endpoint] = value - (before[endpoint] ?? 0);
	return diff;
}

// TCP connections accepted by servers of this process: the in-process sandboxes are the only ones.
let acceptedConnections = 0;
subscribe('net.server.socket', () => acceptedConnections++);

// The sandboxes' HTTP requests between arrival and the end of their answer (an answer held by the
// sandbox's latency included): +1 at a request's start, -1 when its answer is finished.
let inFlightNow = 0;
let inFlightPeak = 0;
const inFlightStep = (step: number) => {
	inFlightNow += step;
	inFlightPeak = Math.max(inFlightPeak, inFlightNow);
};
subscribe('http.server.request.start', () => inFlightStep(1));
subscribe('http.server.response.finish', () => inFlightStep(-1));

/** Starts counting the peak of requests in flight anew (what is in flight now stays counted). */
export function clearInFlight(): void {
	inFlightPeak = inFlightNow;
}
export const peakInFlight = () => inFlightPeak;

export interface Timed {
	/** Wall time. */
	ms: number;
	/** Process CPU time (user + system) meanwhile, the in-process sandbox's included, alike for every side. */
	cpuMs: number;
	connections: number;
	peakInFlight: number;
	counts: Counts;
}

export interface MeasureOptions {
	/** The sandbox's settings for the run (applied after its reset: reset() drops what configure() set). */
	settings?: Partial<SandboxSettings>;
	/** Sample the memory while `body` runs (see withMemoryPeak). */
	sampleMemory?: boolean;
}

/** Runs `body` on a freshly reset sandbox and hands back its result with what it cost. */
export async function measured<T>(
	sandbox: Sandbox,
	body: () => Promise<T>,
	{ settings, sampleMemory = false }: MeasureOptions = {},
): Promise<Timed & { value: T; memory?: MemoryPeak }> {
	await sandbox.reset();
	if (settings) sandbox.configure(settings);
	collectGarbage();
	clearInFlight();
	const connections = acceptedConnections;
	const cpu = process.cpuUsage();
	const started = performance.now();
	const { value, memory } = sampleMemory
		? await withMemoryPeak(body)
		: { value: await body(), memory: undefined };
	const ms = performance.now() - started;
	const used = process.cpuUsage(cpu);
	return {
		value,
		memory,
		ms,
		cpuMs: (used.user + used.system) / 1000,
		connections: acceptedConnections - connections,
		peakInFlight: inFlightPeak,
		counts: sandbox.counts(),
	};
}

// ---- memory ---------------------------------------------------------------------------------------

let gc: (() => void) | undefined;
/** A full garbage collection, when V8 lets us have one (so memory baselines are not leftovers). */
export function collectGarbage(): void {
	if (!gc) {
		setFlagsFromString('--expose-gc');
		gc = (globalThis as { gc?: () => void }).gc ?? (runInNewContext('gc') as () => void);
	}
	gc();
}

export interface MemoryPeak {
	/** Peaks of heapUsed and of the resident set size above the baseline taken before the run, in bytes. */
	heapDelta: number;
	rssDelta: number;
	/** heapUsed above the baseline right after the run, after a forced GC, its result still
	 * referenced: what stays live (the peak also counts garbage not collected yet). */
	retainedHeapDelta: number;
	samples: number;
}

/** Samples heapUsed and RSS every `everyMs` while `body` runs (it must yield: HTTP I/O does). */
export async function withMemoryPeak<T>(
	body: () => Promise<T>,
	everyMs = 5,
): Promise<{ value: T; memory: MemoryPeak }> {
	collectGarbage();
	const base = process.memoryUsage();
	const peak = { heap: base.heapUsed, rss: base.rss, samples: 0 };
	const sample = () => {
		const now = process.memoryUsage();
		peak.heap = Math.max(peak.heap, now.heapUsed);
		peak.rss = Math.max(peak.rss, now.rss);
		peak.samples++;
	};
	const timer = setInterval(sample, everyMs);
	try {
		const value = await body();
		sample();
		clearInterval(timer);
		collectGarbage();
		const retainedHeapDelta = process.memoryUsage().heapUsed - base.heapUsed;
		return {
			value,
			memory: {
				heapDelta: peak.heap - base.heapUsed,
				rssDelta: peak.rss - base.rss,
				retainedHeapDelta,
				samples: peak.samples,
			},
		};
	} finally {
		clearInterval(timer);
	}
}

/** Heap still held by what `make` returns, after a full collection (the value is kept alive meanwhile). */
export function heapHeldBy(make: () => unknown): number {
	// Two collections each time: garbage behind Node's weak handles may take two to be freed, and
	// garbage freed between the readings made the figure negative once (a smoke test on a busy machine).
	collectGarbage();
	collectGarbage();
	const base = process.memoryUsage().heapUsed;
	const value = make();
	collectGarbage();
	collectGarbage();
	const held = process.memoryUsage().heapUsed - base;
	return value === undefined ? 0 : held;
}

// ---- CPU time of another process (Linux: /proc) -------------------------------------------------

let ticksPerSecond: number | undefined;

/** User + system CPU time of a process so far (ms), or undefined once it is gone (the kernel's tick resolution). */
export function processCpuMs(pid: number): number | undefined {
	try {
		ticksPerSecond ??=
			Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		// After "pid (command) ": utime and stime are fields 14 and 15.
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
	} catch {
		return undefined;
	}
}

/** CPU time of a process and of this one (the in-process sandboxes and links), sampled with Date.now()
 * times, so a node run's CPU can be read afterwards for its window of n8n's run data. */
export class CpuTimeline {
	private readonly samples: Array<{ at: number; otherMs: number; ownMs: number }> = [];
	private timer?: NodeJS.Timeout;

	/** Samples `pid` (and this process) every `everyMs` until stop() or until the process is gone. */
	watch(pid: number, everyMs = 20): void {
		this.stop();
		const sample = () => {
			const otherMs = processCpuMs(pid);
			if (otherMs === undefined) return this.stop();
			const own = process.cpuUsage();
			this.samples.push({ at: Date.now(), otherMs, ownMs: (own.user + own.system) / 1000 });
		};
		sample();
		this.timer = setInterval(sample, everyMs);
	}

	stop(): void {
		clearInterval(this.timer);
		this.timer = undefined;
	}

	/** CPU ms used within [from, to], interpolated between samples; NaN when the samples do not cover it. */
	within(from: number, to: number): { otherMs: number; ownMs: number } {
		const at = (time: number, key: 'otherMs' | 'ownMs'): number => {
			const after = this.samples.findIndex((sample) => sample.at >= time);
			if (after <= 0)
				return after === 0 && this.samples[0].at === time ? this.samples[0][key] : NaN;
			const [a, b] = [this.samples[after - 1], this.samples[after]];
			return a[key] + ((b[key] - a[key]) * (time - a.at)) / Math.max(1, b.at - a.at);
		};
		return {
			otherMs: at(to, 'otherMs') - at(from, 'otherMs'),
			ownMs: at(to, 'ownMs') - at(from, 'ownMs'),
		};
	}
}

// ---- raw undici -------------------------------------------------------------------------------------

export type RawClient = ReturnType<typeof rawClient>;

/**
 * A bare undici client with `connections` keep-alive connections (or a new connection for every
 * request, as n8n's HTTP helper does), the sandbox's credential, nothing else: no retries, no checks.
 * `baseUrl`: e.g. a delayed link in front of the sandbox.
 */
export function rawClient(
	sandbox: Sandbox,
	connections = 1,
	{ baseUrl = sandbox.baseUrl, newConnectionEach = false } = {},
) {
	const ca = sandbox.caCertificate;
	const pool = new Pool(baseUrl, { connections, ...(ca ? { connect: { ca } } : {}) });
	const request = async (
		method: 'GET' | 'POST',
		path: string,
		bearer?: string,
		body?: string,
	): Promise<unknown> => {
		const headers = {
			'content-type': 'application/json',
			...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
		};
		const response = await pool.request({ method, path, body, reset: newConnectionEach, headers });
		const json = await response.body.json();
		if (response.statusCode >= 300)
			throw new Error(`${method} ${path} answered ${response.statusCode}`);
		return json;
	};
	return {
		async token(): Promise<string> {
			const { clientId, clientSecret, refreshToken } = sandbox.orgs.primary;
			const body = JSON.stringify({
				client_id: clientId,
				client_secret: clientSecret,
				refresh_token: refreshToken,
			});
			return (
				(await request('POST', '/auth/oauth/v2/refresh', undefined, body)) as {
					access_token: string;
				}
			).access_token;
		},
		get: (path: string, bearer: string) => request('GET', path, bearer),
		/** POSTs every body to the send endpoint, at most `parallel` at once. */
		async sendAll(bearer: string, bodies: string[], parallel = 1): Promise<void> {
			let next = 0;
			const worker = async () => {
				while (next < bodies.length)
					await request('POST', '/push-notification/send', bearer, bodies[next++]);
			};
			await Promise.all(
				Array.from({ length: Math.max(1, Math.min(parallel, bodies.length)) }, worker),
			);
		},
		close: () => pool.close(),
	};
}

/** `body` measured as every side is, with a raw client of its own (`connections` keep-alive connections), closed afterwards. */
export async function measuredRaw<T>(
	sandbox: Sandbox,
	body: (client: RawClient) => Promise<T>,
	connections = 1,
	options?: MeasureOptions,
): Promise<Timed & { value: T; memory?: MemoryPeak }> {
	const client = rawClient(sandbox, connections);
	try {
		return await measured(sandbox, () => body(client), options);
	} finally {
		await client.close();
	}
}

/** Raw undici sending `batches` (one POST each, a token first), at most `parallel` at once on as many connections. */
export async function rawSends(
	sandbox: Sandbox,
	batches: string[][],
	parallel: number,
	settings?: Partial<SandboxSettings>,
): Promise<Timed> {
	const width = Math.max(1, Math.min(parallel, batches.length));
	const {
		value: _value,
		memory: _memory,
		...timed
	} = await measuredRaw(
		sandbox,
		async (client) =>
			client.sendAll(
				await client.token(),
				batches.map((batch) => sendBody(batch)),
				width,
			),
		width,
		{ settings },
	);
	return timed;
}

/** Splits `values` into batches of at most `size`. */
export const batchesOf = <T,>(values: T[], size: number): T[][] =>
	Array.from({ length: Math.ceil(values.length / size) }, (_, index) =>
		values.slice(index * size, (index + 1) * size),
	);

/** Runs `sides` in an order rotated by `rep`, each once, and gives their results by name. */
export async function interleaved<S extends Record<string, () => Promise<unknown>>>(
	rep: number,
	sides: S,
): Promise<{ [K in keyof S]: Awaited<ReturnType<S[K]>> }> {
	const names = Object.keys(sides);
	const results: Record<string, unknown> = {};
	for (let index = 0; index < names.length; index++) {
		const name = names[(index + rep) % names.length];
		results[name] = await sides[name]();
	}
	return results as { [K in keyof S]: Awaited<ReturnType<S[K]>> };
}

// ---- medians and spreads --------------------------------------------------------------------------

export function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The median of what `pick` reads off each run. */
export const med = <T,>(runs: T[], pick: (run: T) => number) => median(runs.map(pick));

/** "median (min–max)" of a set of figures, with a formatter. */
export function spread(values: number[], format: (value: number) => string): string {
	if (values.length === 1) return format(values[0]);
	return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

export const ms = (value: number) => `${value.toFixed(0)} ms`;
export const ratio = (value: number) => `${value.toFixed(2)}x`;
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
/** Milliseconds per request, two decimals. */
export const perMs = (value: number) => `${value.toFixed(2)} ms`;
