/** Small measuring tools: sandbox call counts, a memory sampler, medians and spreads. */
import { subscribe } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import type { Sandbox } from '../sandbox';

export const REFRESH = 'POST /auth/oauth/v2/refresh';
export const USER_LIST = 'GET /user/list';
export const SEND = 'POST /push-notification/send';
export const SEND_LIST = 'GET /push-notification/list';
export const DETAIL = 'GET /push-notification/:id';

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

// TCP connections accepted by servers of this process: the in-process sandbox is the only one.
let acceptedConnections = 0;
subscribe('net.server.socket', () => acceptedConnections++);

/**
 * Runs `body` on a freshly reset sandbox; hands back its result, its wall time, the process's CPU
 * time meanwhile (user + system; the in-process sandbox's included, alike for every side), the
 * TCP connections the sandbox accepted and the calls it made.
 */
export async function measured<T>(
	sandbox: Sandbox,
	body: () => Promise<T>,
): Promise<{ value: T; ms: number; cpuMs: number; connections: number; counts: Counts }> {
	await sandbox.reset();
	collectGarbage();
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
	collectGarbage();
	const base = process.memoryUsage().heapUsed;
	const value = make();
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
