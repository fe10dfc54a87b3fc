import { z } from 'zod';
import { seededRandom } from '../random.cts';
import type { FaultKind, FaultSpec } from '../types.cts';

/**
 * Injected faults (the sandbox's fault injection, see README "Faults"): each request takes at most
 * one, the oldest that matches, has hits left and is done skipping.
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
	'listLag',
	'trickle',
	'oversized',
] as const satisfies readonly FaultKind[];

const SEND_ENDPOINT = 'POST /push-notification/send';

/** The statuses a kind may answer with; kinds not listed take no `status`. */
const STATUS_RANGE: Partial<Record<FaultKind, [number, number]>> = {
	status5xx: [500, 599],
	status4xx: [400, 499],
};

export const faultSchema = z
	.object({
		endpoint: z.string().min(1),
		kind: z.enum(FAULT_KINDS),
		status: z.number().int().optional(),
		afterProcessing: z.boolean().optional(),
		retryAfterSeconds: z.number().int().nonnegative().optional(),
		retryAfterAsDate: z.boolean().optional(),
		delayMs: z.number().int().nonnegative().optional(),
		intervalMs: z.number().int().positive().optional(),
		padBytes: z.number().int().nonnegative().optional(),
		sizeBytes: z.number().int().positive().optional(),
		listDelayMs: z.number().int().nonnegative().optional(),
		registerAfterMs: z.number().int().nonnegative().optional(),
		skip: z.number().int().nonnegative().optional(),
		times: z.number().int().positive().optional(),
		share: z.number().min(0).max(1).optional(),
		seed: z.number().int().optional(),
	})
	.strict()
	.superRefine((fault, context) => {
		const refuse = (field: string, message: string) =>
			context.addIssue({ code: z.ZodIssueCode.custom, path: [field], message });
		if (fault.status !== undefined) {
			const range = STATUS_RANGE[fault.kind];
			if (!range)
				refuse('status', `${fault.kind} takes no status (only status5xx and status4xx do)`);
			else if (fault.status < range[0] || fault.status > range[1])
				refuse('status', `${fault.kind} takes a status from ${range[0]} to ${range[1]}`);
		}
		for (const field of ['retryAfterSeconds', 'retryAfterAsDate'] as const) {
			if (fault[field] !== undefined && fault.kind !== 'rateLimit' && fault.kind !== 'status5xx') {
				refuse(field, `${fault.kind} takes no ${field} (only rateLimit and status5xx do)`);
			}
		}
		for (const [field, kind] of [
			['intervalMs', 'trickle'],
			['padBytes', 'trickle'],
			['sizeBytes', 'oversized'],
		] as const) {
			if (fault[field] !== undefined && fault.kind !== kind)
				refuse(field, `only ${kind} takes ${field}`);
		}
		if (fault.kind === 'listLag' && fault.listDelayMs === undefined)
			refuse('listDelayMs', 'listLag needs a listDelayMs');
		if (fault.listDelayMs !== undefined && !processesTheRequest(fault)) {
			refuse(
				'listDelayMs',
				`${fault.kind} registers no send (listLag, resetAfter, delay, malformedJson, trickle, oversized and status5xx with afterProcessing do)`,
			);
		}
		if (
			fault.registerAfterMs !== undefined &&
			fault.kind !== 'resetAfter' &&
			!(fault.kind === 'status5xx' && fault.afterProcessing)
		) {
			refuse(
				'registerAfterMs',
				'only resetAfter and status5xx with afterProcessing: true take a registerAfterMs',
			);
		}
		for (const field of ['listDelayMs', 'registerAfterMs'] as const) {
			if (
				fault[field] !== undefined &&
				fault.endpoint !== SEND_ENDPOINT &&
				fault.endpoint !== '*'
			) {
				refuse(field, `${field} acts on sends only: endpoint must be '${SEND_ENDPOINT}' or '*'`);
			}
		}
	});

/** The request is processed (a send is registered) before the fault strikes, or the fault only alters its answer or listing. */
export function processesTheRequest(fault: Pick<FaultSpec, 'kind' | 'afterProcessing'>): boolean {
	if (fault.kind === 'status5xx') return fault.afterProcessing === true;
	return (
		fault.kind === 'resetAfter' ||
		fault.kind === 'delay' ||
		fault.kind === 'malformedJson' ||
		fault.kind === 'listLag' ||
		fault.kind === 'trickle' ||
		fault.kind === 'oversized'
	);
}

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
			if (fault.remaining <= 0 || (fault.spec.endpoint !== '*' && fault.spec.endpoint !== endpoint))
				continue;
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
