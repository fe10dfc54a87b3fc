// The test environment of the end-to-end files: Node's, with every HTTP request (fetch) on a fresh
// connection. n8n closes a kept-alive connection after 5 idle seconds; on a loaded machine a request
// can go out on one just as n8n closes it ("fetch failed: other side closed"), and a request with
// effects (a webhook POST) cannot be repeated safely. Loopback connections cost next to nothing.
// Jest loads this file in each worker's own realm, whose dispatcher the tests' fetch uses.
const { TestEnvironment } = require('jest-environment-node');
const { Agent, setGlobalDispatcher } = require('undici');

setGlobalDispatcher(new Agent({ pipelining: 0 }));

module.exports = TestEnvironment;
