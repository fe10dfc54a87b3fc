import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { sendOperationProperties } from './send/fields';
import { sendItems } from './send/run';

export const description = updateDisplayOptions(
	{ show: { resource: ['notification'], operation: ['send'] } },
	sendOperationProperties(),
);

/**
 * The node's outputs, from its parameters (n8n evaluates this in the editor and the engine, so it
 * must stand alone: no imports, no optional chaining): a second output "Capped" when Send has the
 * option "Cap per Person"; saved workflows without it keep their one output. The first is then
 * named too ("Sends": one item per send, made, skipped or failed): unnamed, the editor calls it
 * "1 Branch".
 */
export const outputsOf = (parameters: INodeParameters) => {
	const options = (parameters.options || {}) as INodeParameters;
	const capped =
		(parameters.resource === undefined || parameters.resource === 'notification') &&
		(parameters.operation === undefined || parameters.operation === 'send') &&
		options.capPerPerson !== undefined;
	return capped
		? [
				{ type: 'main', displayName: 'Sends' },
				{ type: 'main', displayName: 'Capped' },
			]
		: ['main'];
};

/** Sends now (or, with Deliver at Local Time or Quiet Hours, when each time zone is due): one send
 * per item (or one for all items), per time zone when a delivery policy applies, split into batches
 * of at most Batch Size; with Cap per Person, people over the cap leave on the output "Capped". */
export async function executeToOutputs(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const { items, capped } = await sendItems(this);
	return outputsOf(this.getNode().parameters).length > 1 ? [items, capped] : [items];
}
