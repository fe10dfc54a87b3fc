/**
 * Jest setup (setupFilesAfterEnv in jest.config.js): runs the secret guard (../secretGuard.ts) around
 * every test file. It reads every engine run (node outputs, errors, the workflow's static data),
 * every trigger poll (items, error, the trigger's static data), every call to the processed-data
 * store and every credential write. After each test, whatever it (or a beforeAll before it) let
 * through fails that test; after the file, anything left fails the file.
 */
import { observeCredentialWrites } from '../../../devkit/credentialsHelper.cts';
import { observeRuns } from '../../../devkit/engine.cts';
import type { ObservedRun } from '../../../devkit/engine.cts';
import { observePolls } from '../../../devkit/poll.cts';
import { observeProcessedData } from '../../../devkit/processedData.cts';
import {
	describeFindings,
	errorText,
	jsonText,
	scanCredentialWrite,
	scanned,
	scanText,
	stopRecordingLogs,
	takeFindings,
} from '../secretGuard.cts';

/** The harness's own nodes emit what the test gave them: their items are test data, not output. */
const INPUT_NODE_TYPES = new Set(['test.items', 'test.manualTrigger']);

function scanRun({ run, nodes, staticData }: ObservedRun): void {
	scanned.runs++;
	const inputNodes = new Set(
		nodes.filter((node) => INPUT_NODE_TYPES.has(node.type)).map((node) => node.name),
	);
	for (const [name, tasks] of Object.entries(run.data.resultData.runData)) {
		if (inputNodes.has(name)) continue;
		for (const task of tasks) {
			for (const output of task.data?.main ?? []) {
				for (const item of output ?? []) scanText(`node output of ${name}`, jsonText(item.json));
			}
			if (task.error) scanText(`error of ${name}`, errorText(task.error));
		}
	}
	if (run.data.resultData.error) scanText('error of the run', errorText(run.data.resultData.error));
	// n8n saves a workflow's static data with the workflow, in its database.
	scanText('static data of the workflow', jsonText(staticData));
}

const stopObserving = [
	observeRuns(scanRun),
	observePolls((outcome, target) => {
		scanned.polls++;
		for (const item of outcome.items) scanText('trigger output', jsonText(item));
		if (outcome.error) scanText('trigger error', errorText(outcome.error));
		scanText('static data of the trigger', jsonText(target.workflow.staticData));
	}),
	// What the node hands n8n's processed-data store is kept in n8n's database (hashed or not).
	observeProcessedData((call) => {
		scanned.storeCalls++;
		scanText(`processed-data store (${call.kind})`, jsonText(call.items));
	}),
	observeCredentialWrites((stored, data) =>
		scanCredentialWrite(`credential write of ${stored.name}`, data),
	),
];

afterEach(() => {
	const found = takeFindings();
	if (found.length > 0) throw new Error(describeFindings(found));
});

afterAll(() => {
	for (const stop of stopObserving) stop();
	stopRecordingLogs();
	const found = takeFindings();
	if (found.length > 0) throw new Error(describeFindings(found));
});
