/**
 * Jest setup (setupFiles in jest.config.js), before any test file loads n8n-core: n8n-core's user
 * folder and encryption key. The benchmark loads the same file (devkit/env.cts) first.
 */
import '../../../devkit/env.cts';
