/**
 * The sandbox's time. Every timestamp the API shows, token expiry, scheduled dispatch and delivery
 * progress are read from it, so a test with the manual clock never waits in real time.
 * The real clock follows the wall clock and still accepts advance/set (as an offset).
 */
export class SandboxClock {
	private manualNow: number;
	private offsetMs = 0;

	constructor(
		readonly mode: 'real' | 'manual',
		startTime?: string,
	) {
		this.manualNow = startTime === undefined ? Date.now() : parseIso(startTime);
	}

	now(): number {
		return this.mode === 'manual' ? this.manualNow : Date.now() + this.offsetMs;
	}

	/** Moves time forward. Going backwards is refused: sends and tokens are a timeline. */
	advance(ms: number): void {
		if (!Number.isFinite(ms) || ms < 0)
			throw new Error(`clock.advance needs a non-negative number of ms, got ${ms}`);
		if (this.mode === 'manual') this.manualNow += ms;
		else this.offsetMs += ms;
	}

	set(iso: string): void {
		const target = parseIso(iso);
		const now = this.now();
		if (target < now)
			throw new Error(
				`clock.set cannot go backwards (${iso} is before ${new Date(now).toISOString()})`,
			);
		this.advance(target - now);
	}
}

function parseIso(iso: string): number {
	const ms = Date.parse(iso);
	if (Number.isNaN(ms)) throw new Error(`not an ISO date-time: ${iso}`);
	return ms;
}
