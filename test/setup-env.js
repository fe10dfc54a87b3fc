// n8n-core writes `$N8N_USER_FOLDER/.n8n/config` on first load: keep it out of the home folder.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

if (!process.env.N8N_USER_FOLDER) {
	process.env.N8N_USER_FOLDER = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-jest-'));
}
process.env.N8N_ENCRYPTION_KEY = process.env.N8N_ENCRYPTION_KEY || 'companion-push-test-encryption-key';
