#!/usr/bin/env node
// `npm start`: see start.cts. The scripts are TypeScript, compiled on the fly by ts-node (no type check).
require('ts-node').register({
	transpileOnly: true,
	project: require('node:path').join(__dirname, '..', 'tsconfig.json'),
});
require('./start.cts');
