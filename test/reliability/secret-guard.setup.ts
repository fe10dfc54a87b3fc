/**
 * Jest setup (setupFilesAfterEnv in jest.config.js): runs the secret guard around every test file.
 * After each test, whatever it (or a beforeAll before it) let through fails that test; after the
 * file, anything left fails the file.
 */
import { describeFindings, errorText, jsonText, scanned, scanText, stopRecordingLogs, takeFindings } from './secret-guard';
import { observeRuns } from '../../devkit/engine';
import type { ObservedRun } from '../../devkit/engine';
import { observePolls } from '../../devkit/poll';

/** The harness's own nodes emit what the test gave them: their items are test data, not output. */
const INPUT_NODE_TYPES = new Set(['test.items', 'test.manualTrigger']);

function scanRun({ run, nodes }: ObservedRun): void {
	scanned.runs++;
	const inputNodes = new Set(nodes.filter((node) => INPUT_NODE_TYPES.has(node.type)).map((node) => node.name));
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
}

const stopObservingRuns = observeRuns(scanRun);
const stopObservingPolls = observePolls((outcome) => {
	scanned.polls++;
	for (const item of outcome.items) scanText('trigger output', jsonText(item));
	if (outcome.error) scanText('trigger error', errorText(outcome.error));
});

afterEach(() => {
	const found = takeFindings();
	if (found.length > 0) throw new Error(describeFindings(found));
});

afterAll(() => {
	stopObservingRuns();
	stopObservingPolls();
	stopRecordingLogs();
	const found = takeFindings();
	if (found.length > 0) throw new Error(describeFindings(found));
});
