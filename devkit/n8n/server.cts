/**
 * A running n8n (`n8n start`) of an N8nHome that runs workflows through n8n's REST API, as the
 * editor's "Execute workflow" does (`POST /rest/workflows/:id/run`, manual mode), and reads each run
 * back from `GET /rest/executions/:id` once it has finished. One `n8n start` (about 11 s) serves a
 * whole file instead of one `n8n execute` process (4 to 7 s each) per run. The run goes through the
 * same engine (WorkflowRunner) and credential pipeline as `n8n execute`, and n8n reads the credential
 * from its database on every use: a token saved by one run is what the next run reads.
 * Credentials are imported with n8n's CLI before the start, workflows through the REST API (n8n 1.x:
 * with the CLI, see start()).
 */
import { waitFor } from '../waitFor.cts';
import type { N8nHome } from './home.cts';
import { hasFinished, N8nRestClient, setUpOwner1x } from './rest.cts';
import type { RunningN8n } from './run.cts';
import { RunResult, type Json } from './workflow.cts';

const MANUAL_TRIGGER = 'n8n-nodes-base.manualTrigger';

export class N8nServer {
	/** Everything n8n printed since it started (a run's share of it becomes that run's output). */
	private printed: string[] = [];

	private constructor(
		readonly home: N8nHome,
		readonly n8n: RunningN8n,
		readonly rest: N8nRestClient,
		/** The owner's session: the cookie and the browser-id header it is bound to (for calls outside /rest). */
		readonly session: { cookie: string; browserId: string },
	) {}

	/**
	 * `n8n start` in the home (its credentials imported before), logged in as the owner, with
	 * `workflows` saved the quickest way the line allows: n8n 2.x through the REST API once it runs
	 * (no CLI process), n8n 1.x (whose REST API does not keep a workflow's id) with the CLI before.
	 */
	static async start(
		home: N8nHome,
		{ workflows = [] }: { workflows?: Json[] } = {},
	): Promise<N8nServer> {
		const viaRest = home.runtime.line !== '1.x';
		if (!viaRest && workflows.length > 0) await home.importWorkflows(workflows);
		const printed: string[] = [];
		const n8n = await home.start({ onOutput: (chunk) => printed.push(chunk) });
		try {
			const session =
				home.runtime.line === '1.x' ? await setUpOwner1x(n8n.url) : { cookie: '', browserId: '' };
			const rest = new N8nRestClient(n8n.url);
			await rest.login();
			const server = new N8nServer(home, n8n, rest, session);
			server.printed = printed;
			if (viaRest) {
				for (const { id, name, nodes, connections, settings, pinData } of workflows) {
					await rest.call('POST', '/workflows', {
						id,
						name,
						nodes,
						connections,
						settings,
						pinData: pinData ?? {},
					});
				}
			}
			return server;
		} catch (error) {
			await n8n.stop();
			throw error;
		}
	}

	get url(): string {
		return this.n8n.url;
	}

	/** Runs the saved workflow from its Manual Trigger and returns the finished run. */
	async execute(workflowId: string, { timeoutMs = 240_000 } = {}): Promise<RunResult> {
		const started = Date.now();
		const printedBefore = this.printed.length;
		const workflow = await this.rest.call('GET', `/workflows/${encodeURIComponent(workflowId)}`);
		const trigger = (workflow.nodes as Json[]).find((node) => node.type === MANUAL_TRIGGER);
		if (!trigger) throw new Error(`Workflow ${workflowId} has no Manual Trigger to run it from.`);
		// n8n 1.x runs the workflow sent with the request (what the editor shows), 2.x the saved one
		// (it drops workflowData): the saved workflow is sent, so both run the same.
		const answer = await this.rest.call(
			'POST',
			`/workflows/${encodeURIComponent(workflowId)}/run`,
			{
				workflowData: workflow,
				triggerToStartFrom: { name: trigger.name },
			},
		);
		const executionId = answer?.executionId;
		if (!executionId)
			throw new Error(
				`POST /rest/workflows/${workflowId}/run started no execution: ${JSON.stringify(answer)}`,
			);

		await waitFor(
			`execution ${executionId} of ${workflowId} to finish`,
			async () => {
				const [listed] = (await this.rest.listExecutions(workflowId)).filter(
					(entry) => String(entry.id) === String(executionId),
				);
				return listed !== undefined && hasFinished(listed) && Boolean(listed.stoppedAt);
			},
			timeoutMs,
			200,
		);
		// n8n 1.x may list an execution as finished a moment before its data is saved (seen on a loaded
		// machine: status success, not even the trigger in its data): read it until the data is there.
		let execution: Json = {};
		await waitFor(
			`the data of execution ${executionId} of ${workflowId}`,
			async () => {
				execution = await this.rest.getExecution(executionId);
				const resultData = execution?.data?.resultData;
				return Boolean(resultData?.error) || Object.keys(resultData?.runData ?? {}).length > 0;
			},
			timeoutMs,
			200,
		);
		const output = `${this.printed.slice(printedBefore).join('')}\n${JSON.stringify(execution)}`;
		return new RunResult(undefined, execution, output, Date.now() - started);
	}

	async stop(): Promise<void> {
		await this.n8n.stop();
	}
}
