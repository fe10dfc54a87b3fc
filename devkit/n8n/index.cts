// Driving a real n8n: n8n 2.41.1 for `npm start`, the end-to-end tests and the benchmark, and
// n8n 1.123.81 for the 1.x end-to-end tests (dev tooling, never shipped). Everything outside this
// folder imports it from here.
//   runtime/             the pins: package.json and package-lock.json of n8n 2.x and Node 24 (v1/: n8n
//                        1.x and Node 22); the hash of a lockfile names its cache folder, so their
//                        content changes only to change the runtime
//   install.ts           Node and n8n, installed once from those pins into a cache folder outside the checkout
//   platform.ts          which Node runs n8n on this machine (Linux x64/arm64, macOS arm64/x64), and the pins there
//   childEnv.ts          the environment a child gets (no npm, jest or n8n settings leaked into it)
//   run.ts               n8n's CLI and `n8n start` in their own process group; free ports
//   communityPackage.ts  this package built and packed, and installed as n8n installs a community package
//   imports.ts           the Companion Push credential, the example workflows, `n8n import:*`
//   home.ts              a fresh user folder and its environment; N8nHome: the package installed,
//                        imports, runs with `n8n execute` (read from n8n's database or its output)
//   workflow.ts          Manual Trigger workflows of chains of nodes, and the result of a run
//   rest.ts              a client of n8n's REST API (owner login, executions, publish)
//   server.ts            N8nServer: one `n8n start` of an N8nHome running workflows through the REST API
//   postgres.ts          a fresh Postgres 15 for n8n
//   queueMode.ts         n8n in queue mode: Postgres, Redis, main and workers
export {
	ensureRuntime,
	locateRuntime,
	pinnedVersions,
	RUNTIME_LINES,
	type N8nRuntime,
	type RuntimeLine,
} from './install.cts';
export { cleanEnv, withPathFirst } from './childEnv.cts';
export {
	executeWorkflow,
	findFreePort,
	parseRawOutput,
	runN8nCli,
	startN8n,
	type CliResult,
	type RunningN8n,
} from './run.cts';
export { installPackageTarball, packCheckout, packPackage } from './communityPackage.cts';
export {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	credentialEntry,
	exampleWorkflows,
	importCredentials,
	importWorkflows,
	NODE_TYPE,
	TRIGGER_TYPE,
	type CredentialValues,
} from './imports.cts';
export {
	createN8nHome,
	N8nHome,
	OWNER_EMAIL,
	OWNER_PASSWORD,
	type N8nHomeOptions,
} from './home.cts';
export {
	code,
	manualWorkflow,
	RunResult,
	type Json,
	type NodeRun,
	type NodeSpec,
} from './workflow.cts';
export { hasFinished, N8nRestClient, publish, request } from './rest.cts';
export { N8nServer } from './server.cts';
export { checkPostgres, startPostgres, type RunningPostgres } from './postgres.cts';
export {
	ensureRedis,
	startQueueCluster,
	type ExecutionRow,
	type QueueCluster,
	type QueueClusterOptions,
} from './queueMode.cts';
