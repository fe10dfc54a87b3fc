import { z } from 'zod';
import { seededRandom } from '../random';
import type { FaultKind, FaultSpec } from '../types';

/**
 * Injected faults (issue 3, "Faults"): each request takes at most one, the oldest that matches,
 * has hits left and is done skipping.
 */
interface ActiveFault {
	spec: FaultSpec;
	/** Matching requests still to let pass before the fault strikes. */
	toSkip: number;
	/** Hits left; Infinity for a share without `times`. */
	remaining: number;
	draw?: () => number;
}

const FAULT_KINDS = [
	'status5xx',
	'status4xx',
	'forbidden',
	'resetBefore',
	'resetAfter',
	'delay',
	'malformedJson',
	'rateLimit',
	'unauthorized',
] as const satisfies readonly FaultKind[];

/** The statuses a kind may answer with; kinds not listed take no `status`. */
const STATUS_RANGE: Partial<Record<FaultKind, [number, number]>> = { status5xx: [500, 599], status4xx: [400, 499] };

export const faultSchema = z
	.object({
		endpoint: z.string().min(1),
		kind: z.enum(FAULT_KINDS),
		status: z.number().int().optional(),
		afterProcessing: z.boolean().optional(),
		retryAfterSeconds: z.number().int().nonnegative().optional(),
		delayMs: z.number().int().nonnegative().optional(),
		skip: z.number().int().nonnegative().optional(),
		times: z.number().int().positive().optional(),
		share: z.number().min(0).max(1).optional(),
		seed: z.number().int().optional(),
	})
	.strict()
	.superRefine((fault, context) => {
		if (fault.status === undefined) return;
		const range = STATUS_RANGE[fault.kind];
		if (!range) {
			context.addIssue({ code: z.ZodIssueCode.custom, path: ['status'], message: `${fault.kind} takes no status (only status5xx and status4xx do)` });
		} else if (fault.status < range[0] || fault.status > range[1]) {
			context.addIssue({ code: z.ZodIssueCode.custom, path: ['status'], message: `${fault.kind} takes a status from ${range[0]} to ${range[1]}` });
		}
	});

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
		this.faults.push({
			spec: fault,
			toSkip: fault.skip ?? 0,
			remaining,
			draw: fault.share === undefined ? undefined : seededRandom(fault.seed ?? 1),
		});
	}

	/**
	 * The fault to apply to this request, if any; consumes one hit. Every fault still skipping counts
	 * the request as one of its `skip`, whether or not an older fault takes it: `skip: 2` strikes at the
	 * 3rd request to its endpoint after it was added.
	 */
	take(endpoint: string): FaultSpec | undefined {
		let taken: FaultSpec | undefined;
		for (const fault of this.faults) {
			if (fault.remaining <= 0 || (fault.spec.endpoint !== '*' && fault.spec.endpoint !== endpoint)) continue;
			if (fault.toSkip > 0) {
				fault.toSkip--;
				continue;
			}
			if (taken) continue;
			if (fault.draw && fault.draw() >= (fault.spec.share as number)) continue;
			fault.remaining--;
			taken = fault.spec;
		}
		return taken;
	}

	/** Faults that still have hits left (those still skipping included). */
	pending(): FaultSpec[] {
		return this.faults.filter((fault) => fault.remaining > 0).map((fault) => fault.spec);
	}

	clear(): void {
		this.faults = [];
	}
}
