/**
 * The follow-up report example's trigger as saved (examples/follow-up-report.json), run in manual
 * mode ("Fetch Test Event") through n8n's engine against the sandbox: the latest send is one of the
 * example's own reports, and the event it shows is the send before it, one the example would report.
 */
import type { INode } from 'n8n-workflow';

import { exampleWorkflows } from '../../devkit/n8n/imports.cts';
import { runWorkflow, TRIGGER_TYPE, useTriggerFixtures } from '../harness/index.cts';

const SAVED_TRIGGER_TYPE = 'n8n-nodes-companion-push.companionPushTrigger';

describe('Follow-up report example: Fetch Test Event', () => {
	const triggers = useTriggerFixtures();

	test("shows a send the example reports, not the example's own latest report", async () => {
		const fixture = await triggers.start();
		const onePhone = fixture.user('onePhone');
		const order = await fixture.send([onePhone], { title: 'Order 1042: shipped' });
		const report = await fixture.send([onePhone], { title: 'Delivery report: sent' });
		await fixture.sandbox.clock.advance(10_000); // both settled

		const example = exampleWorkflows().find((entry) => entry.file === 'follow-up-report.json')!;
		const saved = example.workflow.nodes.find((node: INode) => node.type === SAVED_TRIGGER_TYPE);
		const stored = fixture.credentials.get();
		const node: INode = {
			...saved,
			type: TRIGGER_TYPE, // the harness's name for the same node
			credentials: { companionPushApi: { id: stored.id, name: stored.name } },
		};
		const run = await runWorkflow({
			nodes: [node],
			connections: {},
			credentials: fixture.credentials,
			staticData: {},
		});
		const task = run.data.resultData.runData[saved.name]?.[0];
		expect(task?.error ?? run.data.resultData.error).toBeUndefined();
		const items = (task?.data?.main?.[0] ?? []).map((item) => item.json);
		expect(items.map((item) => [item.event, item.notificationId])).toEqual([
			['notificationSettled', order],
		]);
		expect(items.map((item) => item.notificationId)).not.toContain(report);
	});
});
