#!/usr/bin/env node
// `npm start`: see start.cts. The scripts are TypeScript, compiled on the fly by ts-node (no type check).
// package.json runs this with `exec`, so npm's shell hands its process over to it and a signal npm
// forwards (SIGINT, SIGTERM to npm's pid) reaches this process, not a shell that would ignore it.
require('ts-node').register({
	transpileOnly: true,
	project: require('node:path').join(__dirname, '..', 'tsconfig.json'),
});
require('./start.cts');
