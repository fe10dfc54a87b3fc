/**
 * CPU time of another process (a real n8n: /proc/<pid>/stat, user + system) and of this one (the
 * in-process sandboxes and links: process.cpuUsage()), sampled every few ms with Date.now() times,
 * so that the CPU a node run used can be read afterwards for its window of n8n's run data.
 * Linux only; another process's figure has the kernel's tick resolution (10 ms at 100 Hz).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;
function clockTicks(): number {
	if (ticksPerSecond === undefined) {
		try {
			ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
		} catch {
			ticksPerSecond = 100;
		}
	}
	return ticksPerSecond;
}

/** User + system CPU time of a process so far (ms), or undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		// After "pid (command) ": state is field 3, utime 14 and stime 15.
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
	} catch {
		return undefined;
	}
}

const ownCpuMs = () => {
	const used = process.cpuUsage();
	return (used.user + used.system) / 1000;
};

interface Sample {
	at: number;
	otherMs: number;
	ownMs: number;
}

export class CpuTimeline {
	private readonly samples: Sample[] = [];
	private timer?: NodeJS.Timeout;

	/** Samples `pid` (and this process) every `everyMs` until stop() or until the process is gone. */
	watch(pid: number, everyMs = 20): void {
		this.stop();
		const sample = () => {
			const otherMs = processCpuMs(pid);
			if (otherMs === undefined) return this.stop();
			this.samples.push({ at: Date.now(), otherMs, ownMs: ownCpuMs() });
		};
		sample();
		this.timer = setInterval(sample, everyMs);
	}

	stop(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}

	/** CPU ms used within [from, to] (Date.now() times): the watched process's and this one's,
	 * interpolated between samples; NaN when the samples do not cover the window. */
	within(from: number, to: number): { otherMs: number; ownMs: number } {
		const at = (time: number, pick: (sample: Sample) => number): number => {
			const after = this.samples.findIndex((sample) => sample.at >= time);
			if (after <= 0) return after === 0 && this.samples[0].at === time ? pick(this.samples[0]) : NaN;
			const [a, b] = [this.samples[after - 1], this.samples[after]];
			return pick(a) + ((pick(b) - pick(a)) * (time - a.at)) / Math.max(1, b.at - a.at);
		};
		return {
			otherMs: at(to, (sample) => sample.otherMs) - at(from, (sample) => sample.otherMs),
			ownMs: at(to, (sample) => sample.ownMs) - at(from, (sample) => sample.ownMs),
		};
	}
}
