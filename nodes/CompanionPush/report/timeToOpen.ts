import { MINUTE_MS } from '../common/time';

/**
 * How fast people opened: the times to open (ms from a send's dispatch to a person's first open)
 * counted per bucket of minutes, and their median and 90th percentile. Percentiles are by nearest
 * rank (the smallest time that at least that share of the opens took), so each is a time someone
 * actually took.
 */

/** Opens past this many buckets are counted in the last one (`toMinute: null`, "and later"): a
 * bound on the output. */
export const MAX_BUCKETS = 1000;

/** The time at `share` (0-1] of the sorted times by nearest rank, in seconds; null without times. */
function percentileSeconds(sortedMs: Float64Array, share: number): number | null {
	if (sortedMs.length === 0) return null;
	const rank = Math.max(1, Math.ceil(share * sortedMs.length));
	return sortedMs[rank - 1] / 1000;
}

/** The spread of `timesMs` (not negative), in buckets of `bucketMinutes` (a whole number), from the
 * first to the last holding an open. Sorts `timesMs` in place. */
export function timeToOpenSpread(timesMs: Float64Array, bucketMinutes: number) {
	timesMs.sort();
	const bucketMs = bucketMinutes * MINUTE_MS;
	const counts: number[] = [];
	for (const ms of timesMs) {
		const index = Math.min(Math.floor(ms / bucketMs), MAX_BUCKETS - 1);
		while (counts.length <= index) counts.push(0);
		counts[index]++;
	}
	let openedSoFar = 0;
	const opensPerBucket = counts.map((opened, index) => {
		openedSoFar += opened;
		return {
			fromMinute: index * bucketMinutes,
			toMinute: index === MAX_BUCKETS - 1 ? null : (index + 1) * bucketMinutes,
			opened,
			openedSoFar,
		};
	});
	return {
		medianSeconds: percentileSeconds(timesMs, 0.5),
		p90Seconds: percentileSeconds(timesMs, 0.9),
		opensPerBucket,
	};
}
