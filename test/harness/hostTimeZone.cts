/**
 * n8n's host time zone, for tests of times written without a zone (read in the host's zone by
 * `Date.parse`). Jest gives each test file a copy of `process.env`, so a TZ set there never reaches
 * Node's clock: the host process's own environment is set, and given back after each test.
 */
import { runInThisContext } from 'node:vm';

const hostProcess = runInThisContext('process') as NodeJS.Process;

/** `set(zone)` makes `zone` (IANA) the host's time zone until the end of the current test. */
export function useHostTimeZone(): { set(zone: string): void } {
	const original = hostProcess.env.TZ;
	afterEach(() => {
		if (original === undefined) delete hostProcess.env.TZ;
		else hostProcess.env.TZ = original;
	});
	return {
		set(zone: string) {
			hostProcess.env.TZ = zone;
		},
	};
}
