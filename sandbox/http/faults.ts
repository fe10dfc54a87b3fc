import { z } from 'zod';
import { seededRandom } from '../random';
import type { FaultSpec } from '../types';

/** Injected faults (issue 3, "Faults"): each request consumes at most one, the oldest that matches. */
interface ActiveFault {
	spec: FaultSpec;
	/** Hits left; Infinity for a share without `times`. */
	remaining: number;
	draw?: () => number;
}

export const faultSchema = z
	.object({
		endpoint: z.string().min(1),
		kind: z.enum(['status5xx', 'resetBefore', 'resetAfter', 'delay', 'malformedJson', 'rateLimit', 'unauthorized']),
		status: z.number().int().min(500).max(599).optional(),
		afterProcessing: z.boolean().optional(),
		retryAfterSeconds: z.number().int().nonnegative().optional(),
		delayMs: z.number().int().nonnegative().optional(),
		times: z.number().int().positive().optional(),
		share: z.number().min(0).max(1).optional(),
		seed: z.number().int().optional(),
	})
	.strict();

export class FaultBook {
	private faults: ActiveFault[] = [];

	add(spec: FaultSpec): void {
		const checked = faultSchema.safeParse(spec);
		if (!checked.success) {
			const issue = checked.error.issues[0];
			throw new Error(`invalid fault ${issue.path.join('.') || ''}: ${issue.message}`);
		}
		const fault = checked.data as FaultSpec;
		const remaining = fault.times ?? (fault.share === undefined ? 1 : Infinity);
		this.faults.push({ spec: fault, remaining, draw: fault.share === undefined ? undefined : seededRandom(fault.seed ?? 1) });
	}

	/** The fault to apply to this request, if any; consumes one hit. */
	take(endpoint: string): FaultSpec | undefined {
		for (const fault of this.faults) {
			if (fault.remaining <= 0 || (fault.spec.endpoint !== '*' && fault.spec.endpoint !== endpoint)) continue;
			if (fault.draw && fault.draw() >= (fault.spec.share as number)) continue;
			fault.remaining--;
			return fault.spec;
		}
		return undefined;
	}

	/** Faults that still have hits left. */
	pending(): FaultSpec[] {
		return this.faults.filter((fault) => fault.remaining > 0).map((fault) => fault.spec);
	}

	clear(): void {
		this.faults = [];
	}
}
