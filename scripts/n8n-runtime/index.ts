// The real n8n 2.41.1 for `npm start` and the end-to-end tests, and n8n 1.123.81 for the 1.x e2e tests
// (dev tooling, never shipped):
//   install.ts            Node 24 and n8n, installed once into a cache folder outside the checkout
//                         from this folder's package.json and package-lock.json (v1/ for n8n 1.x)
//   home.ts               a fresh n8n user folder and the environment to run n8n in it
//   community-package.ts  this package packed, and installed as n8n installs a community package
//   run.ts                n8n's CLI and `n8n start` in their own process group; free ports
//   env.ts                the environment a child gets (no npm, jest or n8n settings leaked into it)
export { ensureRuntime, locateRuntime, pinnedVersions, RUNTIME_LINES, type N8nRuntime, type RuntimeLine } from './install';
export { createN8nHome, OWNER_EMAIL, OWNER_PASSWORD } from './home';
export { installPackageTarball, packPackage } from './community-package';
export { executeWorkflow, findFreePort, parseRawOutput, runN8nCli, startN8n, type CliResult, type RunningN8n } from './run';
