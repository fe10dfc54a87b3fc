/**
 * The real-n8n cases share this 2-core machine with whatever else runs on it: before they start,
 * wait (checking every minute) until no other n8n run is going, counted as `ps aux | grep -c n8n`
 * counts it (n8n, its task runners, Postgres sessions of its user), this process and its
 * ancestors left out.
 */
import * as fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** More n8n processes than this that are not ours mean another n8n run is going on. */
export const OTHER_N8N_LIMIT = 5;

/** This process and its ancestors (their command lines may name the checkout). */
function ownProcesses(): Set<number> {
	const pids = new Set<number>();
	let pid = process.pid;
	while (pid > 1 && !pids.has(pid)) {
		pids.add(pid);
		try {
			pid = Number(/^PPid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
		} catch {
			break;
		}
	}
	return pids;
}

/** Processes of this machine whose command line names n8n, ours left out. */
export function otherN8nProcesses(ours = ownProcesses()): number {
	let count = 0;
	for (const entry of fs.readdirSync('/proc')) {
		const pid = Number(entry);
		if (!Number.isInteger(pid) || ours.has(pid)) continue;
		try {
			if (/n8n/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) count++;
		} catch {
			// gone meanwhile
		}
	}
	return count;
}

/** Waits until at most OTHER_N8N_LIMIT such processes are left; returns how many were left then. */
export async function waitForQuietMachine(log: (line: string) => void): Promise<number> {
	for (;;) {
		const others = otherN8nProcesses();
		if (others <= OTHER_N8N_LIMIT) return others;
		log(`${others} n8n processes of another run are on this machine: waiting for them to end (checking every minute; --no-wait to start anyway)`);
		await sleep(60_000);
	}
}
