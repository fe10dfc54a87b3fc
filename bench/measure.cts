/**
 * The one measuring module of every suite: what a run in this process cost (wall time, the
 * sandbox's calls, the requests it had in flight, memory), the sends the sandbox logged under a
 * title, the CPU time of another process (a real n8n), a bare undici client for setup, medians and
 * spreads.
 */
import { execFileSync } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { Pool } from 'undici';

import type { LoggedRequest, Sandbox, SandboxSettings } from '../sandbox/index.cts';
import { SEND } from '../devkit/endpoints.cts';

/** The message every side of every case sends; each real-n8n chain gives it a title of its own. */
export const TITLE = 'Benchmark';
export const BODY = 'A notification sent by npm run bench';
export const sendBody = (userIds: string[], title = TITLE) =>
	JSON.stringify({ title, body: BODY, target_user_ids: userIds });

/** The Companion Push node's Send, one send per item to the recipients of the expression `userIds`. */
export const sendParameters = (
	userIds: string,
	options: Record<string, unknown> = {},
	title = TITLE,
) => ({
	resource: 'notification',
	operation: 'send',
	title,
	body: BODY,
	audience: 'userIds',
	userIds,
	sendMode: 'perItem',
	options,
});

/** Runs `job` for 0 .. count - 1, at most `atOnce` at a time, in order of start. */
export async function runEach(
	count: number,
	atOnce: number,
	job: (index: number) => Promise<unknown>,
): Promise<void> {
	let next = 0;
	const worker = async () => {
		while (next < count) await job(next++);
	};
	await Promise.all(Array.from({ length: Math.max(1, Math.min(atOnce, count)) }, worker));
}

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

/** The sends the sandbox logged with this title (each side and chain gives its sends a title of its own). */
export const sendsTitled = (log: LoggedRequest[], title: string) =>
	log.filter(
		(entry) =>
			entry.endpoint === SEND && (entry.body as { title?: unknown } | undefined)?.title === title,
	);

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

export interface Timed {
	/** Wall time. */
	ms: number;
	peakInFlight: number;
	counts: Counts;
}

/** Runs `body` on a freshly reset sandbox and hands back its result with what it cost; `settings`
 * apply after the reset (reset() drops what configure() set); `sampleMemory`: see withMemoryPeak. */
export async function measured<T>(
	sandbox: Sandbox,
	body: () => Promise<T>,
	{
		settings,
		sampleMemory = false,
	}: { settings?: Partial<SandboxSettings>; sampleMemory?: boolean } = {},
): Promise<Timed & { value: T; memory?: MemoryPeak }> {
	await sandbox.reset();
	if (settings) sandbox.configure(settings);
	collectGarbage();
	inFlightPeak = inFlightNow; // the peak counted anew (what is in flight now stays counted)
	const started = performance.now();
	const { value, memory } = sampleMemory
		? await withMemoryPeak(body)
		: { value: await body(), memory: undefined };
	return {
		value,
		memory,
		ms: performance.now() - started,
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

/** CPU time of a process sampled with Date.now() times, so a node run's CPU can be read afterwards
 * for its window of n8n's run data. */
export class CpuTimeline {
	private readonly samples: Array<{ at: number; cpuMs: number }> = [];
	private timer?: NodeJS.Timeout;

	/** Samples `pid` every `everyMs` until stop() or until the process is gone. */
	watch(pid: number, everyMs = 20): void {
		this.stop();
		const sample = () => {
			const cpuMs = processCpuMs(pid);
			if (cpuMs === undefined) return this.stop();
			this.samples.push({ at: Date.now(), cpuMs });
		};
		sample();
		this.timer = setInterval(sample, everyMs);
	}

	stop(): void {
		clearInterval(this.timer);
		this.timer = undefined;
	}

	/** CPU ms used within [from, to], interpolated between samples; NaN when the samples do not cover it. */
	within(from: number, to: number): number {
		const at = (time: number): number => {
			const after = this.samples.findIndex((sample) => sample.at >= time);
			if (after <= 0)
				return after === 0 && this.samples[0].at === time ? this.samples[0].cpuMs : NaN;
			const [a, b] = [this.samples[after - 1], this.samples[after]];
			return a.cpuMs + ((b.cpuMs - a.cpuMs) * (time - a.at)) / Math.max(1, b.at - a.at);
		};
		return at(to) - at(from);
	}
}

// ---- raw undici -------------------------------------------------------------------------------------

/** A bare undici client with `connections` keep-alive connections and the sandbox's credential,
 * nothing else (no retries, no checks): it makes the sends a case starts from, and tokens. */
export function rawClient(sandbox: Sandbox, connections = 1) {
	const ca = sandbox.caCertificate;
	const pool = new Pool(sandbox.baseUrl, { connections, ...(ca ? { connect: { ca } } : {}) });
	const post = async (path: string, body: string, bearer?: string): Promise<unknown> => {
		const headers = {
			'content-type': 'application/json',
			...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
		};
		const response = await pool.request({ method: 'POST', path, body, headers });
		const json = await response.body.json();
		if (response.statusCode >= 300) throw new Error(`POST ${path} answered ${response.statusCode}`);
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
			const answer = (await post('/auth/oauth/v2/refresh', body)) as { access_token: string };
			return answer.access_token;
		},
		/** POSTs every body to the send endpoint, at most `parallel` at once. */
		async sendAll(bearer: string, bodies: string[], parallel = 1): Promise<void> {
			await runEach(bodies.length, parallel, (index) =>
				post('/push-notification/send', bodies[index], bearer),
			);
		},
		close: () => pool.close(),
	};
}

/** An access token of the sandbox's primary organization. */
export async function tokenOf(sandbox: Sandbox): Promise<string> {
	const client = rawClient(sandbox);
	return client.token().finally(() => client.close());
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
