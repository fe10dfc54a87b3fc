/** Small measuring tools: sandbox call counts, a memory sampler, medians and spreads. */
import { subscribe } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import type { Sandbox, SandboxSettings } from '../sandbox';


/** API calls the sandbox saw, per endpoint (admin calls are never counted). */
export type Counts = Record<string, number>;

export function totalCalls(counts: Counts): number {
	return Object.values(counts).reduce((sum, value) => sum + value, 0);
}

/** Calls made between two counts() snapshots. */
export function countsSince(before: Counts, after: Counts): Counts {
	const diff: Counts = {};
	for (const [endpoint, value] of Object.entries(after)) {
		const delta = value - (before[endpoint] ?? 0);
		if (delta !== 0) diff[endpoint] = delta;
	}
	return diff;
}

// TCP connections accepted by servers of this process: the in-process sandboxes are the only ones.
let acceptedConnections = 0;
subscribe('net.server.socket', () => acceptedConnections++);

// HTTP requests of the in-process sandboxes between arrival and the end of their answer (an answer
// held by the sandbox's latency included), as a time line: +1 at a request's start, -1 when its
// answer is finished, Date.now() times (the clock n8n's run data uses). Cleared by measured().
const inFlightTimes: number[] = [];
const inFlightSteps: number[] = [];
let inFlightNow = 0;
const inFlightStep = (step: number) => {
	inFlightNow += step;
	inFlightTimes.push(Date.now());
	inFlightSteps.push(step);
};
subscribe('http.server.request.start', () => inFlightStep(1));
subscribe('http.server.response.finish', () => inFlightStep(-1));

/** Forgets the in-flight time line recorded so far (what is in flight now stays counted). */
export function clearInFlight(): void {
	inFlightTimes.length = 0;
	inFlightSteps.length = 0;
	if (inFlightNow !== 0) {
		inFlightTimes.push(Date.now());
		inFlightSteps.push(inFlightNow);
	}
}

/** The most requests the sandboxes had in flight at once since clearInFlight(), within [from, to]
 * (Date.now() ms) when given. */
export function peakInFlight(from = -Infinity, to = Infinity): number {
	let current = 0;
	let peak = 0;
	for (let index = 0; index < inFlightTimes.length; index++) {
		current += inFlightSteps[index];
		if (inFlightTimes[index] >= from && inFlightTimes[index] <= to) peak = Math.max(peak, current);
	}
	return peak;
}

/**
 * Runs `body` on a freshly reset sandbox (then given `settings`, if any: reset() drops what
 * configure() set); hands back its result, its wall time, the process's CPU time meanwhile (user +
 * system; the in-process sandbox's included, alike for every side), the TCP connections the
 * sandbox accepted, the most requests it had in flight at once, and the calls it got.
 */
export async function measured<T>(
	sandbox: Sandbox,
	body: () => Promise<T>,
	settings?: Partial<SandboxSettings>,
): Promise<{ value: T; ms: number; cpuMs: number; connections: number; peakInFlight: number; counts: Counts }> {
	await sandbox.reset();
	if (settings) sandbox.configure(settings);
	collectGarbage();
	clearInFlight();
	const connections = acceptedConnections;
	const cpu = process.cpuUsage();
	const started = performance.now();
	const value = await body();
	const ms = performance.now() - started;
	const used = process.cpuUsage(cpu);
	return {
		value,
		ms,
		cpuMs: (used.user + used.system) / 1000,
		connections: acceptedConnections - connections,
		peakInFlight: peakInFlight(),
		counts: sandbox.counts(),
	};
}

let gc: (() => void) | undefined;
/** A full garbage collection, when V8 lets us have one (so memory baselines are not leftovers). */
export function collectGarbage(): void {
	if (!gc) {
		const exposed = (globalThis as { gc?: () => void }).gc;
		if (exposed) gc = exposed;
		else {
			setFlagsFromString('--expose-gc');
			gc = runInNewContext('gc') as () => void;
		}
	}
	gc();
}

export interface MemoryPeak {
	/** Peak of process.memoryUsage().heapUsed above the baseline taken before the run, in bytes. */
	heapDelta: number;
	/** Peak of the resident set size above the baseline, in bytes. */
	rssDelta: number;
	/** heapUsed above the baseline right after the run, after a forced GC, with its result still
	 * referenced: what stays live (the peak also counts garbage not collected yet). */
	retainedHeapDelta: number;
	samples: number;
}

/** Samples heapUsed and RSS every `everyMs` while `body` runs (it must yield: HTTP I/O does). */
export async function withMemoryPeak<T>(body: () => Promise<T>, everyMs = 5): Promise<{ value: T; memory: MemoryPeak }> {
	collectGarbage();
	const base = process.memoryUsage();
	let peakHeap = base.heapUsed;
	let peakRss = base.rss;
	let samples = 0;
	const sample = () => {
		const now = process.memoryUsage();
		peakHeap = Math.max(peakHeap, now.heapUsed);
		peakRss = Math.max(peakRss, now.rss);
		samples++;
	};
	const timer = setInterval(sample, everyMs);
	try {
		const value = await body();
		sample();
		clearInterval(timer);
		collectGarbage();
		const retainedHeapDelta = process.memoryUsage().heapUsed - base.heapUsed;
		return { value, memory: { heapDelta: peakHeap - base.heapUsed, rssDelta: peakRss - base.rss, retainedHeapDelta, samples } };
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
	if (value === undefined) return 0;
	return held;
}

export function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** "median (min-max)" of a set of figures, with a formatter. */
export function spread(values: number[], format: (value: number) => string): string {
	if (values.length === 1) return format(values[0]);
	return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

export const ms = (value: number) => `${value.toFixed(0)} ms`;
export const ratio = (value: number) => `${value.toFixed(2)}x`;
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
